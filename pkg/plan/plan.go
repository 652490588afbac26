// Package plan simulates a change of Fargate profiles the way EKS carries it
// out: one create or delete at a time per cluster, in the worst order the
// tool applying it may choose, with pods placed only when they are created.
// It tells, workload by workload, where the pods are before, during and after
// the change, and what sequence of operations keeps them on Fargate. It does
// no I/O.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package plan

import (
	"fmt"
	"slices"
	"time"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Change is one profile in a change: created (Before nil), deleted (After
// nil) or replaced (both; profiles are immutable, so any other change of a
// profile replaces it).
type Change struct {
	// Address names the change in the tool's terms: a Terraform resource
	// address, or the profile name for eksctl.
	Address string
	Before  *fargate.Profile
	After   *fargate.Profile
	// CreateBeforeDestroy is true for a replacement whose new profile is
	// created before the old one is deleted.
	CreateBeforeDestroy bool
	// Unknown is true when the new profile's selectors are known only after
	// the change is applied: the profile is then left out of the analysis.
	Unknown bool
}

// Durations are how long one serialized profile operation takes.
type Durations struct {
	Create time.Duration
	Delete time.Duration
}

// DefaultDurations are typical durations. AWS documents none: profile
// creation takes minutes, deletion has been reported to take 20 minutes and
// more (containers-roadmap#1211).
var DefaultDurations = Durations{Create: 3 * time.Minute, Delete: 5 * time.Minute}

// Workload is what the plan needs to know of an object that creates pods.
type Workload struct {
	Ref       object.Ref
	Source    object.Source
	Namespace string
	Labels    map[string]string
	// OffFargate is why the pods never go to Fargate whatever the profiles
	// (the compute-type annotation, node affinity); empty otherwise.
	OffFargate string
}

// NamespacedRef is the workload's reference with its namespace filled in.
func (w Workload) NamespacedRef() object.Ref {
	r := w.Ref
	r.Namespace = w.Namespace
	return r
}

// Input is a change and the cluster it applies to.
type Input struct {
	Changes []Change
	// Unchanged are the profiles the change leaves alone.
	Unchanged []fargate.Profile
	Workloads []Workload
	// NodeGroups is true when the cluster has EC2 nodes for pods no profile takes.
	NodeGroups bool
	Durations  Durations
}

// Kind is a kind of operation.
type Kind string

// Operation kinds.
const (
	Create Kind = "create"
	Delete Kind = "delete"
)

// Step is one serialized profile operation.
type Step struct {
	Kind    Kind
	Profile string
	Address string
	// Change is the index of the change in Input.Changes; -1 in the steps
	// of the safe sequence.
	Change int
	// Start and End are offsets from the start of the change.
	Start, End time.Duration
}

// Where a workload's pods are.
type Where string

// Places of pods.
const (
	OnFargate Where = "fargate"
	OnEC2     Where = "ec2"
	Pending   Where = "pending"
	// Gone: a bare pod that was stopped; no controller recreates it.
	Gone Where = "gone"
)

// Placement is where a workload's pods are at one moment.
type Placement struct {
	Where   Where  `json:"where"`
	Profile string `json:"profile,omitempty"`
}

func (p Placement) String() string {
	if p.Where == OnFargate {
		return "Fargate (profile " + p.Profile + ")"
	}
	switch p.Where {
	case OnEC2:
		return "EC2 nodes"
	case Gone:
		return "gone"
	}
	return "Pending"
}

// WorkloadPlan is what happens to one workload.
type WorkloadPlan struct {
	Workload
	Before Placement
	// StoppedAt are the starts of the steps that stop the workload's pods,
	// in its own worst order (the order whose first deletion is its
	// profile's); the pods are recreated at once where Moves says.
	StoppedAt []time.Duration
	// Moves are the placements the pods are recreated with, one per stop.
	Moves []Placement
	// Uncovered is how many operations pass from the first stop that lost
	// Fargate until a profile that matches the pods is ACTIVE again (0: never
	// uncovered; the total number of remaining steps when nothing covers them after).
	Uncovered int
	// UncoveredFor is how long that lasts in the worst order.
	UncoveredFor time.Duration
	// After is where the pods are when the change is done.
	After Placement
	// Safe are the placements the pods take through the safe sequence, in
	// order (none: they stay where they were before).
	Safe []TimedPlacement
	// Matched is the profile new pods would get after the change, "" when none.
	Matched string
	// RestartNeeded is true when the pods sit off Fargate (EC2 or Pending)
	// after the change although a profile now matches them: only recreating
	// them (kubectl rollout restart) brings them to Fargate.
	RestartNeeded bool
	// Pinned names the profile the pod template asks for with the
	// eks.amazonaws.com/fargate-profile label when the change deletes it.
	Pinned string
}

// Selector is a profile selector, named by its profile.
type Selector struct {
	Profile  string           `json:"profile"`
	Selector fargate.Selector `json:"selector"`
}

// Result is the simulation of a change.
type Result struct {
	Steps     []Step
	Duration  time.Duration
	Workloads []WorkloadPlan
	// CoverageLost are selectors of removed profiles that no profile covers after the change.
	CoverageLost []Selector
	// CoverageGained are selectors of new profiles that no profile covered before.
	CoverageGained []Selector
	// Gaps are selectors of deleted profiles that some profile covers after
	// the change but none covers for a while during it.
	Gaps []Gap
	// Unknown are the changes left out because their selectors are known only after apply.
	Unknown []Change
	// Safe is the sequence of operations that keeps pods on Fargate.
	Safe SafeSequence
}

// Gap is a stretch of the change during which no ACTIVE profile covers a
// selector: the pods it placed are stopped and recreated off Fargate, and
// stay there.
type Gap struct {
	Selector
	// From is the step that deletes the selector's profile; To the step whose
	// creation covers the selector again.
	From, To int
	// For is how long the gap lasts in the worst order.
	For time.Duration
}

// SafeSequence is the change made so that pods stay on Fargate: create the
// new profiles, wait until they are ACTIVE, move the pods, then delete the
// old profiles.
type SafeSequence struct {
	// Create are the new profiles to create first (their names are new).
	Create []Change
	// Bridges are the new profiles that reuse the name of a profile the
	// change deletes: EKS refuses a second profile of one name, so a
	// temporary profile with the old selectors carries the pods while the
	// name is deleted and created again.
	Bridges []Bridge
	// Move are the workloads that a new profile would take once phase 1 is
	// done: restarting them then moves them at the pace of their rollout
	// (deleting their profile stops them all at once, ignoring PodDisruptionBudgets).
	Move []WorkloadPlan
	// Delete are the profiles to delete once every created one is ACTIVE.
	Delete []Change
	// Restart are the workloads left off Fargate if the change runs as planned.
	Restart []WorkloadPlan
	// Duration is how long the safe sequence's profile operations take.
	Duration time.Duration
	// Steps are its profile operations in order, timed: phase 1's
	// creations, phase 2's deletions, then each bridged name created again
	// and its temporary profile deleted. Their Change is -1.
	Steps []Step
}

// TimedPlacement is where a workload's pods are from At on.
type TimedPlacement struct {
	At time.Duration
	Placement
}

// Bridge is a name deleted and created again.
type Bridge struct {
	// Old is the profile deleted; its selectors are the bridge's.
	Old fargate.Profile
	// New is the change that creates the profile again.
	New Change
	// Replacement is true when one change both deletes and creates it (a
	// replacement in place), false when a deletion and a creation at
	// another address share the name.
	Replacement bool
}

// BridgeName is the name of the temporary profile of a bridge.
func (b Bridge) BridgeName() string { return b.Old.Name + "-bridge" }

// Analyze simulates the change in the worst order and returns what happens.
func Analyze(in Input) Result {
	d := in.Durations
	if d.Create == 0 && d.Delete == 0 {
		d = DefaultDurations
	}
	var r Result
	var changes []Change
	for _, c := range in.Changes {
		if c.Unknown {
			r.Unknown = append(r.Unknown, c)
			continue
		}
		changes = append(changes, c)
	}
	never := func(*fargate.Profile) bool { return false }
	r.Steps = timed(worstOrder(changes, never, never), d)
	if n := len(r.Steps); n > 0 {
		r.Duration = r.Steps[n-1].End
	}
	before := append(slices.Clone(in.Unchanged), profilesOf(changes, func(c Change) *fargate.Profile { return c.Before })...)
	after := append(slices.Clone(in.Unchanged), profilesOf(changes, func(c Change) *fargate.Profile { return c.After })...)
	for _, w := range in.Workloads {
		r.Workloads = append(r.Workloads, simulate(w, in, changes, before, after, d))
	}
	r.CoverageLost = uncovered(profilesOf(changes, func(c Change) *fargate.Profile { return c.Before }), after)
	r.CoverageGained = uncovered(profilesOf(changes, func(c Change) *fargate.Profile { return c.After }), before)
	r.Gaps = gaps(in, changes, d)
	r.Safe = safe(changes, before, r.Workloads, d)
	for i, moves := range safeTimeline(&r.Safe, in, before, r.Workloads, d) {
		r.Workloads[i].Safe = moves
	}
	return r
}

// safeTimeline replays the safe sequence as its commands run it: phase 1
// creates the new profiles and the bridges; the workloads of Move are
// restarted, and EKS places their new pods with the profiles ACTIVE then;
// phase 2 deletes the old profiles, each deletion stopping the pods its
// profile still places (recreated at once, as in simulate); then each
// bridged name is created again; then, bridge by bridge, the pods of the
// old profile are restarted onto it and the bridge is deleted. Restarts take no time of
// their own here: they run at the pace of the rollouts, between profile
// operations. It sets s.Steps and returns, per workload, where its pods go
// and when.
func safeTimeline(s *SafeSequence, in Input, before []fargate.Profile, workloads []WorkloadPlan, d Durations) [][]TimedPlacement {
	active := slices.Clone(before)
	var t time.Duration
	cur := make([]Placement, len(workloads))
	places := make([]func([]fargate.Profile) Placement, len(workloads))
	index := map[object.Ref]int{}
	for i, w := range workloads {
		cur[i], places[i] = w.Before, placer(w.Workload, in)
		index[w.NamespacedRef()] = i
	}
	out := make([][]TimedPlacement, len(workloads))
	move := func(i int, p Placement) {
		if p != cur[i] {
			cur[i] = p
			out[i] = append(out[i], TimedPlacement{At: t, Placement: p})
		}
	}
	restart := func(w WorkloadPlan) {
		if i, ok := index[w.NamespacedRef()]; ok && w.Ref.Kind != "Pod" {
			move(i, places[i](active))
		}
	}
	op := func(kind Kind, p fargate.Profile, address string) {
		step := Step{Kind: kind, Profile: p.Name, Address: address, Change: -1, Start: t}
		if kind == Create {
			active = append(active, p)
			t += d.Create
		} else {
			active = slices.DeleteFunc(slices.Clone(active), func(a fargate.Profile) bool { return a.Name == p.Name })
			for i, w := range workloads { // stopped as the deletion starts
				if cur[i].Where == OnFargate && cur[i].Profile == p.Name {
					move(i, stopped(w.Workload, places[i], active))
				}
			}
			t += d.Delete
		}
		step.End = t
		s.Steps = append(s.Steps, step)
	}
	bridge := func(b Bridge) fargate.Profile {
		p := b.Old
		p.Name = b.BridgeName()
		return p
	}
	for _, c := range s.Create {
		op(Create, *c.After, c.Address)
	}
	for _, b := range s.Bridges {
		op(Create, bridge(b), "")
	}
	for _, w := range s.Move {
		restart(w)
	}
	for _, c := range s.Delete {
		op(Delete, *c.Before, c.Address)
	}
	for _, b := range s.Bridges {
		if b.Replacement {
			op(Delete, b.Old, b.New.Address)
		}
	}
	for _, b := range s.Bridges { // phase 2 creates every bridged name again
		op(Create, *b.New.After, b.New.Address)
	}
	for _, b := range s.Bridges {
		for _, w := range workloads {
			if w.Before.Where == OnFargate && w.Before.Profile == b.Old.Name {
				restart(w)
			}
		}
		op(Delete, bridge(b), "")
	}
	return out
}

func profilesOf(changes []Change, get func(Change) *fargate.Profile) []fargate.Profile {
	var out []fargate.Profile
	for _, c := range changes {
		if p := get(c); p != nil {
			out = append(out, *p)
		}
	}
	return out
}

// worstOrder lays the operations out one at a time in the worst order the
// tool may choose for one workload or selector. Profile resources do not
// depend on each other, so Terraform may apply them in any order; the order
// that keeps the pods off Fargate longest deletes first (the profile that
// placed them, first is true for it, before any other) and creates last what
// would take them back (covers is true for it). A create-before-destroy
// replacement keeps its creation before its deletion.
func worstOrder(changes []Change, first, covers func(*fargate.Profile) bool) []Step {
	var firstDel, dels, earlyPairs, latePairs, earlyCreates, lateCreates []Step
	for i, c := range changes {
		if c.Before != nil && c.After != nil && c.CreateBeforeDestroy {
			pair := []Step{{Kind: Create, Profile: c.After.Name, Address: c.Address, Change: i}, {Kind: Delete, Profile: c.Before.Name, Address: c.Address, Change: i}}
			if covers(c.After) {
				latePairs = append(latePairs, pair...)
			} else {
				earlyPairs = append(earlyPairs, pair...)
			}
			continue
		}
		if c.Before != nil {
			del := Step{Kind: Delete, Profile: c.Before.Name, Address: c.Address, Change: i}
			if first(c.Before) {
				firstDel = append(firstDel, del)
			} else {
				dels = append(dels, del)
			}
		}
		if c.After != nil {
			create := Step{Kind: Create, Profile: c.After.Name, Address: c.Address, Change: i}
			if covers(c.After) {
				lateCreates = append(lateCreates, create)
			} else {
				earlyCreates = append(earlyCreates, create)
			}
		}
	}
	return slices.Concat(firstDel, dels, earlyPairs, earlyCreates, latePairs, lateCreates)
}

// timed sets the steps' start and end offsets.
func timed(steps []Step, d Durations) []Step {
	var t time.Duration
	for i := range steps {
		steps[i].Start = t
		if steps[i].Kind == Create {
			t += d.Create
		} else {
			t += d.Delete
		}
		steps[i].End = t
	}
	return steps
}

// replay runs the steps on the profiles ACTIVE before the change and calls
// fn after each with the profiles ACTIVE then and, for a deletion, the
// profile deleted.
func replay(in Input, changes []Change, steps []Step, fn func(i int, s Step, active []fargate.Profile, deleted *fargate.Profile)) {
	type entry struct {
		p      fargate.Profile
		change int // -1: unchanged
	}
	var active []entry
	for _, p := range in.Unchanged {
		active = append(active, entry{p, -1})
	}
	for i, c := range changes {
		if c.Before != nil {
			active = append(active, entry{*c.Before, i})
		}
	}
	profiles := func() []fargate.Profile {
		out := make([]fargate.Profile, len(active))
		for i, e := range active {
			out[i] = e.p
		}
		return out
	}
	for i, s := range steps {
		var deleted *fargate.Profile
		c := changes[s.Change]
		switch s.Kind {
		case Delete:
			if j := slices.IndexFunc(active, func(e entry) bool { return e.change == s.Change && e.p.Name == c.Before.Name }); j >= 0 {
				deleted = &active[j].p
				active = slices.Delete(slices.Clone(active), j, j+1)
			}
		case Create:
			active = append(active, entry{*c.After, -2})
		}
		fn(i, s, profiles(), deleted)
	}
}

// placer returns where EKS's webhook sends a workload's new pods under the
// ACTIVE profiles: Fargate under the profile it chooses, else EC2 nodes when
// the cluster has some, else Pending.
func placer(w Workload, in Input) func(active []fargate.Profile) Placement {
	offFargate := Placement{Where: Pending}
	if in.NodeGroups {
		offFargate = Placement{Where: OnEC2}
	}
	return func(active []fargate.Profile) Placement {
		if w.OffFargate != "" {
			return offFargate
		}
		if c := fargate.Choose(active, w.Namespace, w.Labels); c.Profile != nil {
			return Placement{Where: OnFargate, Profile: c.Profile.Name}
		}
		return offFargate
	}
}

// stopped returns where a workload's pods go when a deletion stops them:
// recreated at once by their controller under the profiles ACTIVE then, or
// gone for a bare pod, which nothing recreates.
func stopped(w Workload, place func([]fargate.Profile) Placement, active []fargate.Profile) Placement {
	if w.Ref.Kind == "Pod" {
		return Placement{Where: Gone}
	}
	return place(active)
}

// simulate replays the change for one workload, in its own worst order. A
// deletion stops the pods of the profile being deleted (PodDisruptionBudgets
// are ignored) and their controller recreates them at once: EKS's webhook
// places them with the profiles ACTIVE at that moment, or they go to EC2
// nodes or stay Pending. A creation moves nothing: a profile applies only to
// pods created after it is ACTIVE.
func simulate(w Workload, in Input, changes []Change, before, after []fargate.Profile, d Durations) WorkloadPlan {
	wp := WorkloadPlan{Workload: w}
	place := placer(w, in)
	wp.Before = place(before)
	matches := func(p *fargate.Profile) bool { return w.OffFargate == "" && p.Matches(w.Namespace, w.Labels) }
	placedBy := func(p *fargate.Profile) bool { return wp.Before.Where == OnFargate && p.Name == wp.Before.Profile }
	steps := timed(worstOrder(changes, placedBy, matches), d)
	cur := wp.Before
	lostAt := -1
	replay(in, changes, steps, func(i int, s Step, active []fargate.Profile, deleted *fargate.Profile) {
		switch {
		case s.Kind == Delete && deleted != nil && cur.Where == OnFargate && cur.Profile == deleted.Name:
			cur = stopped(w, place, active)
			wp.StoppedAt = append(wp.StoppedAt, s.Start)
			wp.Moves = append(wp.Moves, cur)
			if cur.Where != OnFargate && lostAt < 0 {
				lostAt = i
			}
		case s.Kind == Create && lostAt >= 0 && wp.Uncovered == 0 && cur.Where != Gone && place(active).Where == OnFargate:
			wp.Uncovered = i - lostAt + 1
			wp.UncoveredFor = s.End - steps[lostAt].Start
		}
	})
	if lostAt >= 0 && wp.Uncovered == 0 {
		wp.Uncovered = len(steps) - lostAt
		wp.UncoveredFor = steps[len(steps)-1].End - steps[lostAt].Start
	}
	wp.After = cur
	if m := place(after); m.Where == OnFargate {
		wp.Matched = m.Profile
	}
	// A CronJob's next runs are placed anew; a bare pod is gone.
	wp.RestartNeeded = wp.After.Where != OnFargate && wp.After.Where != Gone && wp.Matched != "" && w.Ref.Kind != "CronJob"
	if pin := w.Labels[fargate.ProfileLabel]; pin != "" && slices.ContainsFunc(changes, func(c Change) bool {
		return c.Before != nil && c.Before.Name == pin && (c.After == nil || c.After.Name != pin)
	}) {
		wp.Pinned = pin
	}
	return wp
}

// gaps replays, for each selector of each deleted profile, its own worst
// order: a selector that no ACTIVE profile covers once its profile is
// deleted, and that a later creation covers again, has a gap. (One covered by
// nothing after the change is coverage lost, not a gap.)
func gaps(in Input, changes []Change, d Durations) []Gap {
	var out []Gap
	for _, c := range changes {
		if c.Before == nil {
			continue
		}
		for _, sel := range c.Before.Selectors {
			covers := func(p *fargate.Profile) bool { return coveredBy(sel, []fargate.Profile{*p}) }
			own := func(p *fargate.Profile) bool { return p.Name == c.Before.Name }
			steps := timed(worstOrder(changes, own, covers), d)
			g := Gap{Selector: Selector{Profile: c.Before.Name, Selector: sel}, From: -1}
			replay(in, changes, steps, func(i int, s Step, active []fargate.Profile, deleted *fargate.Profile) {
				switch {
				case s.Kind == Delete && deleted != nil && deleted.Name == c.Before.Name && g.From < 0 && !coveredBy(sel, active):
					g.From = i
				case s.Kind == Create && g.From >= 0 && g.To == 0 && coveredBy(sel, active):
					g.To, g.For = i, s.End-steps[g.From].Start
				}
			})
			if g.From >= 0 && g.To > 0 {
				out = append(out, g)
			}
		}
	}
	return out
}

// uncovered returns the selectors of from that no selector of by covers.
func uncovered(from, by []fargate.Profile) []Selector {
	var out []Selector
	for _, p := range from {
		for _, s := range p.Selectors {
			if !coveredBy(s, by) {
				out = append(out, Selector{Profile: p.Name, Selector: s})
			}
		}
	}
	return out
}

// coveredBy reports whether some selector of the profiles selects every pod s
// selects: its namespace pattern covers s's, and each of its labels covers
// one of s's (fargate.WildcardCovers).
func coveredBy(s fargate.Selector, by []fargate.Profile) bool {
	for _, p := range by {
		for _, t := range p.Selectors {
			if !fargate.WildcardCovers(t.Namespace, s.Namespace) {
				continue
			}
			ok := true
			for k, v := range t.Labels {
				found := false
				for sk, sv := range s.Labels {
					found = found || (fargate.WildcardCovers(k, sk) && fargate.WildcardCovers(v, sv))
				}
				ok = ok && found
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// safe returns the sequence that keeps pods on Fargate: create the new
// profiles (bridging the replacements that keep a name), wait until they are
// ACTIVE, move the pods a new profile takes, then delete the old profiles.
func safe(changes []Change, before []fargate.Profile, workloads []WorkloadPlan, d Durations) SafeSequence {
	var s SafeSequence
	deletedByName := map[string]*fargate.Profile{}
	for _, c := range changes {
		if c.Before != nil {
			deletedByName[c.Before.Name] = c.Before
		}
	}
	var created []fargate.Profile
	for _, c := range changes {
		inPlace := c.Before != nil && c.After != nil && c.Before.Name == c.After.Name
		switch old := deletedByName[nameOf(c.After)]; {
		case c.After == nil:
		case old != nil:
			s.Bridges = append(s.Bridges, Bridge{Old: *old, New: c, Replacement: inPlace})
		default:
			s.Create = append(s.Create, c)
			created = append(created, *c.After)
		}
		if c.Before != nil && !inPlace {
			s.Delete = append(s.Delete, c)
		}
	}
	both := append(slices.Clone(before), created...)
	for _, w := range workloads {
		if w.Before.Where != OnFargate || deletedByName[w.Before.Profile] == nil || w.OffFargate != "" {
			continue
		}
		if c := fargate.Choose(both, w.Namespace, w.Labels); c.Profile != nil && slices.ContainsFunc(created, func(p fargate.Profile) bool { return p.Name == c.Profile.Name }) {
			s.Move = append(s.Move, w)
		}
	}
	for _, w := range workloads {
		if w.RestartNeeded {
			s.Restart = append(s.Restart, w)
		}
	}
	// Each bridge creates the temporary profile and the profile again and
	// deletes the temporary one; an in-place replacement deletes the old one too.
	creates, deletes := len(s.Create), len(s.Delete)
	for _, b := range s.Bridges {
		creates += 2
		deletes++
		if b.Replacement {
			deletes++
		}
	}
	s.Duration = time.Duration(creates)*d.Create + time.Duration(deletes)*d.Delete
	return s
}

func nameOf(p *fargate.Profile) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// FormatDuration writes a duration in minutes: "23m", or "2m30s".
func FormatDuration(d time.Duration) string {
	if s := int(d.Seconds()) % 60; s != 0 {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), s)
	}
	return fmt.Sprintf("%dm", int(d.Minutes()))
}
