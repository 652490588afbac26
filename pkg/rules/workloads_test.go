package rules

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// full returns a workload with every field set, variant i of it: over
// variants 0 to 5, each boolean is true in some and false in others, apart
// from the others.
func full(i int) *Workload {
	class := fmt.Sprint("efs-", i)
	return &Workload{
		Ref:       object.Ref{APIVersion: "apps/v1", Kind: "StatefulSet", Namespace: "shop", Name: fmt.Sprint("web-", i)},
		Source:    object.Source{File: fmt.Sprint("deploy/", i%3, ".yaml"), Line: 100 - i},
		Namespace: "shop",
		Labels:    map[string]string{"app": fmt.Sprint("web-", i), "tier": "front", "empty": ""},
		Replicas:  i + 1,
		Placement: fargate.Placement{Fargate: i%2 == 0, Profile: "apps", Matching: []string{"apps", "other"}, ByLabel: i%3 == 0, Reason: "a reason"},
		Sizing: fargate.Sizing{RequestedMilliCPU: 250, RequestedMemoryMiB: 300, Provisioned: fargate.Size{MilliCPU: 500, MemoryMiB: 1024},
			EphemeralGiB: 20, Fits: i%4 < 2, NothingRequested: i%5 == 1},
		HourlyCostUSD:  0.04048 * float64(i+1),
		MonthlyCostUSD: math.Pi,
		Unrequested:    -0.5,
		ServiceAccount: "web",
		Claims:         []string{"data", fmt.Sprint("logs-", i)},
		DynamicVolumes: []DynamicVolume{{Name: "scratch", Ephemeral: i%2 == 1, StorageClass: &class, Line: 7}, {Name: "data", Ephemeral: true, Line: -1}},
		Refusals:       []fargate.Refusal{{Kind: fargate.RefuseHostNetwork, Reason: "host network", Field: "hostNetwork", Detail: "hostNetwork is true"}},
	}
}

// zeroFields names the fields of v, nested, that hold their zero value.
func zeroFields(v reflect.Value, path string) []string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return []string{path}
		}
		return zeroFields(v.Elem(), path)
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			out = append(out, zeroFields(v.Field(i), path+"."+v.Type().Field(i).Name)...)
		}
		return out
	case reflect.Slice:
		if v.Len() == 0 {
			return []string{path}
		}
		var out []string
		for i := range v.Len() { // each field must be set in some element
			out = append(out, zeroFields(v.Index(i), path+"[]")...)
		}
		slices.Sort(out)
		var missed []string
		for _, f := range slices.Compact(out) {
			if count(out, f) == v.Len() {
				missed = append(missed, f)
			}
		}
		return missed
	}
	if v.IsZero() {
		return []string{path}
	}
	return nil
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestWorkloadsRoundTrip: every field of a summary comes back as it was
// added. The workloads of the test set every field, each boolean both ways,
// so that a field added to Workload (or to the types it holds) and not to
// the encoding fails it, as does a flag read for another.
func TestWorkloadsRoundTrip(t *testing.T) {
	var want []*Workload
	for i := range 6 {
		want = append(want, full(i))
	}
	if zero := zeroFields(reflect.ValueOf(want), "Workload"); len(zero) > 0 {
		t.Fatalf("the test's workloads leave fields unset in every one of them: %v", zero)
	}
	want = append(want, &Workload{}, &Workload{Ref: object.Ref{Name: "other"}, Sizing: fargate.Sizing{RequestedMilliCPU: math.MinInt64, EphemeralGiB: math.MaxInt64}})
	s := NewWorkloads(want...)
	if s.Len() != len(want) {
		t.Errorf("Len() = %d, want %d", s.Len(), len(want))
	}
	if diff := cmp.Diff(want, slices.Collect(s.All())); diff != "" {
		t.Errorf("All (-added +read):\n%s", diff)
	}
	// A second read gives the same, in new values.
	if got := slices.Collect(s.All()); !cmp.Equal(want, got) || got[0] == want[0] {
		t.Error("a second read differs, or returns the workload added")
	}
}

