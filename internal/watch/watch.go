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
	// changed is signalled (without blocking) when something changed.
	changed chan struct{}

	mu  sync.Mutex
	eks *cluster.EKSRead // nil until read once
}

// Run runs the controller until ctx ends. ready is called once the caches
// are synced and the first analysis is published.
func Run(ctx context.Context, o Options, ready func()) error {
	c := &controller{o: o, metrics: newMetrics(o.Registry), events: newFindingEvents(o.Events), changed: make(chan struct{}, 1)}
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
	for c.eksRead() == nil { // the first analysis has the profiles, or knows why not
		select {
		case <-ctx.Done():
			return nil
		case <-c.changed:
		}
	}
	if err := c.analyze(); err != nil {
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
		if err := c.analyze(); err != nil {
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

func (c *controller) eksRead() *cluster.EKSRead {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.eks
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
		c.mu.Unlock()
		if changed {
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

// analyze analyses the caches' state and publishes the result.
func (c *controller) analyze() error {
	began := time.Now()
	read := c.caches.read(began)
	snap := &read.Snapshot
	header := c.o.Conn.Header(snap, *c.eksRead())
	rep, err := livereport.Build(snap, read, header, c.o.Analysis)
	if err != nil {
		return err
	}
	c.metrics.publish(rep)
	c.events.publish(rep)
	c.metrics.duration.Observe(time.Since(began).Seconds())
	slog.Debug("watch: analysis published", "findings", len(rep.Findings), "took", time.Since(began))
	return nil
}
