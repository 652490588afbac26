package spreadserver

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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/internal/cluster"
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
	// Method is how a pod is sent to its AZ.
	Method spread.Method
	// AZs, if set, gives each per-AZ profile's AZ (the --zones file), in
	// place of EC2's answer; for ByProfile only.
	AZs map[string]string
	// WebhookAddr serves the webhook over TLS with the certificate of
	// Certificates, or else of CertFile and KeyFile.
	WebhookAddr, CertFile, KeyFile string
	Certificates                   *Certificates
	// MetricsAddr serves /metrics, /healthz and /readyz over HTTP.
	MetricsAddr string
	// Refresh is how often the per-AZ profiles are read again.
	Refresh time.Duration
	// Rebalance runs the rebalancer, every EvictionInterval at most one
	// eviction, when this replica holds the lease in Namespace, the one spread runs in.
	Rebalance        bool
	DryRun           bool
	EvictionInterval time.Duration
	// WorkloadEvictionsPerHour and EvictionsPerMinute cap the rebalancer's
	// evictions (see Rebalancer); 0 means the default.
	WorkloadEvictionsPerHour, EvictionsPerMinute int
	// UnavailableAfter and ZoneRetry say when an AZ is found unavailable
	// and when it is tried again (spread.Availability); 0 means the
	// default. ExcludeZones are left out for good.
	UnavailableAfter, ZoneRetry time.Duration
	ExcludeZones                []string
	Namespace                   string
	Identity                    string
	// Ready, if set, is closed once the webhook serves.
	Ready chan<- struct{}
}

// drainTimeout bounds how long spread, stopping, answers the requests it
// has: less than the chart's terminationGracePeriodSeconds less its preStop
// pause.
const drainTimeout = 10 * time.Second