// TestWorkloadsSorted: Sorted orders by file and line, stably, whatever the
// order added, and All keeps the order added.
func TestWorkloadsSorted(t *testing.T) {
	for name, lines := range map[string][]int{
		"in order":  {1, 2, 2, 5, 9},
		"reversed":  {9, 5, 2, 2, 1},
		"shuffled":  {5, 1, 9, 2, 2, 7, 1},
		"one":       {3},
		"many":      manyLines(12000),
		"all equal": {4, 4, 4},
	} {
		var added []*Workload
		for i, l := range lines {
			file := []string{"b.yaml", "a.yaml", "c/a.yaml"}[l%3]
			added = append(added, &Workload{Ref: object.Ref{Name: fmt.Sprint(i)}, Source: object.Source{File: file, Line: l}})
		}
		s := NewWorkloads(added...)
		want := slices.Clone(added)
		slices.SortStableFunc(want, func(a, b *Workload) int {
			if a.Source.File != b.Source.File {
				return strings.Compare(a.Source.File, b.Source.File)
			}
			return a.Source.Line - b.Source.Line
		})
		if diff := cmp.Diff(want, slices.Collect(s.Sorted())); diff != "" {
			t.Errorf("%s: Sorted (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(added, slices.Collect(s.All())); diff != "" {
			t.Errorf("%s: All after Sorted (-want +got):\n%s", name, diff)
		}
		s.Add(&Workload{Source: object.Source{File: "0.yaml"}})
		if first := slices.Collect(s.Sorted())[0]; first.Source.File != "0.yaml" {
			t.Errorf("%s: added after a read, a workload of the first file is not first: %v", name, first.Source)
		}
	}
	var none *Workloads
	if none.Len() != 0 || len(slices.Collect(none.Sorted())) != 0 || len(slices.Collect(none.All())) != 0 || len(slices.Collect(none.WithDynamicVolumes())) != 0 {
		t.Error("a nil Workloads is not empty")
	}
}

// memSpill keeps the buffers it is given, as spool.Blocks does in a file.
type memSpill struct {
	blocks    [][]byte
	failWrite bool
	// failFrom, above 0, fails the reads of the blocks from it on. Set it
	// before a loop over All (which reads ahead on another goroutine).
	failFrom int
}

func (m *memSpill) Write(b []byte) (int, error) {
	if m.failWrite {
		return 0, errors.New("disk full")
	}
	m.blocks = append(m.blocks, bytes.Clone(b))
	return len(m.blocks) - 1, nil
}

func (m *memSpill) ReadAt(i int, b []byte, off int) error {
	if m.failFrom > 0 && i >= m.failFrom {
		return errors.New("bad sector")
	}
	if copy(b, m.blocks[i][off:]) < len(b) {
		return errors.New("short read")
	}
	return nil
}

// TestWorkloadsSpill: spilled, the summaries read back as they do from
// memory, in both orders, through the Cluster's index and through
// WithDynamicVolumes; one buffer stays in memory; a buffer that cannot be
// written stays there, and a read error stops the reading and is kept.
func TestWorkloadsSpill(t *testing.T) {
	var added []*Workload
	for i, l := range manyLines(6000) {
		w := full(i % 5)
		w.Source = object.Source{File: []string{"b.yaml", "a.yaml"}[l%2], Line: l}
		w.Labels = map[string]string{"app": fmt.Sprint("web-", i%7)}
		if i%3 > 0 {
			w.DynamicVolumes = nil
		}
		added = append(added, w)
	}
	spill := &memSpill{}
	s := &Workloads{Spill: spill}
	for _, w := range added {
		s.Add(w)
	}
	if held := len(slices.DeleteFunc(slices.Clone(s.chunks), func(c []byte) bool { return c == nil })); len(spill.blocks) < 2 || held != 1 {
		t.Fatalf("%d buffers spilled, %d held; want several, and one", len(spill.blocks), held)
	}
	mem := NewWorkloads(added...)
	if diff := cmp.Diff(slices.Collect(mem.All()), slices.Collect(s.All())); diff != "" {
		t.Errorf("All (-memory +spilled):\n%s", diff)
	}
	if diff := cmp.Diff(slices.Collect(mem.Sorted()), slices.Collect(s.Sorted())); diff != "" {
		t.Errorf("Sorted (-memory +spilled):\n%s", diff)
	}
	sel := labels.SelectorFromSet(labels.Set{"app": "web-3"})
	if diff := cmp.Diff(selected(&Cluster{Workloads: mem}, "shop", sel), selected(&Cluster{Workloads: s}, "shop", sel)); diff != "" {
		t.Errorf("Selected (-memory +spilled):\n%s", diff)
	}
	dynamic := slices.DeleteFunc(slices.Collect(mem.All()), func(w *Workload) bool { return len(w.DynamicVolumes) == 0 })
	if len(dynamic) != len(added)/3 {
		t.Fatalf("%d of %d workloads with dynamic volumes, want a third", len(dynamic), len(added))
	}
	for name, ws := range map[string]*Workloads{"memory": mem, "spilled": s} {
		if diff := cmp.Diff(dynamic, slices.Collect(ws.WithDynamicVolumes())); diff != "" {
			t.Errorf("WithDynamicVolumes, %s (-All with dynamic volumes +got):\n%s", name, diff)
		}
	}
	if s.Err() != nil {
		t.Errorf("Err() = %v", s.Err())
	}

	// A read error: the reading stops, the error is kept, and what reads
	// next finds nothing rather than what the failed read left.
	broken := &Workloads{Spill: spill}
	for _, w := range added {
		broken.Add(w)
	}
	spill.failFrom = broken.blocks[1] // the first buffer on disk reads, the second does not
	n := 0
	for range broken.All() {
		n++
	}
	if n == 0 || n >= len(added) || broken.Err() == nil {
		t.Errorf("a read error: %d workloads read of %d, Err() = %v; want some, not all, and the error", n, len(added), broken.Err())
	}
	spill.failFrom = 0
	if n := len(slices.Collect(broken.All())); n > 0 { // the first is in a buffer on disk
		t.Errorf("after a read error, All read %d workloads", n)
	}
	if n := len(slices.Collect(broken.Sorted())); n >= len(added) {
		t.Errorf("after a read error, Sorted read %d workloads", n)
	}
	if n, all := len(selected(&Cluster{Workloads: broken}, "shop", sel)), len(selected(&Cluster{Workloads: mem}, "shop", sel)); n >= all {
		t.Errorf("after a read error, Selected read %d workloads of %d", n, all)
	}

	full := &Workloads{Spill: &memSpill{failWrite: true}}
	for _, w := range added {
		full.Add(w)
	}
	if diff := cmp.Diff(slices.Collect(mem.Sorted()), slices.Collect(full.Sorted())); diff != "" || full.Err() != nil {
		t.Errorf("with nowhere to spill (-memory +kept), Err() = %v:\n%s", full.Err(), diff)
	}
}

// TestWorkloadsAllStops: All reads ahead on a goroutine of its own, which
// is gone once a loop over All stops early, even one that ran another
// loop over them inside.
func TestWorkloadsAllStops(t *testing.T) {
	spill := &memSpill{}
	s := &Workloads{Spill: spill}
	for i, l := range manyLines(6000) {
		w := full(i % 5)
		w.Source.Line = l
		s.Add(w)
	}
	if len(spill.blocks) < 2 {
		t.Fatalf("%d buffers spilled, want several", len(spill.blocks))
	}
	before := runtime.NumGoroutine()
	n, inner := 0, 0
	for range s.All() {
		if n++; n == 1 {
			for range s.All() {
				if inner++; inner == 1000 {
					break
				}
			}
		}
		if n == 300 { // past the first batch read ahead
			break
		}
	}
	if n != 300 || inner != 1000 || s.Err() != nil {
		t.Fatalf("%d and %d workloads read, Err() = %v; want 300 and 1000", n, inner, s.Err())
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines once All stopped, %d before", runtime.NumGoroutine(), before)
		}
	}
	if got := len(slices.Collect(s.All())); got != s.Len() {
		t.Errorf("All read %d workloads after a loop stopped early, want %d", got, s.Len())
	}
}

