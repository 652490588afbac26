// Package gctune gives the garbage collector of a command that streams its
// input a memory budget instead of Go's default goal.
//
// With Go's default (GOGC=100) the collector runs whenever the heap doubles.
// A check keeps little alive (12–16 MB whatever the input, since findings
// and workload summaries go to disk), so it collected every 15 MB it
// allocated: 201 times at 100,000 objects. Under a budget of 48 MiB it
// collects 127 times (docs/benchmarks.md has what that saves).
//
// A memory limit alone (GOGC=off, GOMEMLIMIT) would make the collector run
// without end once the live heap nears the limit, which a large Helm chart
// could do: the limit here follows the live heap, twice it and a quarter of
// the budget for the runtime's own memory when that is more than the budget,
// so that a large live heap is collected about as often as under the
// default.
package gctune

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Limit returns the memory limit for a live heap of live bytes under a
// budget: the budget, or twice the live heap and a quarter of the budget
// (the runtime's own memory, about 12 MB in a check) when that is more.
func Limit(live uint64, budget int64) int64 {
	return max(budget, int64(min(live, math.MaxInt64/4))*2+budget/4)
}

var (
	mu     sync.Mutex
	active *tuner // at most one: the runtime's settings are the process's
)

// Budget sets the collector to run when the process's memory reaches
// budget bytes (or what Limit gives, when that is more), until the
// returned function is called, which restores the settings found. It does
// nothing when the user set GOGC or GOMEMLIMIT (theirs is the choice), or
// while an earlier call is in effect.
func Budget(budget int64) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	if active != nil || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	t := &tuner{budget: budget, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	// The limit first, so that the collector is never off without one.
	t.limit = debug.SetMemoryLimit(Limit(t.live(), budget))
	t.percent = debug.SetGCPercent(-1)
	active = t
	t.arm()
	return t.restore
}

type tuner struct {
	budget  int64
	limit   int64 // the settings before
	percent int
	sample  []metrics.Sample
}

// arm calls adjust after the next collection: the cleanup of an object that
// nothing refers to runs once a collection has found it unreachable.
func (t *tuner) arm() {
	runtime.AddCleanup(new([16]byte), func(t *tuner) { t.adjust() }, t) // 16 bytes: not a tiny object, whose cleanup may never run
}

func (t *tuner) adjust() {
	mu.Lock()
	defer mu.Unlock()
	if active != t {
		return // restored
	}
	debug.SetMemoryLimit(Limit(t.live(), t.budget))
	t.arm()
}

// live returns the heap the last collection marked live (0 before the first).
func (t *tuner) live() uint64 {
	metrics.Read(t.sample)
	if t.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return t.sample[0].Value.Uint64()
}

func (t *tuner) restore() {
	mu.Lock()
	defer mu.Unlock()
	if active != t {
		return
	}
	active = nil
	// The collector on first, then the limit lifted.
	debug.SetGCPercent(t.percent)
	debug.SetMemoryLimit(t.limit)
}