// Discover reads what spread may choose among: the cluster's profiles
// from EKS and, from EC2, the AZs of the subnets of those with one subnet
// (ByProfile, unless azOf gives them) or of all (ByNodeSelector).
func Discover(ctx context.Context, aws *cluster.EKS, method spread.Method, azOf map[string]string) (spread.Zones, error) {
	profiles, err := aws.Profiles(ctx)
	if err != nil {
		return spread.Zones{}, err
	}
	if method == spread.ByNodeSelector {
		var subnets []string
		for _, p := range profiles {
			subnets = append(subnets, p.Subnets...)
		}
		azs, err := aws.SubnetZones(ctx, subnets)
		if err != nil {
			return spread.Zones{}, err
		}
		return spread.NewZoneSelectors(profiles, azs), nil
	}
	if azOf != nil {
		z, err := spread.Assigned(profiles, azOf)
		if err != nil {
			return z, fmt.Errorf("the --zones file: %w", err)
		}
		return z, nil
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
	if o.Rebalance && o.EvictionInterval <= 0 {
		// time.NewTicker panics on it.
		return fmt.Errorf("the eviction interval must be positive, not %s", o.EvictionInterval)
	}
	var serving atomic.Pointer[tls.Certificate]
	pair, err := o.certificate(ctx)
	// Helm may create the webhook configuration after this pod starts.
	for wait := time.Now().Add(time.Minute); apierrors.IsNotFound(err) && time.Now().Before(wait); {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
		pair, err = o.certificate(ctx)
	}
	if err != nil {
		return err
	}
	serving.Store(pair)
	zones, err := Discover(ctx, o.AWS, o.Method, o.AZs)
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
	for _, c := range []struct {
		informer  cache.SharedIndexInformer
		transform cache.TransformFunc
	}{{nodeInformer, StripNode}, {nsInformer, StripNamespace}} {
		if err := c.informer.SetTransform(c.transform); err != nil {
			return fmt.Errorf("setting up the node and namespace caches: %w", err)
		}
	}
	var synced atomic.Bool
	placer := NewPlacer(podInformer.GetIndexer(), nodeInformer.GetIndexer(), m)
	placer.Synced = synced.Load
	if _, err := podInformer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: placer.Seen, UpdateFunc: func(_, pod any) { placer.Seen(pod) },
	}); err != nil {
		return fmt.Errorf("setting up the pod cache: %w", err)
	}
	placer.SetZones(zones)
	placer.SetAvailability(o.UnavailableAfter, o.ZoneRetry, o.ExcludeZones)
	m.profiles.Set(float64(zones.Len()))
	m.refreshed.SetToCurrentTime()
	slog.Info("spread: Fargate profiles to choose AZs with", "count", zones.Len(), "method", zones.Method())

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
		{Handler: hook, ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{MinVersion: tls.VersionTLS12,
			GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return serving.Load(), nil }}},
		{Handler: ops, ReadHeaderTimeout: 10 * time.Second},
	}
	errs := make(chan error, 2)
	go func() { errs <- servers[0].ServeTLS(webhookLn, "", "") }()
	go func() { errs <- servers[1].Serve(metricsLn) }()
	defer func() {
		// In-flight admissions are answered before the webhook goes (the
		// API server would otherwise wait out their timeout); a request
		// still open after drainTimeout is cut.
		drain, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
		defer cancel()
		for _, s := range servers {
			if s.Shutdown(drain) != nil {
				_ = s.Close()
			}
		}
	}()
	go refresh(ctx, o, placer, m, &serving)
	// Every replica keeps what it knows of the AZs' availability, for its
	// webhook: the rebalancer's replica at each pass (it records the events
	// and replaces the pods), the others here.
	var rebalancing atomic.Bool
	go every(ctx, observeInterval, &synced, func() {
		if !rebalancing.Load() {
			placer.Observe()
		}
	})
	var leading sync.WaitGroup
	defer leading.Wait() // the lease is released before Serve returns
	if o.Rebalance {
		r := &Rebalancer{Client: o.Client, Placer: placer, Namespaces: nsInformer.GetIndexer(), DryRun: o.DryRun, Metrics: m,
			WorkloadEvictionsPerHour: o.WorkloadEvictionsPerHour, EvictionsPerMinute: o.EvictionsPerMinute}
		leading.Go(func() {
			lead(ctx, o, func(ctx context.Context) {
				rebalancing.Store(true)
				defer rebalancing.Store(false)
				every(ctx, o.EvictionInterval, &synced, func() { r.Pass(ctx) })
			})
		})
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

// observeInterval is how often every replica updates what it knows of the
// AZs' availability from its pod cache.
const observeInterval = 5 * time.Second

// every calls f every interval once the pod cache has synced, until ctx
// ends.
func every(ctx context.Context, interval time.Duration, synced *atomic.Bool, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if synced.Load() {
				f()
			}
		}
	}
}

// certificate reads the serving certificate: from the cluster's Secret,
// made there if need be, or from the files.
func (o Options) certificate(ctx context.Context) (*tls.Certificate, error) {
	if o.Certificates != nil {
		return o.Certificates.Ensure(ctx)
	}
	pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--tls-cert-file %s, --tls-key-file %s: %w", o.CertFile, o.KeyFile, err)
	}
	return &pair, nil
}

// refresh reads, every o.Refresh, the per-AZ profiles and the serving
// certificate (renewed, or rotated by cert-manager); a failed read keeps
// the last known ones and says so in a log line (and for the profiles a
// metric).
func refresh(ctx context.Context, o Options, p *Placer, m *Metrics, serving *atomic.Pointer[tls.Certificate]) {
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
		if pair, err := o.certificate(ctx); err != nil {
			slog.Warn("spread keeps its serving certificate", "err", err)
		} else {
			serving.Store(pair)
		}
		zones, err := Discover(ctx, o.AWS, o.Method, o.AZs)
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
		LeaseMeta:  metav1.ObjectMeta{Name: LeaseName, Namespace: o.Namespace},
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
