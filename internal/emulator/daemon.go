// Package emulator runs EKS on Fargate locally: a real Kubernetes control
// plane (started by kwokctl from binaries built from source), KWOK for
// kubelets, and this package's daemon, which serves the EKS API (and the
// EC2 calls that describe the VPC, and IAM's for the roles), EKS's
// Fargate admission webhook and fargate-scheduler.
package emulator

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/google/renameio/v2/maybe"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/cert"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
	"github.com/fargatekit/fargatekit/internal/emulator/egress"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
	"github.com/fargatekit/fargatekit/internal/emulator/ipam"
	"github.com/fargatekit/fargatekit/internal/emulator/placement"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// DaemonOptions say where the daemon finds the cluster and serves.
type DaemonOptions struct {
	Config *clusterconfig.Config
	// Settings are those of .fargatekit.yaml: what fargate-scheduler refuses,
	// how it picks AZs, the profile quotas of the EKS API.
	Settings fargate.Settings
	// Upgrade is what the EKS API refuses before a version update, where
	// EKS's behaviour is unconfirmed.
	Upgrade eks.UpgradePolicy
	// StateDir keeps the EKS API's profiles and the webhook's certificate.
	StateDir string
	// Kubeconfig is the admin kubeconfig of the control plane.
	Kubeconfig string
	// EKSAddr and WebhookAddr are loopback host:port addresses.
	EKSAddr, WebhookAddr string
	// EgressSocket, if set, is the unix socket of the proxy through which
	// the API server reaches Services (package egress).
	EgressSocket string
	// ServeVersion, if set, makes the control plane serve a Kubernetes
	// version and returns the one it serves (Options.ServeVersion); an
	// update of the EKS API's cluster then completes once it is served.
	ServeVersion func(ctx context.Context, version string) (string, error)
	// Ready, if set, is closed once every part serves.
	Ready chan<- struct{}
}

// clusterInfo is what DescribeCluster tells about the control plane.
type clusterInfo struct {
	rest    *rest.Config
	client  kubernetes.Interface
	created time.Time
}

// FargateKubelets reads the Fargate nodes' kubelet versions.
func (c clusterInfo) FargateKubelets(ctx context.Context) (map[string]string, error) {
	return c.kubelets(ctx, fargate.ComputeTypeLabel+"=fargate")
}

// kubelets reads the kubelet versions of the nodes a label selector selects.
func (c clusterInfo) kubelets(ctx context.Context, selector string) (map[string]string, error) {
	nodes, err := c.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		if v, err := eks.ParseMinor(n.Status.NodeInfo.KubeletVersion); err == nil {
			out[n.Name] = v
		}
	}
	return out, nil
}

// InsightFacts reads every node's kubelet version, and the deprecated APIs
// clients requested from the API server's metrics.
func (c clusterInfo) InsightFacts(ctx context.Context) (eksapi.InsightFacts, error) {
	kubelets, err := c.kubelets(ctx, "")
	if err != nil {
		return eksapi.InsightFacts{}, err
	}
	metrics, err := c.client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return eksapi.InsightFacts{}, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	deprecated, err := deprecatedRequests(metrics)
	if err != nil {
		return eksapi.InsightFacts{}, err
	}
	return eksapi.InsightFacts{Kubelets: kubelets, Deprecated: deprecated}, nil
}

// deprecatedRequests reads apiserver_requested_deprecated_apis from the
// API server's metrics (Prometheus text format): one series per deprecated
// API requested since the API server started.
func deprecatedRequests(metrics []byte) ([]eksapi.DeprecatedRequest, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(metrics))
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	var out []eksapi.DeprecatedRequest
	for _, m := range families["apiserver_requested_deprecated_apis"].GetMetric() {
		if m.GetGauge().GetValue() == 0 {
			continue
		}
		var r eksapi.DeprecatedRequest
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "group":
				r.Group = l.GetValue()
			case "version":
				r.Version = l.GetValue()
			case "resource":
				r.Resource = l.GetValue()
			case "removed_release":
				r.RemovedRelease = l.GetValue()
			}
		}
		out = append(out, r)
	}
	return out, nil
}

