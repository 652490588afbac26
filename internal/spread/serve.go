package spread

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// Names of what spread registers.
const (
	// WebhookConfigurationName sorts before EKS's Fargate webhook
	// (0500-amazon-eks-fargate-mutation.amazonaws.com): the API server calls
	// mutating webhooks in the order of their configurations' names, so the
	// profile label spread sets is there when EKS's webhook reads it.
	WebhookConfigurationName = "0100-spread.fargatekit.io"
	// WebhookPath is where the webhook is served.
	WebhookPath = "/mutate"
	// LeaseName is the leader election lease of the rebalancer.
	LeaseName = "fargatekit-spread"
)

// Options configure Serve.
type Options struct {
	Client kubernetes.Interface
	// AWS reads the profiles (EKS) and their subnets' AZs (EC2).
	AWS *cluster.EKS
	// WebhookAddr serves the webhook over TLS with CertFile and KeyFile.
	WebhookAddr, CertFile, KeyFile string
	// MetricsAddr serves /metrics, /healthz and /readyz over HTTP.
	MetricsAddr string
	// Refresh is how often the per-AZ profiles are read again.
	Refresh time.Duration
	// Rebalance runs the rebalancer, every EvictionInterval at most one
	// eviction, when this replica holds the lease in LeaseNamespace.
	Rebalance        bool
	DryRun           bool
	EvictionInterval time.Duration
	LeaseNamespace   string
	Identity         string
	// Ready, if set, is closed once the webhook serves.
	Ready chan<- struct{}
}

// Discover reads the per-AZ profiles: the cluster's profiles from EKS, and
// the AZs of the subnets of those with one subnet from EC2.
func Discover(ctx context.Context, aws *cluster.EKS) (spread.Zones, error) {
	profiles, err := aws.Profiles(ctx)
	if err != nil {
		return spread.Zones{}, err
	}
	azs, err := aws.SubnetZones(ctx, spread.Subnets(profiles))
	if err != nil {
		return spread.Zones{}, err
	}
	return spread.NewZones(profiles, azs), nil
}

// Serve runs the webhook, the metrics endpoint, the refresh of the per-AZ
// profiles and, when enabled, the rebalancer, until ctx ends. What it
// cannot start with (a certificate, the first read of the profiles, a
// port) is an error before anything serves.
func Serve(ctx context.Context, o Options) error {
	pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return fmt.Errorf("--tls-cert-file %s, --tls-key-file %s: %w", o.CertFile, o.KeyFile, err)
	}
	zones, err := Discover(ctx, o.AWS)
	if err != nil {
		return fmt.Errorf("reading the per-AZ Fargate profiles: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := NewMetrics(reg)

	factory := informers.NewSharedInformerFactory(o.Client, 0)
	podInformer := factory.Core().V1().Pods().Informer()
	if err := podInformer.SetTransform(StripPod); err != nil {
		return fmt.Errorf("setting up the pod cache: %w", err)
	}
	if err := podInformer.AddIndexers(Indexers); err != nil {
		return fmt.Errorf("setting up the pod cache: %w", err)
	}
	nodeInformer := factory.Core().V1().Nodes().Informer()
	nsInformer := factory.Core().V1().Namespaces().Informer()
	var synced atomic.Bool
	placer := NewPlacer(podInformer.GetIndexer(), nodeInformer.GetIndexer(), m)
	placer.Synced = synced.Load
	placer.SetZones(zones)
	m.profiles.Set(float64(zones.Len()))
	m.refreshed.SetToCurrentTime()
	slog.Info("spread: per-AZ Fargate profiles", "count", zones.Len())

	webhookLn, err := net.Listen("tcp", o.WebhookAddr)
	if err != nil {
		return fmt.Errorf("the webhook cannot listen on %s: %w", o.WebhookAddr, err)
	}
	metricsLn, err := net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		_ = webhookLn.Close()
		return fmt.Errorf("the metrics endpoint cannot listen on %s: %w", o.MetricsAddr, err)
	}
	factory.Start(ctx.Done())
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), podInformer.HasSynced, nodeInformer.HasSynced, nsInformer.HasSynced) {
			synced.Store(true)
		}
	}()

	hook := http.NewServeMux()
	hook.Handle(WebhookPath, admission.Handler(placer.Mutate, func(err error) {
		m.admissions.WithLabelValues("error").Inc()
		slog.Warn("spread webhook admitted a pod unchanged", "err", err)
	}))
	ops := http.NewServeMux()
	ops.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ops.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	ops.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !synced.Load() {
			http.Error(w, "the pod cache is not synced yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	servers := []*http.Server{
		{Handler: hook, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}},
		{Handler: ops, ReadHeaderTimeout: 10 * time.Second},
	}
	errs := make(chan error, 2)
	go func() { errs <- servers[0].ServeTLS(webhookLn, "", "") }()
	go func() { errs <- servers[1].Serve(metricsLn) }()
	defer func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}()
	go refresh(ctx, o, placer, m)
	var leading sync.WaitGroup
	defer leading.Wait() // the lease is released before Serve returns
	if o.Rebalance {
		r := &Rebalancer{Client: o.Client, Placer: placer, Namespaces: nsInformer.GetIndexer(), DryRun: o.DryRun, Metrics: m}
		leading.Go(func() { lead(ctx, o, func(ctx context.Context) { rebalance(ctx, r, o.EvictionInterval, &synced) }) })
	}
	slog.Info("spread serving", "webhook", webhookLn.Addr().String(), "metrics", metricsLn.Addr().String(), "rebalance", o.Rebalance, "dryRun", o.DryRun)
	if o.Ready != nil {
		close(o.Ready)
	}
	select {
	case <-ctx.Done():
		return nil
	case err := <-errs:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

// refresh reads the per-AZ profiles every o.Refresh; a failed read keeps
// the last known ones and says so in a log line and a metric.
func refresh(ctx context.Context, o Options, p *Placer, m *Metrics) {
	if o.Refresh <= 0 {
		return
	}
	t := time.NewTicker(o.Refresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		zones, err := Discover(ctx, o.AWS)
		if err != nil {
			m.refreshErrors.Inc()
			slog.Warn("spread keeps the last known per-AZ profiles", "err", err)
			continue
		}
		p.SetZones(zones)
		m.profiles.Set(float64(zones.Len()))
		m.refreshed.SetToCurrentTime()
	}
}

// rebalance runs a pass every interval once the pod cache is synced.
func rebalance(ctx context.Context, r *Rebalancer, interval time.Duration, synced *atomic.Bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if synced.Load() {
				r.Pass(ctx)
			}
		}
	}
}

