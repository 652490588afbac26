// Package plan simulates a change of Fargate profiles the way EKS carries it
// out: one create or delete at a time per cluster, in the worst order the
// tool applying it may choose, with pods placed only when they are created.
// It tells, workload by workload, where the pods are before, during and after
// the change, and what sequence of operations keeps them on Fargate. It does
// no I/O.
package plan

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
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
	if p.Where == OnEC2 {
		return "EC2 nodes"
	}
	return "Pending"
}

// WorkloadPlan is what happens to one workload.
type WorkloadPlan struct {
	Workload
	Before Placement
	// Stopped lists the steps (indexes into Result.Steps) that stop the
	// workload's pods; the pods are recreated at once where Moves says.
	Stopped []int
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
	// Matched is the profile new pods would get after the change, "" when none.
	Matched string
	// RestartNeeded is true when the pods sit off Fargate (EC2 or Pending)
	// after the change although a profile now matches them: only recreating
	// them (kubectl rollout restart) brings them to Fargate.
	RestartNeeded bool
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

// SafeSequence is the two-phase change: create and wait, then delete.
type SafeSequence struct {
	// Create are the profiles to create first, in any order.
	Create []Change
	// Renamed lists replacements whose new profile keeps the old name: EKS
	// refuses a second profile of the same name, so the new one needs another
	// name for the two to coexist.
	Renamed []string
	// Delete are the profiles to delete once every created one is ACTIVE.
	Delete []Change
	// Restart are the workloads whose pods must be recreated afterwards.
	Restart []WorkloadPlan
}

// Analyze simulates the change in the worst order and returns what happens.
func Analyze(in Input) Result {
	d := in.Durations
	if d.Create == 0 && d.Delete == 0 {
		d = DefaultDurations
	}
	var r Result
	r.Steps = worstOrder(in.Changes, d)
	if n := len(r.Steps); n > 0 {
		r.Duration = r.Steps[n-1].End
	}
	before := append(slices.Clone(in.Unchanged), profilesOf(in.Changes, func(c Change) *fargate.Profile { return c.Before })...)
	after := append(slices.Clone(in.Unchanged), profilesOf(in.Changes, func(c Change) *fargate.Profile { return c.After })...)
	for _, w := range in.Workloads {
		r.Workloads = append(r.Workloads, simulate(w, before, r.Steps, in, after))
	}
	r.CoverageLost = uncovered(profilesOf(in.Changes, func(c Change) *fargate.Profile { return c.Before }), after)
	r.CoverageGained = uncovered(profilesOf(in.Changes, func(c Change) *fargate.Profile { return c.After }), before)
	r.Gaps = gaps(before, r.Steps, in.Changes)
	r.Safe = safe(in.Changes, r.Workloads)
	return r
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

// worstOrder lays the operations out one at a time in the order that keeps
// pods off Fargate longest among those the tool may choose: every deletion
// that need not wait for a creation first (plain deletions, and replacements
// that destroy first), then each create-before-destroy replacement (its
// creation, then its deletion), then every other creation. Within a group the
// plan's order is kept.
func worstOrder(changes []Change, d Durations) []Step {
	var deletes, pairs, creates []Step
	for _, c := range changes {
		switch {
		case c.Before != nil && c.After != nil && c.CreateBeforeDestroy:
			pairs = append(pairs, Step{Kind: Create, Profile: c.After.Name, Address: c.Address}, Step{Kind: Delete, Profile: c.Before.Name, Address: c.Address})
		default:
			if c.Before != nil {
				deletes = append(deletes, Step{Kind: Delete, Profile: c.Before.Name, Address: c.Address})
			}
			if c.After != nil {
				creates = append(creates, Step{Kind: Create, Profile: c.After.Name, Address: c.Address})
			}
		}
	}
	steps := slices.Concat(deletes, pairs, creates)
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

// simulate replays the steps for one workload. A deletion stops the pods of
// the profile being deleted (PodDisruptionBudgets are ignored) and their
// controller recreates them at once: EKS's webhook then places them with the
// profiles ACTIVE at that moment, or they go to EC2 nodes or stay Pending. A
// creation moves nothing: a profile applies only to pods created after it is
// ACTIVE.
func simulate(w Workload, before []fargate.Profile, steps []Step, in Input, after []fargate.Profile) WorkloadPlan {
	wp := WorkloadPlan{Workload: w}
	offFargate := Placement{Where: Pending}
	if in.NodeGroups {
		offFargate = Placement{Where: OnEC2}
	}
	place := func(active []fargate.Profile) Placement {
		if w.OffFargate != "" {
			return offFargate
		}
		if c := fargate.Choose(active, w.Namespace, w.Labels); c.Profile != nil {
			return Placement{Where: OnFargate, Profile: c.Profile.Name}
		}
		return offFargate
	}
	active := slices.Clone(before)
	wp.Before = place(active)
	cur := wp.Before
	lostAt := -1
	for i, s := range steps {
		switch s.Kind {
		case Delete:
			// The oldest profile of that name: a replacement created first
			// under the same name (which EKS refuses, PL006) is not the one deleted.
			if i := slices.IndexFunc(active, func(p fargate.Profile) bool { return p.Name == s.Profile }); i >= 0 {
				active = slices.Delete(active, i, i+1)
			}
			if cur.Where == OnFargate && cur.Profile == s.Profile {
				cur = place(active)
				wp.Stopped = append(wp.Stopped, i)
				wp.Moves = append(wp.Moves, cur)
				if cur.Where != OnFargate && lostAt < 0 {
					lostAt = i
				}
			}
		case Create:
			if p := profileNamed(in.Changes, s.Profile); p != nil {
				active = append(active, *p)
			}
			if lostAt >= 0 && wp.Uncovered == 0 && place(active).Where == OnFargate {
				wp.Uncovered = i - lostAt + 1
				wp.UncoveredFor = s.End - steps[lostAt].Start
			}
		}
	}
	if lostAt >= 0 && wp.Uncovered == 0 {
		wp.Uncovered = len(steps) - lostAt
		wp.UncoveredFor = steps[len(steps)-1].End - steps[lostAt].Start
	}
	wp.After = cur
	if m := place(after); m.Where == OnFargate {
		wp.Matched = m.Profile
	}
	wp.RestartNeeded = wp.After.Where != OnFargate && wp.Matched != ""
	return wp
}

func profileNamed(changes []Change, name string) *fargate.Profile {
	for _, c := range changes {
		if c.After != nil && c.After.Name == name {
			return c.After
		}
	}
	return nil
}

// gaps replays the steps on the selectors of each deleted profile: a
// selector that no ACTIVE profile covers once its profile is deleted, and
// that a later creation covers again, has a gap. (One covered by nothing
// after the change is coverage lost, not a gap.)
func gaps(before []fargate.Profile, steps []Step, changes []Change) []Gap {
	var out []Gap
	active := slices.Clone(before)
	var open []Gap
	for i, s := range steps {
		switch s.Kind {
		case Delete:
			j := slices.IndexFunc(active, func(p fargate.Profile) bool { return p.Name == s.Profile })
			if j < 0 {
				continue
			}
			gone := active[j]
			active = slices.Delete(active, j, j+1)
			for _, sel := range gone.Selectors {
				if !coveredBy(sel, active) {
					open = append(open, Gap{Selector: Selector{Profile: gone.Name, Selector: sel}, From: i})
				}
			}
		case Create:
			if p := profileNamed(changes, s.Profile); p != nil {
				active = append(active, *p)
			}
			open = slices.DeleteFunc(open, func(g Gap) bool {
				if !coveredBy(g.Selector.Selector, active) {
					return false
				}
				g.To, g.For = i, s.End-steps[g.From].Start
				out = append(out, g)
				return true
			})
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
// selects: its namespace pattern matches s's namespace (as text, so a
// wildcard covers the same wildcard), and each of its labels is one of s's.
func coveredBy(s fargate.Selector, by []fargate.Profile) bool {
	for _, p := range by {
		for _, t := range p.Selectors {
			if !fargate.Wildcard(t.Namespace, s.Namespace) {
				continue
			}
			ok := true
			for k, v := range t.Labels {
				found := false
				for sk, sv := range s.Labels {
					found = found || (fargate.Wildcard(k, sk) && fargate.Wildcard(v, sv))
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

// safe returns the two-phase sequence: create every new profile first (under
// a new name where a replacement keeps the old one), wait until they are
// ACTIVE, then delete the old ones; and restart what already moved.
func safe(changes []Change, workloads []WorkloadPlan) SafeSequence {
	var s SafeSequence
	for _, c := range changes {
		if c.After != nil {
			s.Create = append(s.Create, c)
			if c.Before != nil && c.Before.Name == c.After.Name {
				s.Renamed = append(s.Renamed, c.After.Name)
			}
		}
		if c.Before != nil {
			s.Delete = append(s.Delete, c)
		}
	}
	for _, w := range workloads {
		if w.RestartNeeded || (w.Before.Where != OnFargate && w.Matched != "") {
			s.Restart = append(s.Restart, w)
		}
	}
	return s
}

// RestartCommand is the command that recreates a workload's pods so that
// EKS places them again.
func RestartCommand(w Workload) string {
	ns := cmp.Or(w.Ref.Namespace, w.Namespace)
	switch w.Ref.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		return fmt.Sprintf("kubectl rollout restart -n %s %s/%s", ns, strings.ToLower(w.Ref.Kind), w.Ref.Name)
	case "Rollout":
		return fmt.Sprintf("kubectl argo rollouts restart -n %s %s", ns, w.Ref.Name)
	case "Pod":
		return fmt.Sprintf("kubectl delete pod -n %s %s  # then create it again", ns, w.Ref.Name)
	case "Job", "CronJob":
		return fmt.Sprintf("# %s/%s: pods of runs already started keep their placement; the next runs go to Fargate", w.Ref.Kind, w.Ref.Name)
	}
	return fmt.Sprintf("kubectl delete pods -n %s -l %s  # %s/%s recreates them", ns, selectorString(w.Labels), w.Ref.Kind, w.Ref.Name)
}

func selectorString(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + labels[k]
	}
	return strings.Join(parts, ",")
}
