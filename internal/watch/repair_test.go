package watch

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/client-go/tools/record"

	"github.com/fargatekit/fargatekit/internal/repair"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// fakeRepairs is a repairer whose restarts the test answers, one at a
// time, on a clock the test moves.
type fakeRepairs struct {
	*repairer
	now time.Time
	// eksAt is when the analyses' EKS read was made; zero means now.
	eksAt    time.Time
	started  chan string      // the workload a restart began with
	answer   chan repairReply // how it ends
	finished chan struct{}    // a repair ended
	recorder *record.FakeRecorder
}

type repairReply struct {
	skipped string
	err     error
}

func newFakeRepairs(t *testing.T, o RepairOptions) *fakeRepairs {
	f := &fakeRepairs{now: time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC), started: make(chan string, 10),
		answer: make(chan repairReply), finished: make(chan struct{}, 10), recorder: record.NewFakeRecorder(10)}
	f.repairer = newRepairer(o, nil, f.recorder, prometheus.NewRegistry(), func() { f.finished <- struct{}{} })
	f.repairer.now = func() time.Time { return f.now }
	f.restart = func(_ context.Context, d repair.Drift) (repair.Result, error) {
		f.started <- d.Workload.Object.Ref.Name
		a := <-f.answer
		if a.skipped != "" {
			d.Skipped = a.skipped
			return repair.Result{Skipped: []repair.Drift{d}}, nil
		}
		return repair.Result{Restarted: []repair.Drift{d}}, a.err
	}
	return f
}

// offer offers drifts of the named workloads and returns the one whose
// restart began, "" when none did.
func (f *fakeRepairs) offer(t *testing.T, names ...string) string {
	t.Helper()
	var ds []repair.Drift
	for _, n := range names {
		ds = append(ds, repair.Drift{Workload: state("shop", n, 0, 2, 0, 0).Workload, Command: "kubectl rollout restart"})
	}
	eksAt := f.eksAt
	if eksAt.IsZero() {
		eksAt = f.now
	}
	ref, ok := f.repairer.offer(context.Background(), ds, eksAt)
	if !ok {
		return ""
	}
	select {
	case name := <-f.started:
		if name != ref.Name {
			t.Fatalf("offer says it started %s, the restart has %s", ref, name)
		}
		return name
	case <-time.After(10 * time.Second):
		t.Fatalf("the restart of %s did not begin", ref)
		return ""
	}
}

// end answers the running restart and waits until the repairer took it.
func (f *fakeRepairs) end(t *testing.T, r repairReply) string {
	t.Helper()
	f.answer <- r
	select {
	case <-f.finished:
	case <-time.After(10 * time.Second):
		t.Fatal("the repair did not end")
	}
	select {
	case e := <-f.recorder.Events:
		return e
	default:
		return ""
	}
}

