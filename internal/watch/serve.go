package watch

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
)

// EventSource is the component the controller's Events name.
const EventSource = "fargatekit-watch"

// ServeOptions are those of Serve: the controller's, but its registry and
// recorder, which Serve makes.
type ServeOptions struct {
	Options
	// MetricsAddr serves /metrics, /healthz and /readyz over HTTP.
	MetricsAddr string
	// Ready, when set, is closed once the first analysis is published.
	Ready chan struct{}
	// Profiling serves Go's profiles at /debug/pprof/ on MetricsAddr, as
	// the Kubernetes components' --profiling does.
	Profiling bool
}

// endpoints are the metrics endpoint's: /metrics, /healthz, /readyz once
// ready, and Go's profiles when profiling. /metrics serves reg's and
// client-go's request metrics (rest_client_requests_total), which
// controller-runtime's metrics package registers in its registry as it is
// loaded, as every controller built on it serves them.
func endpoints(reg *prometheus.Registry, ready *atomic.Bool, profiling bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(prometheus.Gatherers{reg, ctrlmetrics.Registry}, promhttp.HandlerOpts{}))
	if profiling {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "the first analysis is not published yet", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}

// Serve runs the controller with its metrics endpoint and Events until ctx
// ends.
func Serve(ctx context.Context, o ServeOptions) error {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o.Registry = reg
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: o.Conn.Client.CoreV1().Events("")})
	o.Events = broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: EventSource})

	ln, err := net.Listen("tcp", o.MetricsAddr)
	if err != nil {
		return fmt.Errorf("the metrics endpoint cannot listen on %s: %w", o.MetricsAddr, err)
	}
	var ready atomic.Bool
	mux := endpoints(reg, &ready, o.Profiling)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
			slog.Error("watch: the metrics endpoint stopped", "err", err)
		}
	}()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	slog.Info("watch serving", "metrics", "http://"+ln.Addr().String()+"/metrics")
	return Run(ctx, o.Options, func() {
		ready.Store(true)
		if o.Ready != nil {
			close(o.Ready)
		}
	})
}