// selected collects what Selected yields, numbers and workloads.
func selected(c *Cluster, ns string, sel labels.Selector) map[int]*Workload {
	return maps.Collect(c.Selected(ns, sel))
}

// manyLines spans several of Workloads' buffers.
func manyLines(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = (i * 7919) % 1000
	}
	return out
}

// BenchmarkWorkloads: adding the summary of a Deployment like those of
// BenchmarkCheck, and reading it back.
func BenchmarkWorkloads(b *testing.B) {
	w := &Workload{
		Ref: object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "team-0", Name: "svc-0-0"}, Source: object.Source{File: "team-0000.yaml", Line: 2},
		Namespace: "team-0", Labels: map[string]string{"app": "svc-0-0", "team": "team-0"}, Replicas: 3,
		Placement: fargate.Placement{Fargate: true, Profile: "apps", Matching: []string{"apps"}}, ServiceAccount: "svc-0",
		Sizing:        fargate.Sizing{RequestedMilliCPU: 600, RequestedMemoryMiB: 1152, Provisioned: fargate.Size{MilliCPU: 1000, MemoryMiB: 2048}, EphemeralGiB: 20, Fits: true},
		HourlyCostUSD: 0.147, MonthlyCostUSD: 107.3, Unrequested: 0.31,
	}
	const n = 10000
	b.Run("add", func(b *testing.B) {
		for b.Loop() {
			s := &Workloads{}
			for range n {
				s.Add(w)
			}
			b.ReportMetric(float64(s.size())/n, "bytes/workload")
		}
	})
	b.Run("read", func(b *testing.B) {
		s := &Workloads{}
		for range n {
			s.Add(w)
		}
		for b.Loop() {
			for range s.All() {
			}
		}
	})
}

// size is the bytes the summaries take in their buffers, keys and table.
func (s *Workloads) size() int {
	n := 16 * len(s.keys)
	for _, c := range s.chunks {
		n += len(c)
	}
	for _, v := range s.strs {
		n += len(v) + 16
	}
	return n
}