// TestRepairPacing: a drift is repaired once it lasted After, one workload
// at a time, each at most once an hour, and no more than PerHour restarts
// in any hour; a skipped one does not count against the cap.
func TestRepairPacing(t *testing.T) {
	f := newFakeRepairs(t, RepairOptions{After: time.Minute, PerHour: 2, Timeout: time.Minute})
	if got := f.offer(t, "web", "api"); got != "" {
		t.Fatalf("restarted %s as soon as it drifted", got)
	}
	f.now = f.now.Add(59 * time.Second)
	if got := f.offer(t, "web", "api"); got != "" {
		t.Fatalf("restarted %s before After", got)
	}
	f.now = f.now.Add(time.Second)
	if got := f.offer(t, "web", "api"); got != "web" {
		t.Fatalf("after After: restarted %q, want web", got)
	}
	if got := f.offer(t, "web", "api"); got != "" {
		t.Fatalf("restarted %s while web's restart runs", got)
	}
	if e := f.end(t, repairReply{}); e != "Normal DriftRepaired restarted by fargatekit watch (--repair-drift): its pods run on Fargate" {
		t.Errorf("event %q", e)
	}
	// web drifts again at once: not tried again within the hour.
	if got := f.offer(t, "web", "api"); got != "api" {
		t.Fatalf("next: restarted %q, want api", got)
	}
	if e := f.end(t, repairReply{skipped: "Fargate would refuse its pods (privileged)"}); e != "Warning DriftNotRepaired fargatekit watch (--repair-drift) leaves it to fargatekit fix drift: Fargate would refuse its pods (privileged)" {
		t.Errorf("event %q", e)
	}
	// A new drift: the cap of 2 has 1 restart (skips do not count).
	if got := f.offer(t, "web", "api", "db"); got != "" {
		t.Fatalf("restarted %s before db lasted After", got)
	}
	f.now = f.now.Add(time.Minute)
	if got := f.offer(t, "web", "api", "db"); got != "db" {
		t.Fatalf("restarted %q, want db", got)
	}
	if e := f.end(t, repairReply{err: errors.New("new pods run off Fargate: db-1 on ip-10-0-1-1")}); e != "Warning DriftRepairFailed fargatekit watch (--repair-drift) could not repair it: "+
		"new pods run off Fargate: db-1 on ip-10-0-1-1. Not tried again for an hour; repair it by hand: kubectl rollout restart" {
		t.Errorf("event %q", e)
	}
	// Two restarts this hour: the cap holds, even for a new drift.
	f.now = f.now.Add(time.Minute)
	if got := f.offer(t, "web", "api", "db", "queue"); got != "" {
		t.Fatalf("restarted %s past the cap of 2 an hour", got)
	}
	// An hour after the first restart, the cap frees one, and web, first
	// in the analysis' order, is due again.
	f.now = f.now.Add(57 * time.Minute)
	if got := f.offer(t, "web", "api", "db", "queue"); got != "" {
		t.Fatalf("restarted %s 59 minutes after the first restart", got)
	}
	f.now = f.now.Add(time.Minute)
	if got := f.offer(t, "web", "api", "db", "queue"); got != "web" {
		t.Fatalf("an hour later: restarted %q, want web", got)
	}
	f.end(t, repairReply{})
	for res, want := range map[string]float64{repairRestarted: 2, repairFailed: 1, repairSkipped: 1} {
		if got := testutil.ToFloat64(f.total.WithLabelValues(res)); got != want {
			t.Errorf("%s{result=%q} = %v, want %v", repairsMetric, res, got, want)
		}
	}
}

// TestRepairForgetsEnded: a drift that ends and comes back waits After
// again.
func TestRepairForgetsEnded(t *testing.T) {
	f := newFakeRepairs(t, RepairOptions{After: time.Minute, PerHour: 5, Timeout: time.Minute})
	f.offer(t, "web")
	f.now = f.now.Add(50 * time.Second)
	f.offer(t) // web's drift ended
	f.now = f.now.Add(20 * time.Second)
	if got := f.offer(t, "web"); got != "" {
		t.Fatalf("restarted %s, whose drift is back since 0s", got)
	}
}

// TestRepairWaitsForEKS: a drift is repaired only once a read of the EKS
// API made after it was first seen confirms it: the analysis that first
// sees it may have profiles deleted since.
func TestRepairWaitsForEKS(t *testing.T) {
	f := newFakeRepairs(t, RepairOptions{After: 0, PerHour: 5, Timeout: time.Minute})
	read := f.now.Add(-5 * time.Second)
	f.eksAt = read
	if got := f.offer(t, "web"); got != "" {
		t.Fatalf("restarted %s on a read of the EKS API older than its drift", got)
	}
	f.now = f.now.Add(10 * time.Second)
	if got := f.offer(t, "web"); got != "" {
		t.Fatalf("restarted %s with no read of the EKS API since", got)
	}
	f.eksAt = f.now.Add(-time.Second) // a read after the drift was first seen
	if got := f.offer(t, "web"); got != "web" {
		t.Fatalf("restarted %q once a later read confirmed it, want web", got)
	}
	f.end(t, repairReply{})
}

// TestDrifts: the drifts are the report's LV001 findings, in its order,
// with their workloads.
func TestDrifts(t *testing.T) {
	web, api := state("shop", "web", 0, 2, 0, 0), state("shop", "api", 1, 1, 0, 0)
	skew := &rules.Rule{ID: "LV005", Name: "az-skew"}
	ds := drifts(rep([]live.WorkloadState{web, api}, finding(live.Drift, api, "drifted"), finding(skew, web, "skewed"), finding(live.Drift, web, "drifted")))
	var names []string
	for _, d := range ds {
		names = append(names, d.Workload.Object.Ref.Name+":"+d.Command)
	}
	if !slices.Equal(names, []string{"api:kubectl rollout restart", "web:kubectl rollout restart"}) {
		t.Errorf("drifts %v", names)
	}
}
