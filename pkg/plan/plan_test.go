package plan

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

func profile(name string, namespaces ...string) *fargate.Profile {
	p := &fargate.Profile{Name: name}
	for _, ns := range namespaces {
		p.Selectors = append(p.Selectors, fargate.Selector{Namespace: ns})
	}
	return p
}

func workload(ns, name string, labels map[string]string) Workload {
	return Workload{Ref: object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}, Namespace: ns, Labels: labels}
}

// outcome is a compact view of a WorkloadPlan for table tests.
type outcome struct {
	Before, After Placement
	Moves         []Placement
	Uncovered     int
	Matched       string
	Restart       bool
}

func outcomes(r Result) map[string]outcome {
	out := map[string]outcome{}
	for _, w := range r.Workloads {
		out[w.Ref.Name] = outcome{w.Before, w.After, w.Moves, w.Uncovered, w.Matched, w.RestartNeeded}
	}
	return out
}

var (
	fg   = func(p string) Placement { return Placement{Where: OnFargate, Profile: p} }
	ec2  = Placement{Where: OnEC2}
	pend = Placement{Where: Pending}
)

func TestAnalyze(t *testing.T) {
	four := []Workload{workload("orders", "orders", nil), workload("payments", "payments", nil), workload("catalog", "catalog", nil), workload("shipping", "shipping", nil)}
	merged := profile("apps", "orders", "payments", "catalog", "shipping")
	incident := []Change{
		{Address: "orders", Before: profile("orders", "orders")},
		{Address: "payments", Before: profile("payments", "payments")},
		{Address: "catalog", Before: profile("catalog", "catalog")},
		{Address: "shipping", Before: profile("shipping", "shipping")},
		{Address: "apps", After: merged},
	}
	for _, tc := range []struct {
		name       string
		in         Input
		wantSteps  []string
		want       map[string]outcome
		wantLost   int
		wantGained int
	}{
		{
			name:      "the incident: four profiles merged into one, node groups present",
			in:        Input{Changes: incident, Workloads: four, NodeGroups: true},
			wantSteps: []string{"delete orders", "delete payments", "delete catalog", "delete shipping", "create apps"},
			want: map[string]outcome{
				// In each workload's worst order its profile goes first and apps comes last.
				"orders":   {fg("orders"), ec2, []Placement{ec2}, 5, "apps", true},
				"payments": {fg("payments"), ec2, []Placement{ec2}, 5, "apps", true},
				"catalog":  {fg("catalog"), ec2, []Placement{ec2}, 5, "apps", true},
				"shipping": {fg("shipping"), ec2, []Placement{ec2}, 5, "apps", true},
			},
			wantGained: 0,
		},
		{
			name: "the incident without node groups: pods stay Pending",
			in:   Input{Changes: incident, Workloads: four[:1]},
			want: map[string]outcome{"orders": {fg("orders"), pend, []Placement{pend}, 5, "apps", true}},
		},
		{
			name:       "add only: nothing moves; pods already on EC2 stay there",
			in:         Input{Changes: []Change{{Address: "web", After: profile("web", "web")}}, Workloads: []Workload{workload("web", "web", nil)}, NodeGroups: true},
			wantSteps:  []string{"create web"},
			want:       map[string]outcome{"web": {ec2, ec2, nil, 0, "web", true}},
			wantGained: 1,
		},
		{
			name:      "remove only: the pods leave Fargate for good",
			in:        Input{Changes: []Change{{Address: "web", Before: profile("web", "web")}}, Workloads: []Workload{workload("web", "web", nil)}, NodeGroups: true},
			wantSteps: []string{"delete web"},
			want:      map[string]outcome{"web": {fg("web"), ec2, []Placement{ec2}, 1, "", false}},
			wantLost:  1,
		},
		{
			name: "create before destroy: pods move to the new profile and stay on Fargate",
			in: Input{Changes: []Change{{Address: "web", Before: profile("web", "web"), After: profile("web-v2", "web", "api"), CreateBeforeDestroy: true}},
				Workloads: []Workload{workload("web", "web", nil)}, NodeGroups: true},
			wantSteps:  []string{"create web-v2", "delete web"},
			want:       map[string]outcome{"web": {fg("web"), fg("web-v2"), []Placement{fg("web-v2")}, 0, "web-v2", false}},
			wantGained: 1,
		},
		{
			name: "destroy first, same selectors (a subnet change): pods leave for one operation and stay on EC2",
			in: Input{Changes: []Change{{Address: "web", Before: profile("web", "web"), After: profile("web", "web")}},
				Workloads: []Workload{workload("web", "web", nil)}, NodeGroups: true},
			wantSteps: []string{"delete web", "create web"},
			want:      map[string]outcome{"web": {fg("web"), ec2, []Placement{ec2}, 2, "web", true}},
		},
		{
			name: "another active profile catches the pods",
			in: Input{Changes: []Change{{Address: "narrow", Before: profile("narrow", "web")}}, Unchanged: []fargate.Profile{*profile("wide", "w*")},
				Workloads: []Workload{workload("web", "web", nil)}, NodeGroups: true},
			want: map[string]outcome{"web": {fg("narrow"), fg("wide"), []Placement{fg("wide")}, 0, "wide", false}},
		},
		{
			name: "EC2 by design is never moved",
			in: Input{Changes: incident, Workloads: []Workload{func() Workload {
				w := workload("orders", "orders", nil)
				w.OffFargate = fargate.ReasonEC2Annotation
				return w
			}()}, NodeGroups: true},
			want: map[string]outcome{"orders": {ec2, ec2, nil, 0, "", false}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(tc.in)
			if tc.wantSteps != nil {
				var steps []string
				for _, s := range r.Steps {
					steps = append(steps, string(s.Kind)+" "+s.Profile)
				}
				if diff := cmp.Diff(tc.wantSteps, steps); diff != "" {
					t.Errorf("steps (-want +got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.want, outcomes(r)); diff != "" {
				t.Errorf("workloads (-want +got):\n%s", diff)
			}
			if len(r.CoverageLost) != tc.wantLost || len(r.CoverageGained) != tc.wantGained {
				t.Errorf("coverage lost %v gained %v, want %d and %d", r.CoverageLost, r.CoverageGained, tc.wantLost, tc.wantGained)
			}
		})
	}
}

func TestTimingAndSafeSequence(t *testing.T) {
	r := Analyze(Input{
		Changes: []Change{
			{Address: "a", Before: profile("a", "a")},
			{Address: "b", Before: profile("b", "b"), After: profile("b", "b", "c")},
			{Address: "n", After: profile("n", "a")},
		},
		Workloads:  []Workload{workload("a", "a", nil)},
		NodeGroups: true,
		Durations:  Durations{Create: time.Minute, Delete: 10 * time.Minute},
	})
	if r.Duration != 10*time.Minute+10*time.Minute+time.Minute+time.Minute {
		t.Errorf("duration %v", r.Duration)
	}
	w := r.Workloads[0]
	// a is deleted first (0-10m); n, which covers it, is created last (21-22m).
	if w.Uncovered != 4 || w.UncoveredFor != 22*time.Minute {
		t.Errorf("uncovered %d ops for %v, want 4 ops for 22m", w.Uncovered, w.UncoveredFor)
	}
	var creates, deletes []string
	for _, c := range r.Safe.Create {
		creates = append(creates, c.After.Name)
	}
	for _, c := range r.Safe.Delete {
		deletes = append(deletes, c.Before.Name)
	}
	// b is replaced in place: it is bridged, not created and deleted.
	if diff := cmp.Diff([]string{"n"}, creates); diff != "" {
		t.Errorf("safe creates (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a"}, deletes); diff != "" {
		t.Errorf("safe deletes (-want +got):\n%s", diff)
	}
	if len(r.Safe.Bridges) != 1 || r.Safe.Bridges[0].Old.Name != "b" || !r.Safe.Bridges[0].Replacement || r.Safe.Bridges[0].BridgeName() != "b-bridge" {
		t.Errorf("bridges = %+v", r.Safe.Bridges)
	}
	if len(r.Safe.Restart) != 1 || r.Safe.Restart[0].Ref.Name != "a" {
		t.Errorf("restart = %+v", r.Safe.Restart)
	}
}

func TestProfileLabelAndWildcards(t *testing.T) {
	wide := fargate.Profile{Name: "a-wide", Selectors: []fargate.Selector{{Namespace: "team-*", Labels: map[string]string{"app": "web-?"}}}}
	r := Analyze(Input{
		Changes:   []Change{{Address: "z-pinned", Before: &fargate.Profile{Name: "z-pinned", Selectors: []fargate.Selector{{Namespace: "team-a"}}}}},
		Unchanged: []fargate.Profile{wide},
		Workloads: []Workload{
			workload("team-a", "pinned", map[string]string{"app": "web-1", fargate.ProfileLabel: "z-pinned"}),
			workload("team-a", "other", map[string]string{"app": "api"}),
		},
		NodeGroups: true,
	})
	want := map[string]outcome{
		// The label chose z-pinned; once it is gone, a-wide takes the recreated pods.
		"pinned": {fg("z-pinned"), fg("a-wide"), []Placement{fg("a-wide")}, 0, "a-wide", false},
		"other":  {fg("z-pinned"), ec2, []Placement{ec2}, 1, "", false},
	}
	if diff := cmp.Diff(want, outcomes(r)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(r.CoverageLost) != 1 {
		t.Errorf("coverage lost = %v, want team-a (a-wide needs app=web-?)", r.CoverageLost)
	}
}

func TestRulesAreValid(t *testing.T) {
	if _, err := rules.NewRegistry(Rules...); err != nil {
		t.Fatal(err)
	}
}

func TestFindings(t *testing.T) {
	in := Input{
		Changes: []Change{
			{Address: "orders", Before: profile("orders", "orders")},
			{Address: "apps", After: profile("apps", "orders", "new")},
			{Address: "same", Before: profile("same", "x"), After: profile("same", "x", "y"), CreateBeforeDestroy: true},
		},
		Unchanged:  []fargate.Profile{*profile("keep", "k")},
		Workloads:  []Workload{workload("orders", "orders", nil), workload("new", "fresh", nil)},
		NodeGroups: true,
	}
	var got []string
	for _, f := range Findings(in, Analyze(in), "plan.json") {
		got = append(got, f.Rule.ID+" "+f.Object.Name)
	}
	want := []string{
		"PL001 orders", // deleted first, apps created last: on EC2 until restarted
		"PL002 fresh",  // on EC2 before; apps matches it after
		"PL005 apps",   // namespace new
		"PL005 same",   // namespace y
		"PL006 same",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGaps checks the coverage gaps found from the profiles alone.
func TestGaps(t *testing.T) {
	merged := profile("apps", "orders", "payments")
	changes := []Change{
		{Address: "orders", Before: profile("orders", "orders")},
		{Address: "payments", Before: profile("payments", "payments")},
		{Address: "apps", After: merged},
	}
	r := Analyze(Input{Changes: changes, Durations: Durations{Create: time.Minute, Delete: 2 * time.Minute}})
	type gap struct {
		Namespace string
		From, To  int
		For       time.Duration
	}
	var got []gap
	for _, g := range r.Gaps {
		got = append(got, gap{g.Selector.Selector.Namespace, g.From, g.To, g.For})
	}
	// Each selector in its own worst order: its profile deleted first, apps created last.
	want := []gap{{"orders", 0, 2, 5 * time.Minute}, {"payments", 0, 2, 5 * time.Minute}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gaps (-want +got):\n%s", diff)
	}
	// Create before destroy leaves no gap.
	cbd := Analyze(Input{Changes: []Change{{Address: "w", Before: profile("w", "web"), After: profile("w2", "web"), CreateBeforeDestroy: true}}})
	if len(cbd.Gaps) != 0 {
		t.Errorf("create-before-destroy gaps = %v", cbd.Gaps)
	}
	var ids []string
	for _, f := range Findings(Input{Changes: changes}, r, "plan.json") {
		ids = append(ids, f.Rule.ID+" "+f.Object.Name)
	}
	if diff := cmp.Diff([]string{"PL007 orders", "PL007 payments"}, ids); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

// TestCoverage checks which selectors of removed profiles the profiles
// after the change cover, wildcards of both sides included.
func TestCoverage(t *testing.T) {
	sel := func(name, ns string, labels map[string]string) *fargate.Profile {
		return &fargate.Profile{Name: name, Selectors: []fargate.Selector{{Namespace: ns, Labels: labels}}}
	}
	for _, tc := range []struct {
		name          string
		before, after *fargate.Profile
		wantLost      []string
	}{
		{"a wider namespace pattern covers a narrower one", sel("old", "team-?", nil), sel("new", "team-*", nil), nil},
		{"a narrower namespace pattern covers less", sel("old", "team-*", nil), sel("new", "team-?", nil), []string{"old team-*"}},
		{"a label pattern covers a narrower label", sel("old", "web", map[string]string{"app": "web-?"}), sel("new", "web", map[string]string{"app": "*"}), nil},
		{"a label pattern covers less", sel("old", "web", map[string]string{"app": "web-*"}), sel("new", "web", map[string]string{"app": "web-?"}), []string{"old web"}},
		{"a label the old selector does not require", sel("old", "web", nil), sel("new", "web", map[string]string{"app": "*"}), []string{"old web"}},
		{"no label covers any", sel("old", "web", map[string]string{"app": "web"}), sel("new", "web", nil), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Analyze(Input{Changes: []Change{{Address: "old", Before: tc.before}, {Address: "new", After: tc.after}}})
			var lost []string
			for _, s := range r.CoverageLost {
				lost = append(lost, s.Profile+" "+s.Selector.Namespace)
			}
			if diff := cmp.Diff(tc.wantLost, lost); diff != "" {
				t.Errorf("coverage lost (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWorstOrderPerWorkload: a create-before-destroy pair that takes the pods
// comes after the other creations in the workload's worst order.
func TestWorstOrderPerWorkload(t *testing.T) {
	r := Analyze(Input{
		Changes: []Change{
			{Address: "a", Before: profile("a", "x")},
			{Address: "b", After: profile("b", "y")},
			{Address: "c", Before: profile("c", "z"), After: profile("c2", "z", "x"), CreateBeforeDestroy: true},
		},
		Workloads:  []Workload{workload("x", "app", nil)},
		NodeGroups: true,
	})
	if w := r.Workloads[0]; w.Uncovered != 3 {
		t.Errorf("uncovered for %d operations, want 3 (delete a, create b, then create c2)", w.Uncovered)
	}
}

func TestBareAndScheduledKinds(t *testing.T) {
	pod := workload("web", "solo", nil)
	pod.Ref.Kind = "Pod"
	cron := workload("web", "nightly", nil)
	cron.Ref.Kind = "CronJob"
	r := Analyze(Input{
		Changes:    []Change{{Address: "web", Before: profile("web", "web")}, {Address: "new", After: profile("new", "web")}},
		Workloads:  []Workload{pod, cron},
		NodeGroups: true,
	})
	if w := r.Workloads[0]; w.After.Where != Gone || w.RestartNeeded {
		t.Errorf("bare pod: %+v", w)
	}
	if w := r.Workloads[1]; w.RestartNeeded || w.Matched != "new" {
		t.Errorf("CronJob: %+v", w)
	}
}

func TestUnknownLeftOut(t *testing.T) {
	r := Analyze(Input{Changes: []Change{{Address: "j", After: &fargate.Profile{Name: "jobs"}, Unknown: true}}})
	if len(r.Steps) != 0 || len(r.Unknown) != 1 {
		t.Errorf("steps %v unknown %v", r.Steps, r.Unknown)
	}
	if ids := Findings(Input{}, r, "p.json"); len(ids) != 1 || ids[0].Rule.ID != "PL008" {
		t.Errorf("findings %+v", ids)
	}
}

// TestSafeTimeline replays the safe sequence of TestTimingAndSafeSequence's
// change: the pods of a deleted profile move to the new one when restarted
// in phase 1, before their profile goes; the pods of b, replaced in place,
// ride the bridge while b is deleted and created again; a bare pod of a
// deleted profile that nothing covers is gone; nothing else moves.
func TestSafeTimeline(t *testing.T) {
	bare := Workload{Ref: object.Ref{APIVersion: "v1", Kind: "Pod", Namespace: "x", Name: "lone"}, Namespace: "x"}
	r := Analyze(Input{
		Changes: []Change{
			{Address: "a", Before: profile("a", "a")},
			{Address: "b", Before: profile("b", "b"), After: profile("b", "b", "c")},
			{Address: "n", After: profile("n", "a")},
			{Address: "x", Before: profile("x", "x")},
		},
		Unchanged:  []fargate.Profile{*profile("k", "k")},
		Workloads:  []Workload{workload("a", "a", nil), workload("b", "b", nil), workload("k", "k", nil), bare},
		NodeGroups: true,
		Durations:  Durations{Create: time.Minute, Delete: 10 * time.Minute},
	})
	var steps []string
	for _, s := range r.Safe.Steps {
		steps = append(steps, fmt.Sprintf("%s %s %v-%v", s.Kind, s.Profile, s.Start, s.End))
	}
	want := []string{
		"create n 0s-1m0s", "create b-bridge 1m0s-2m0s", // phase 1
		"delete a 2m0s-12m0s", "delete x 12m0s-22m0s", "delete b 22m0s-32m0s", // phase 2
		"create b 32m0s-33m0s", "delete b-bridge 33m0s-43m0s", // b again, the bridge gone
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("safe steps (-want +got):\n%s", diff)
	}
	if end := r.Safe.Steps[len(r.Safe.Steps)-1].End; end != r.Safe.Duration {
		t.Errorf("the steps end at %v, the safe sequence's duration is %v", end, r.Safe.Duration)
	}
	moves := map[string][]TimedPlacement{}
	for _, w := range r.Workloads {
		moves[w.Ref.Name] = w.Safe
	}
	wantMoves := map[string][]TimedPlacement{
		"a":    {{2 * time.Minute, fg("n")}},                                      // restarted after phase 1
		"b":    {{22 * time.Minute, fg("b-bridge")}, {33 * time.Minute, fg("b")}}, // stopped with b, restarted onto the new b
		"k":    nil,
		"lone": {{12 * time.Minute, Placement{Where: Gone}}},
	}
	if diff := cmp.Diff(wantMoves, moves); diff != "" {
		t.Errorf("safe placements (-want +got):\n%s", diff)
	}
}

// TestSafeTimelineBridges: two names deleted and created again; phase 2
// creates both again before the pods are restarted and the bridges go, as
// the sequence's commands do (one terraform apply, or eksctl create -f).
func TestSafeTimelineBridges(t *testing.T) {
	r := Analyze(Input{
		Changes: []Change{
			{Address: "p", Before: profile("p", "p"), After: profile("p", "p", "q")},
			{Address: "r", Before: profile("r", "r"), After: profile("r", "r", "s")},
		},
		Workloads:  []Workload{workload("p", "p", nil), workload("r", "r", nil)},
		NodeGroups: true,
		Durations:  Durations{Create: time.Minute, Delete: 10 * time.Minute},
	})
	var steps []string
	for _, s := range r.Safe.Steps {
		steps = append(steps, fmt.Sprintf("%s %s %v", s.Kind, s.Profile, s.Start))
	}
	want := []string{
		"create p-bridge 0s", "create r-bridge 1m0s",
		"delete p 2m0s", "delete r 12m0s",
		"create p 22m0s", "create r 23m0s",
		"delete p-bridge 24m0s", "delete r-bridge 34m0s",
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("safe steps (-want +got):\n%s", diff)
	}
	for _, w := range r.Workloads {
		name := w.Ref.Name
		// Each onto its bridge as its name is deleted; back, bridge by
		// bridge, once the names exist again: r after p's bridge is gone.
		at := map[string][2]time.Duration{"p": {2 * time.Minute, 24 * time.Minute}, "r": {12 * time.Minute, 34 * time.Minute}}[name]
		wantMoves := []TimedPlacement{{at[0], fg(name + "-bridge")}, {at[1], fg(name)}}
		if diff := cmp.Diff(wantMoves, w.Safe); diff != "" {
			t.Errorf("%s through the safe sequence (-want +got):\n%s", name, diff)
		}
	}
}
