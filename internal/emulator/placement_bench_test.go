package emulator_test

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/internal/emulator"
)

// burst is how many replicas BenchmarkFargatePods's Deployment has.
var burst = flag.Int("placement.pods", 1000, "replicas of BenchmarkFargatePods's Deployment")

// BenchmarkFargatePods times one Deployment of -placement.pods replicas
// (1,000) on Fargate, on the emulator of examples/emulator/scale: from its
// creation until every pod is Running. It reports the pods Running per
// second and, per pod, the time from its creation (as a watch sees it) to
// Running: p50 and p99. docs/benchmarks.md quotes it; with -benchtime 1x
// it runs one Deployment.
func BenchmarkFargatePods(b *testing.B) {
	c := start(b, "scale")
	c.namespace("apps")
	var rates, p50s, p99s []float64
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("burst%d", i)
		w := watchPods(b, c, "apps", name)
		began := time.Now()
		c.deploy(deployment("apps", name, int32(*burst), nil))
		eventually(b, 10*time.Minute, fmt.Sprintf("%d pods of %s Running", *burst, name), func() error {
			if n := w.running(); n < *burst {
				return fmt.Errorf("%d Running", n)
			}
			return nil
		})
		elapsed := time.Since(began)
		w.stop()
		latencies := w.latencies()
		rates = append(rates, float64(*burst)/elapsed.Seconds())
		p50s, p99s = append(p50s, quantile(latencies, 0.50).Seconds()), append(p99s, quantile(latencies, 0.99).Seconds())
		b.Logf("%s: %d pods Running after %s", name, *burst, elapsed.Round(100*time.Millisecond))
	}
	b.ReportMetric(mean(rates), "pods/s")
	b.ReportMetric(mean(p50s), "p50-s")
	b.ReportMetric(mean(p99s), "p99-s")
	reportRSS(b, rss(b, c))
}

// podWatch records, for the pods of one app, when a watch first saw each
// one and when it saw it Running.
type podWatch struct {
	mu                   sync.Mutex
	createdAt, runningAt map[string]time.Time
	done                 chan struct{}
}

func watchPods(b *testing.B, c *cluster, ns, app string) *podWatch {
	b.Helper()
	w := &podWatch{createdAt: map[string]time.Time{}, runningAt: map[string]time.Time{}, done: make(chan struct{})}
	seen := func(obj any) {
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.createdAt[p.Name]; !ok {
			w.createdAt[p.Name] = now
		}
		if _, ok := w.runningAt[p.Name]; !ok && p.Status.Phase == corev1.PodRunning {
			w.runningAt[p.Name] = now
		}
	}
	lw := cache.NewFilteredListWatchFromClient(c.kube.CoreV1().RESTClient(), "pods", ns, func(o *metav1.ListOptions) { o.LabelSelector = "app=" + app })
	_, informer := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &corev1.Pod{},
		Handler: cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }},
	})
	go informer.Run(w.done)
	if !cache.WaitForCacheSync(w.done, informer.HasSynced) {
		b.Fatal("the pod watch did not sync")
	}
	return w
}

func (w *podWatch) stop() { close(w.done) }

func (w *podWatch) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.runningAt)
}

// latencies are the creation to Running times of the pods, sorted.
func (w *podWatch) latencies() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []time.Duration
	for name, at := range w.runningAt {
		out = append(out, at.Sub(w.createdAt[name]))
	}
	slices.Sort(out)
	return out
}

// quantile is the q quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(max(1, len(xs)))
}

// rss is the resident memory, in MB, of each process of the emulator.
func rss(b *testing.B, c *cluster) map[string]float64 {
	b.Helper()
	ps, err := emulator.Processes(c.state)
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range ps {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			continue // not Linux, or gone
		}
		for line := range strings.Lines(string(status)) {
			if kb, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(kb), " kB"))
				out[p.Component] = float64(n) / 1024
			}
		}
	}
	return out
}

// reportRSS reports what rss measures, one metric per process.
func reportRSS(b *testing.B, mb map[string]float64) {
	for component, v := range mb {
		b.ReportMetric(v, component+"-MB")
	}
}
