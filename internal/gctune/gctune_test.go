package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		name   string
		live   uint64
		budget int64
		want   int64
	}{
		{"before the first collection", 0, 48 * mib, 48 * mib},
		{"a small live heap", 10 * mib, 48 * mib, 48 * mib},
		{"twice the live heap and a quarter of the budget is the budget", 18 * mib, 48 * mib, 48 * mib},
		{"a larger live heap", 20 * mib, 48 * mib, 52 * mib},
		{"a live heap past any limit", math.MaxUint64, 48 * mib, math.MaxInt64/4*2 + 12*mib},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Limit(tc.live, tc.budget); got != tc.want {
				t.Errorf("Limit(%d, %d) = %d, want %d", tc.live, tc.budget, got, tc.want)
			}
		})
	}
}

// settings returns the memory limit and GOGC in effect.
func settings() (limit int64, percent int64) {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return debug.SetMemoryLimit(-1), int64(s[0].Value.Uint64()) // off is -1
}

func TestBudget(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	limit, percent := settings()

	const budget = 8 << 20
	restore := Budget(budget)
	if l, p := settings(); l != budget || p != -1 {
		t.Fatalf("under a budget: limit %d, GOGC %d; want %d and off", l, p, budget)
	}
	Budget(budget * 2)() // while one is in effect, a second budget does nothing, nor does its restore
	if l, _ := settings(); l != budget {
		t.Fatalf("a second budget changed the limit to %d", l)
	}

	// A live heap past half the budget raises the limit after the next
	// collection (the tuner runs just after it).
	live := make([][]byte, 8)
	for i := range live {
		live[i] = make([]byte, 1<<20)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if l, _ := settings(); l >= Limit(8<<20, budget) {
			break
		}
		if time.Now().After(deadline) {
			l, _ := settings()
			t.Fatalf("with 8 MiB live the limit stayed %d", l)
		}
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(live)

	restore()
	if l, p := settings(); l != limit || p != percent {
		t.Errorf("after restore: limit %d, GOGC %d; want %d and %d as before", l, p, limit, percent)
	}
	restore() // twice is harmless
	if l, _ := settings(); l != limit {
		t.Errorf("a second restore set the limit to %d", l)
	}
}

func TestBudgetLeavesTheUsersSettings(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "200")
			limit, percent := settings()
			restore := Budget(1 << 20)
			defer restore()
			if l, p := settings(); l != limit || p != percent {
				t.Errorf("with %s set: limit %d, GOGC %d; want %d and %d", env, l, p, limit, percent)
			}
		})
	}
}