func (c clusterInfo) Endpoint() string { return c.rest.Host }

func (c clusterInfo) CertificateAuthority() []byte {
	if len(c.rest.CAData) > 0 {
		return c.rest.CAData
	}
	data, _ := os.ReadFile(c.rest.CAFile)
	return data
}

func (c clusterInfo) CreatedAt() time.Time { return c.created }

// RunDaemon serves until ctx ends.
func RunDaemon(ctx context.Context, o DaemonOptions) error {
	restCfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("reading the kubeconfig %s: %w", o.Kubeconfig, err)
	}
	// client-go's default of 5 requests a second would make placing a pod
	// (five requests or so) take a second.
	restCfg.QPS, restCfg.Burst = 200, 400
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("connecting to the control plane: %w", err)
	}
	opts := []eksapi.Option{
		eksapi.WithLimits(eksapi.Limits{TagsPerProfile: eksapi.DefaultLimits.TagsPerProfile, Limits: o.Settings.Limits}),
		eksapi.WithUpgradePolicy(o.Upgrade),
	}
	if o.ServeVersion != nil {
		opts = append(opts, eksapi.WithServedVersion())
	}
	// CreateFargateProfile checks the pod execution role's trust policy in
	// the emulator's IAM.
	iam := iamapi.NewServer(o.Config, nil)
	opts = append(opts, eksapi.WithRoles(iam))
	store, err := eksapi.NewStore(o.Config, eksStateDir(o.StateDir), opts...)
	if err != nil {
		return err
	}
	created := time.Now()
	if info, err := os.Stat(eksStateDir(o.StateDir)); err == nil {
		created = info.ModTime()
	}
	api := eksapi.NewServer(o.Config, store, clusterInfo{rest: restCfg, client: client, created: created})

	eksLn, err := listen(o.EKSAddr, "the EKS API")
	if err != nil {
		return err
	}
	// The listeners are closed on every return; closing one a server has
	// already closed does nothing.
	defer func() { _ = eksLn.Close() }()
	hookLn, err := listen(o.WebhookAddr, "the Fargate webhook")
	if err != nil {
		return err
	}
	defer func() { _ = hookLn.Close() }()
	certPEM, keyPEM, err := webhookCertificate(o.StateDir)
	if err != nil {
		return err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("loading the webhook certificate: %w", err)
	}
	// Each Fargate pod takes an address of its subnet, which
	// fargate-scheduler gives and EC2's DescribeSubnets counts.
	addresses, err := ipam.New(o.Config.SubnetCIDRs())
	if err != nil {
		return fmt.Errorf("the VPC's subnets: %w", err)
	}
	hook := &placement.Webhook{Profiles: store.Active, Logging: func(ctx context.Context) (fargate.Logging, error) {
		return placement.ReadLogging(ctx, client, o.Settings)
	}}
	mux := http.NewServeMux()
	var reviews atomic.Int64 // the admission reviews the webhook got
	mux.Handle(placement.WebhookPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reviews.Add(1)
		hook.ServeHTTP(w, r)
	}))
	ec2, err := ec2api.NewServer(o.Config, o.StateDir, nil)
	if err != nil {
		return err
	}
	ec2.FreeAddresses = addresses.Free
	awsAPI := awsEndpoint(api, ec2, iam)
	servers := []*http.Server{
		{Handler: awsAPI, ReadHeaderTimeout: 10 * time.Second},
		{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}},
	}
	// Every loop runs in the group: the first to fail cancels the others,
	// and RunDaemon returns once all of them have, on an early return too.
	stop, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(stop)
	defer func() {
		cancel()
		_ = g.Wait()
	}()
	g.Go(func() error {
		<-gctx.Done()
		for _, s := range servers {
			_ = s.Close()
		}
		return nil
	})
	g.Go(func() error { return servers[1].ServeTLS(hookLn, "", "") })
	if o.EgressSocket != "" {
		proxy, err := clusterNetwork(gctx, client, o.EgressSocket)
		if err != nil {
			return err
		}
		defer func() { _ = proxy.Close() }()
	}

	url := "https://" + hookLn.Addr().String() + placement.WebhookPath
	if err := admission.Register(gctx, client, placement.Configuration(url, certPEM)); err != nil {
		return fmt.Errorf("registering the Fargate webhook: %w", err)
	}
	webhookCalled(gctx, client, &reviews)
	seed := uint64(o.Config.Seed)
	if seed == 0 {
		seed = rand.Uint64()
	}
	// The AZ outages in force, read before anything is placed; the Leases
	// are looked at once at least, for an outage cleared while the daemon
	// was down.
	faults := &outages{stateDir: o.StateDir, client: client, holding: true}
	if _, err := faults.read(); err != nil {
		return err
	}
	sched := &placement.Scheduler{
		Client: client, Config: o.Config, Settings: o.Settings, Profiles: store.Active, Version: store.KubernetesVersion, DNSHostnames: ec2.DNSHostnames,
		Foundation: o.Config.Foundation(), Addresses: addresses, Down: faults.Down,
		Rand: rand.New(rand.NewPCG(seed, seed)),
	}
	faults.up = sched.RetryZone
	// The addresses of the Fargate nodes that run are taken before EC2
	// counts them.
	if err := sched.Start(gctx); err != nil {
		return err
	}
	// The AWS endpoint answers last: `up` waits for it, and a pod created
	// after that goes through the webhook.
	g.Go(func() error { return servers[0].Serve(eksLn) })
	// Deleting a profile stops its pods, as EKS does.
	store.OnChange(func(name, from, to string) {
		if to != fargate.StatusDeleting {
			return
		}
		if err := placement.StopProfilePods(context.WithoutCancel(gctx), client, name); err != nil {
			slog.Warn("stopping the pods of a deleted profile", "profile", name, "err", err)
		}
	})
	g.Go(func() error { return api.Run(gctx) })
	if o.ServeVersion != nil {
		g.Go(func() error { serveVersions(gctx, store, o.ServeVersion); return nil })
	}
	nodegroups, err := newNodegroupController(gctx, client, store, o.Config, faults.Down)
	if err != nil {
		return err
	}
	g.Go(func() error { return nodegroups.Run(gctx) })
	g.Go(func() error { return faults.Run(gctx) })
	patch := &patcher{stateDir: o.StateDir, client: client, zones: o.Config.AvailabilityZones, now: time.Now}
	g.Go(func() error { return patch.Run(gctx) })
	g.Go(func() error { return sched.Run(gctx) })
	slog.Info("emulator daemon serving", "eks", eksLn.Addr().String(), "webhook", url)
	if o.Ready != nil {
		close(o.Ready)
	}
	return daemonExit(ctx, g.Wait())
}

