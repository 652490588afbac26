// Package watch is `fargatekit watch serve`: a controller that keeps what
// scan reads up to date through informers and the EKS API, analyses it as
// scan does (livereport) whenever it changes, and publishes the findings as
// Prometheus metrics and Events on the workloads.
package watch

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/livereport"
)

// Options configure the controller.
type Options struct {
	Conn     *cluster.Connection
	Analysis livereport.Options
	// EKSInterval is how often the EKS API is read (with up to a tenth
	// more, at random, and longer after a failure).
	EKSInterval time.Duration
	// Coalesce is how long an analysis waits after a change for the
	// changes that come with it.
	Coalesce time.Duration
	// Resync is the longest time between two analyses: findings that
	// depend on time (a pod Terminating too long) appear without a change,
	// and the time of the last analysis says the controller works.
	Resync   time.Duration
	Registry prometheus.Registerer
	// Events records the findings' Events; nil records none.
	Events record.EventRecorder
	// Repair, when set, repairs drift (--repair-drift); nil leaves the
	// cluster as it is.
	Repair *RepairOptions
}

// Minimums of the durations.
const (
	MinEKSInterval = 10 * time.Second
	MinCoalesce    = 100 * time.Millisecond
	MinResync      = 10 * time.Second
)

// controller is the running state of Run.
type controller struct {
	o       Options
	caches  *caches
	metrics *metrics
	events  *findingEvents
	repair  *repairer // nil unless Options.Repair
	// changed is signalled (without blocking) when something changed.
	changed chan struct{}

	mu  sync.Mutex
	eks *cluster.EKSRead // nil until read once
	// eksAt is when the EKS API was last read without error.
	eksAt time.Time
}

// Run runs the controller until ctx ends. ready is called once the caches
// are synced and the first analysis is published.
func Run(ctx context.Context, o Options, ready func()) error {
	c := &controller{o: o, metrics: newMetrics(o.Registry), events: newFindingEvents(o.Events), changed: make(chan struct{}, 1)}
	if o.Repair != nil {
		c.repair = newRepairer(*o.Repair, o.Conn.Client, o.Events, o.Registry, c.signal)
		defer c.repair.wait()
	}
	var err error
	if c.caches, err = newCaches(o.Conn.Client, c.signal); err != nil {
		return err
	}
	c.caches.start(ctx.Done())
	go c.pollEKS(ctx)
	slog.Info("watch: listing the cluster")
	if !cache.WaitForCacheSync(ctx.Done(), c.caches.synced) {
		return nil // stopped before it listed everything
	}
	for r, _ := c.eksRead(); r == nil; r, _ = c.eksRead() { // the first analysis has the profiles, or knows why not
		select {
		case <-ctx.Done():
			return nil
		case <-c.changed:
		}
	}
	if err := c.analyze(ctx); err != nil {
		return err
	}
	slog.Info("watch: first analysis published")
	if ready != nil {
		ready()
	}
	resync := time.NewTicker(max(o.Resync, MinResync))
	defer resync.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-resync.C:
			c.signal()
		case <-c.changed:
		}
		// A change seldom comes alone (a rollout, a node and its pods):
		// those of the next Coalesce are taken in the same analysis.
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(o.Coalesce):
		}
		select {
		case <-c.changed:
		default:
		}
		if err := c.analyze(ctx); err != nil {
			return err
		}
	}
}

// signal says that something changed.
func (c *controller) signal() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

// eksRead is the last read of the EKS API, and when the last one without
// error was made.
func (c *controller) eksRead() (*cluster.EKSRead, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eks, c.eksAt
}

// pollEKS reads the EKS API every EKSInterval, with jitter; after a
// failure (throttling among them) it waits twice as long, up to ten
// intervals. A read that differs from the last is a change.
func (c *controller) pollEKS(ctx context.Context) {
	wait := c.o.EKSInterval
	for {
		r := c.o.Conn.ReadEKS(ctx)
		if ctx.Err() != nil {
			return
		}
		if r.Err != "" {
			c.metrics.eksErrors.Inc()
			slog.Warn("watch: Fargate profiles not read", "err", r.Err)
			wait = min(2*wait, 10*c.o.EKSInterval)
		} else {
			wait = c.o.EKSInterval
		}
		r.Warnings = sameWarnings(r.Warnings)
		c.mu.Lock()
		if c.eks == nil || !slices.Equal(c.eks.Warnings, r.Warnings) { // once, not every read
			for _, w := range r.Warnings {
				slog.Warn("watch: " + w)
			}
		}
		changed := c.eks == nil || !reflect.DeepEqual(*c.eks, r)
		c.eks = &r
		if r.Err == "" {
			c.eksAt = time.Now()
		}
		c.mu.Unlock()
		// With repair, a read that changes nothing still confirms the
		// drifts seen before it (repairer.offer).
		if changed || c.repair != nil {
			c.signal()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait + rand.N(wait/10+1)):
		}
	}
}

// requestID is the part of an AWS error that differs at each call.
var requestID = regexp.MustCompile(`RequestID: [^,]*, `)

// sameWarnings are the warnings of a read of the EKS API without what
// differs at each call, so that the same failure is the same warning.
func sameWarnings(ws []string) []string {
	for i, w := range ws {
		ws[i] = requestID.ReplaceAllString(w, "")
	}
	return ws
}

// analyze analyses the caches' state and publishes the result; with
// repair on, it offers the drifts found for repair.
func (c *controller) analyze(ctx context.Context) error {
	began := time.Now()
	read := c.caches.read(began)
	snap := &read.Snapshot
	eks, eksAt := c.eksRead()
	header := c.o.Conn.Header(snap, *eks)
	rep, err := livereport.Build(snap, read, header, c.o.Analysis)
	if err != nil {
		return err
	}
	c.metrics.publish(rep)
	c.events.publish(rep)
	if c.repair != nil {
		c.repair.offer(ctx, drifts(rep), eksAt)
	}
	c.metrics.duration.Observe(time.Since(began).Seconds())
	slog.Debug("watch: analysis published", "findings", len(rep.Findings), "took", time.Since(began))
	return nil
}
