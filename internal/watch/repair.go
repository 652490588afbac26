package watch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/record"

	"github.com/fargatekit/fargatekit/internal/repair"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// RepairOptions turn on the repair of drift (--repair-drift): the
// controller restarts the workloads whose pods drifted off Fargate, as
// `fix drift --apply` does, with its guards (one workload at a time, never
// one whose pods Fargate would refuse, nor a Recreate Deployment; a rollout
// that fails is undone) and caps of its own.
type RepairOptions struct {
	// After is how long a drift must last before it is repaired: a
	// person, or `fix drift`, may act first, and a drift that a rollout
	// in progress ends is left to it.
	After time.Duration
	// PerHour caps the restarts in the cluster in any hour. A workload is
	// tried at most once an hour: one that drifts again at once has a
	// cause a restart does not remove.
	PerHour int
	// Timeout bounds each workload's rollout and the wait for its pods on
	// Fargate.
	Timeout time.Duration
	// Settings judge what Fargate refuses; nil means the defaults.
	Settings *fargate.Settings
}

// Bounds of RepairOptions.
const (
	MinRepairTimeout = time.Second
	MinRepairPerHour = 1
)

// repairer repairs drift in the background, one workload at a time.
type repairer struct {
	o       RepairOptions
	restart func(context.Context, repair.Drift) (repair.Result, error)
	events  record.EventRecorder
	total   *prometheus.CounterVec
	// done is called when a repair ends (the controller analyses again,
	// and offers the next drift).
	done func()
	now  func() time.Time

	mu sync.Mutex
	// seen is when each drift was first seen, while it lasts.
	seen map[object.Ref]time.Time
	// tried is when each workload was last tried; restarts the cluster's
	// restarts of the last hour.
	tried    map[object.Ref]time.Time
	restarts []time.Time
	busy     bool
	// running is the repair under way, which wait waits for.
	running sync.WaitGroup
}

// Results of a repair, the label result of fargatekit_watch_repairs_total.
const (
	repairRestarted = "restarted" // restarted, its pods on Fargate
	repairFailed    = "failed"    // not repaired: an error (a rollout undone, a refused request)
	repairSkipped   = "skipped"   // not restarted: why is in the Event
)

// Reasons of the repair's Events.
const (
	ReasonRepaired      = "DriftRepaired"
	ReasonRepairFailed  = "DriftRepairFailed"
	ReasonRepairSkipped = "DriftNotRepaired"
)

func newRepairer(o RepairOptions, client kubernetes.Interface, events record.EventRecorder, reg prometheus.Registerer, done func()) *repairer {
	r := &repairer{o: o, events: events, done: done, now: time.Now,
		seen: map[object.Ref]time.Time{}, tried: map[object.Ref]time.Time{}}
	restarter := &repair.Restarter{Client: client, Timeout: o.Timeout, Settings: o.Settings, Progress: slogWriter{}}
	r.restart = func(ctx context.Context, d repair.Drift) (repair.Result, error) {
		return restarter.Run(ctx, []repair.Drift{d})
	}
	r.total = prometheus.NewCounterVec(prometheus.CounterOpts{Name: repairsMetric,
		Help: "Repairs of drift by the controller (--repair-drift), by result: restarted, failed (undone), skipped."}, []string{"result"})
	for _, res := range []string{repairRestarted, repairFailed, repairSkipped} {
		r.total.WithLabelValues(res)
	}
	if reg != nil {
		reg.MustRegister(r.total)
	}
	return r
}

// drifts are the report's drifted workloads (LV001), in its order.
func drifts(rep *report.Report) []repair.Drift {
	if rep.Cluster.Analysis == nil {
		return nil
	}
	return repair.DriftsOf(rep.Cluster.Analysis.Workloads, rep.Findings)
}

// offer takes an analysis' drifts and starts the repair of the first one
// due, unless one runs: seen since After, confirmed by a read of the EKS
// API made after it was first seen (eksAt, that of the analysis), not tried
// in the last hour, and the cluster under PerHour restarts in the last
// hour. It returns the workload whose repair it started, if any.
//
// The confirmation matters: pods sent to EC2 because their profile was
// deleted look drifted to an analysis that still has the profile from the
// read before, and a restart then would only send them to EC2 again.
func (r *repairer) offer(ctx context.Context, ds []repair.Drift, eksAt time.Time) (object.Ref, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	current := map[object.Ref]bool{}
	for _, d := range ds {
		ref := d.Workload.Object.Ref
		current[ref] = true
		if _, ok := r.seen[ref]; !ok {
			r.seen[ref] = now
		}
	}
	for ref := range r.seen {
		if !current[ref] {
			delete(r.seen, ref)
		}
	}
	for len(r.restarts) > 0 && now.Sub(r.restarts[0]) >= time.Hour {
		r.restarts = r.restarts[1:]
	}
	if r.busy || len(r.restarts) >= r.o.PerHour {
		return object.Ref{}, false
	}
	for _, d := range ds {
		ref := d.Workload.Object.Ref
		if now.Sub(r.seen[ref]) < r.o.After || !eksAt.After(r.seen[ref]) {
			continue
		}
		if t, ok := r.tried[ref]; ok && now.Sub(t) < time.Hour {
			continue
		}
		r.tried[ref] = now
		r.busy = true
		r.running.Go(func() { r.run(ctx, d) })
		return ref, true
	}
	return object.Ref{}, false
}

// run repairs one drift and records how it went.
func (r *repairer) run(ctx context.Context, d repair.Drift) {
	ref := d.Workload.Object.Ref
	slog.Info("watch: repairing drift", "workload", ref.String())
	res, err := r.restart(ctx, d)
	result, typ, reason, message := repairRestarted, corev1.EventTypeNormal, ReasonRepaired,
		"restarted by fargatekit watch (--repair-drift): its pods run on Fargate"
	switch {
	case err != nil:
		result, typ, reason, message = repairFailed, corev1.EventTypeWarning, ReasonRepairFailed,
			fmt.Sprintf("fargatekit watch (--repair-drift) could not repair it: %v. Not tried again for an hour; repair it by hand: %s", err, d.Command)
	case len(res.Skipped) > 0:
		result, typ, reason, message = repairSkipped, corev1.EventTypeWarning, ReasonRepairSkipped,
			fmt.Sprintf("fargatekit watch (--repair-drift) leaves it to fargatekit fix drift: %s", res.Skipped[0].Skipped)
	}
	slog.Info("watch: drift repair", "workload", ref.String(), "result", result, "err", err)
	r.total.WithLabelValues(result).Inc()
	if obj, ok := d.Workload.Object.Typed.(runtime.Object); ok && r.events != nil {
		r.events.Event(obj, typ, reason, message)
	}
	r.mu.Lock()
	if result != repairSkipped {
		r.restarts = append(r.restarts, r.now())
	}
	r.busy = false
	r.mu.Unlock()
	if r.done != nil {
		r.done()
	}
}

// wait waits for the repair under way: when the controller stops, a
// restart in progress is undone (ctx ends its wait), and that undo must
// not be cut short.
func (r *repairer) wait() { r.running.Wait() }

// slogWriter logs the restarter's progress at debug level.
type slogWriter struct{}

func (slogWriter) Write(p []byte) (int, error) {
	slog.Debug("watch: repair", "progress", string(p))
	return len(p), nil
}