// daemonExit is what RunDaemon returns once its loops have: nil when ctx
// was cancelled (the daemon was told to stop) or a server was closed, else
// the error of the loop that failed first.
func daemonExit(ctx context.Context, err error) error {
	if ctx.Err() != nil || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// serveVersions keeps the control plane serving the EKS API's version
// (versionKeeper) until ctx is done.
func serveVersions(ctx context.Context, store *eksapi.Store, serve func(context.Context, string) (string, error)) {
	k := &versionKeeper{store: store, serve: serve}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(k.step(ctx)):
		}
	}
}

// versionKeeper makes the control plane serve the EKS API's version: the
// target of an update in progress, else the cluster's. It tells the store
// once the control plane serves it, which completes an update; an update
// whose version the control plane failed to serve three times fails.
type versionKeeper struct {
	store    *eksapi.Store
	serve    func(context.Context, string) (string, error)
	ensured  string // the version the control plane serves
	failures int    // failures in a row
}

// maxServeFailures is how many failures in a row fail an update.
const maxServeFailures = 3

// step does one pass and returns when to do the next.
func (k *versionKeeper) step(ctx context.Context) time.Duration {
	c := k.store.Cluster()
	want := c.Version
	if c.Status == eksapi.ClusterUpdating {
		want = c.Target
	}
	if want == k.ensured {
		return time.Second
	}
	served, err := k.serve(ctx, want)
	if err == nil {
		slog.Info("the control plane serves the cluster's version", "version", want, "emulated", served)
		k.ensured, k.failures = want, 0
		k.store.Serving(want)
		return time.Second
	}
	k.failures, k.ensured = k.failures+1, "" // what it serves now is not known
	slog.Error("the control plane cannot serve the cluster's version", "version", want, "failures", k.failures, "err", err)
	if k.failures >= maxServeFailures && c.Status == eksapi.ClusterUpdating {
		k.failures = 0
		if ferr := k.store.FailClusterUpdate(eksapi.ErrorDetail{ErrorCode: "Unknown", ResourceIDs: []string{},
			ErrorMessage: fmt.Sprintf("The emulator's control plane could not serve Kubernetes %s: %v", want, err)}); ferr != nil {
			slog.Error("failing the cluster update", "err", ferr)
		}
		return 0 // back to the version before, at once
	}
	return 10 * time.Second
}