// lead runs f while this replica holds the rebalancer's lease, so that two
// replicas never evict at once. A term's f ends (its context is cancelled
// when the lease is lost) before the next campaign starts.
func lead(ctx context.Context, o Options, f func(context.Context)) {
	id := o.Identity
	if id == "" {
		host, _ := os.Hostname()
		id = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: o.LeaseNamespace},
		Client:     o.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	for ctx.Err() == nil {
		started, done := make(chan struct{}), make(chan struct{})
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: lock, ReleaseOnCancel: true,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(ctx context.Context) {
					close(started)
					defer close(done)
					f(ctx)
				},
				OnStoppedLeading: func() { slog.Info("spread rebalancer stopped leading", "identity", id) },
			},
		})
		select {
		case <-started:
			<-done
		default:
		}
	}
}

// WebhookConfiguration is the MutatingWebhookConfiguration of spread with
// the given client configuration (a URL, or a Service in a cluster). Two
// webhooks, so that the API server sends only opted-in pods: those of a
// namespace labelled spread.fargatekit.io/enabled=true, and pods labelled
// so in other namespaces. It never blocks a pod: failurePolicy Ignore, a
// 2-second timeout.
func WebhookConfiguration(client admissionregistrationv1.WebhookClientConfig) *admissionregistrationv1.MutatingWebhookConfiguration {
	ignore := admissionregistrationv1.Ignore
	none := admissionregistrationv1.SideEffectClassNone
	never := admissionregistrationv1.NeverReinvocationPolicy
	timeout := int32(2)
	enabled := metav1.LabelSelectorRequirement{Key: spread.EnabledLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{"true"}}
	notEnabled := enabled
	notEnabled.Operator = metav1.LabelSelectorOpNotIn
	// A pod that chose its profile itself is never sent.
	unchosen := metav1.LabelSelectorRequirement{Key: fargate.ProfileLabel, Operator: metav1.LabelSelectorOpDoesNotExist}
	hook := func(name string, ns, obj []metav1.LabelSelectorRequirement) admissionregistrationv1.MutatingWebhook {
		return admissionregistrationv1.MutatingWebhook{
			Name:         name,
			ClientConfig: client,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchExpressions: ns},
			ObjectSelector:          &metav1.LabelSelector{MatchExpressions: obj},
			FailurePolicy:           &ignore,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      &never,
			TimeoutSeconds:          &timeout,
		}
	}
	return &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigurationName, Labels: map[string]string{"app.kubernetes.io/name": "fargatekit-spread"}},
		Webhooks: []admissionregistrationv1.MutatingWebhook{
			hook("namespace.spread.fargatekit.io", []metav1.LabelSelectorRequirement{enabled}, []metav1.LabelSelectorRequirement{unchosen}),
			hook("pod.spread.fargatekit.io", []metav1.LabelSelectorRequirement{notEnabled}, []metav1.LabelSelectorRequirement{enabled, unchosen}),
		},
	}
}