// clusterNetwork serves the API server's CONNECT proxy to Services on socket.
func clusterNetwork(ctx context.Context, client kubernetes.Interface, socket string) (*http.Server, error) {
	factory := informers.NewSharedInformerFactory(client, 0)
	services := factory.Core().V1().Services().Lister()
	endpoints := factory.Discovery().V1().EndpointSlices().Lister()
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("the cluster network proxy could not list %v", typ)
		}
	}
	_ = os.Remove(socket) // left by a daemon that was killed
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return nil, fmt.Errorf("the cluster network proxy cannot listen on %s: %w", socket, err)
	}
	proxy := &egress.Proxy{Services: func() []*corev1.Service {
		all, _ := services.List(labels.Everything())
		return all
	}, Endpoints: func() []*discoveryv1.EndpointSlice {
		all, _ := endpoints.List(labels.Everything())
		return all
	}}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return srv, nil
}

// listen opens a loopback address, saying which part could not when it is taken.
func listen(addr, what string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s cannot listen on %s (is the port in use? choose another in the emulator's flags): %w", what, addr, err)
	}
	return ln, nil
}

// webhookCertificate returns the webhook's self-signed serving certificate,
// made once and kept in the state directory so that the webhook
// configuration's caBundle stays valid across restarts. Each file is
// written whole or not at all; a pair that does not load (a crash between
// the two writes, a file damaged since) is made anew, and the daemon
// registers the webhook with it.
func webhookCertificate(dir string) (certPEM, keyPEM []byte, err error) {
	certPath, keyPath := filepath.Join(dir, "webhook.crt"), filepath.Join(dir, "webhook.key")
	certPEM, err1 := os.ReadFile(certPath)
	keyPEM, err2 := os.ReadFile(keyPath)
	if err1 == nil && err2 == nil {
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err == nil {
			return certPEM, keyPEM, nil
		}
	}
	certPEM, keyPEM, err = cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("making the webhook certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("making the state directory: %w", err)
	}
	if err := maybe.WriteFile(keyPath, keyPEM, 0o600); err != nil {
		return nil, nil, fmt.Errorf("saving the webhook key: %w", err)
	}
	if err := maybe.WriteFile(certPath, certPEM, 0o600); err != nil {
		return nil, nil, fmt.Errorf("saving the webhook certificate: %w", err)
	}
	return certPEM, keyPEM, nil
}

// webhookCalled waits, a minute at most, until the API server calls the
// Fargate webhook on pod creation: it takes a new webhook configuration up
// a moment after it is written, and a pod created before, which the
// webhook's Ignore policy lets through, would never go to Fargate. It
// creates a pod in dry-run until reviews grows.
func webhookCalled(ctx context.Context, client kubernetes.Interface, reviews *atomic.Int64) {
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "fargatekit-webhook-probe", Namespace: metav1.NamespaceDefault},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		before := reviews.Load()
		_, err := client.CoreV1().Pods(probe.Namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if reviews.Load() > before {
			return
		}
		slog.Debug("the Fargate webhook is not called yet", "err", err)
		time.Sleep(200 * time.Millisecond)
	}
	slog.Warn("the API server did not call the Fargate webhook within a minute: pods created now may not go to Fargate")
}
