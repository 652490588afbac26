package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// The findings of `fargatekit plan`. They are rules in every way but one:
// the simulation, not the engine, produces them.
var (
	LeavesFargate = &rules.Rule{
		ID: "PL001", Name: "leaves-fargate", Category: rules.CategoryAvailability, Severity: rules.Blocker,
		Summary: "The change stops the workload's pods and they come back off Fargate.",
		Doc: "Deleting a Fargate profile stops its pods (PodDisruptionBudgets are ignored). Their controller recreates " +
			"them at once, and EKS places them with the profiles ACTIVE at that moment: with none matching, they go to " +
			"EC2 nodes, or stay Pending on a cluster without any. A profile created later does not move them back, " +
			"because a profile applies only to pods created after it is ACTIVE. The operations are simulated one at a " +
			"time, in the worst order the tool may choose (every deletion that need not wait before every creation).",
		Remediation: "Apply in two phases: create the new profiles, wait until they are ACTIVE, then delete the old ones " +
			"(the plan prints the exact sequence). If the change already ran, restart the workload " +
			"(`kubectl rollout restart`) once a profile matches it.",
	}
	StaysOffFargate = &rules.Rule{
		ID: "PL002", Name: "stays-off-fargate", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "A new profile matches the workload, but its running pods stay where they are until restarted.",
		Doc: "EKS's Fargate webhook places a pod only when the pod is created. A workload whose pods run on EC2 nodes " +
			"(or sit Pending) before the change keeps them there after a matching profile becomes ACTIVE.",
		Remediation: "Once the profile is ACTIVE, restart the workload: `kubectl rollout restart -n <namespace> <kind>/<name>`.",
	}
	MovesProfile = &rules.Rule{
		ID: "PL003", Name: "moves-profile", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "The change stops the workload's pods and they come back on another Fargate profile.",
		Doc: "Deleting the profile that placed a workload's pods stops them all at once (PodDisruptionBudgets are " +
			"ignored), and they are recreated on another ACTIVE profile that matches. The workload stays on Fargate " +
			"but every replica restarts together, possibly in other subnets and with another pod execution role.",
		Remediation: "Accept the restart in a maintenance window, or roll the workload onto the new profile yourself " +
			"(`kubectl rollout restart`) before deleting the old one.",
	}
	CoverageLost = &rules.Rule{
		ID: "PL004", Name: "coverage-lost", Category: rules.CategoryConfig, Severity: rules.Warning,
		Summary: "A selector of a removed profile is not covered by any profile after the change.",
		Doc: "Pods that this selector placed on Fargate will be placed on EC2 nodes (or stay Pending) from now on. " +
			"Coverage compares selector texts: a selector covers another when its namespace pattern matches the other's " +
			"namespace and each of its labels is among the other's, wildcards included.",
		Remediation: "Keep a profile selecting these pods, or confirm that they are meant to leave Fargate.",
	}
	CoverageGained = &rules.Rule{
		ID: "PL005", Name: "coverage-gained", Category: rules.CategoryConfig, Severity: rules.Info,
		Summary:     "A selector of a new profile selects pods no profile selected before.",
		Doc:         "New pods matching this selector go to Fargate; pods already running elsewhere stay there until restarted.",
		Remediation: "Check with `fargatekit check --profiles` that the newly covered workloads can run on Fargate.",
	}
	CoverageGap = &rules.Rule{
		ID: "PL007", Name: "coverage-gap", Category: rules.CategoryAvailability, Severity: rules.Blocker,
		Summary: "In the worst order, a selector is covered by no ACTIVE profile for part of the change.",
		Doc: "The profiles after the change cover the selector, but not while the change runs: its profile is deleted " +
			"before the profile that takes over is ACTIVE. Every pod it placed on Fargate is stopped and recreated on EC2 " +
			"nodes or left Pending, and stays there after the change. This is reported from the profiles alone, for the " +
			"selectors whose workloads are not in the input (those get leaves-fargate instead).",
		Remediation: "Apply in two phases: create the new profiles, wait until they are ACTIVE, then delete the old ones " +
			"(the plan prints the exact sequence).",
	}
	SameNameFirst = &rules.Rule{
		ID: "PL006", Name: "create-before-destroy-same-name", Category: rules.CategoryConfig, Severity: rules.Blocker,
		Summary: "A create-before-destroy replacement keeps the profile's name, which EKS refuses.",
		Doc: "EKS refuses a second profile with the name of an existing one (`ResourceInUseException: A Fargate Profile " +
			"already exists with this name in this cluster.`), so creating the replacement first fails the apply.",
		Remediation: "Give the replacement a new name (for example a suffix), or let Terraform destroy first and accept " +
			"that the pods leave Fargate for a while (PL001).",
	}
)

// Rules lists the plan's rules, for documentation.
var Rules = []*rules.Rule{LeavesFargate, StaysOffFargate, MovesProfile, CoverageLost, CoverageGained, SameNameFirst, CoverageGap}

// Findings turns a simulation into findings. source names the change (the
// plan file) for findings about profiles rather than workloads.
func Findings(in Input, r Result, source string) []rules.Finding {
	var out []rules.Finding
	add := func(rule *rules.Rule, ref object.Ref, src object.Source, format string, args ...any) {
		out = append(out, rules.Finding{Rule: rule, Severity: rule.Severity, Object: ref, Source: src, Message: fmt.Sprintf(format, args...)})
	}
	for _, w := range r.Workloads {
		switch {
		case w.Uncovered > 0:
			step := r.Steps[w.Stopped[0]]
			msg := fmt.Sprintf("deleting profile %s (operation %d of %d) stops the pods and they are recreated %s; no profile matches them for %d operation(s), about %s",
				step.Profile, w.Stopped[0]+1, len(r.Steps), placedText(w.Moves[0]), w.Uncovered, minutes(w.UncoveredFor))
			if w.RestartNeeded {
				msg += fmt.Sprintf("; after the change they stay there although profile %s matches them, until restarted", w.Matched)
			} else if w.Matched == "" {
				msg += "; no profile matches them after the change"
			}
			add(LeavesFargate, w.Ref, w.Source, "%s", msg)
		case len(w.Moves) > 0:
			add(MovesProfile, w.Ref, w.Source, "deleting profile %s stops every pod at once (PodDisruptionBudgets are ignored); they are recreated on profile %s",
				r.Steps[w.Stopped[0]].Profile, w.After.Profile)
		case w.RestartNeeded:
			add(StaysOffFargate, w.Ref, w.Source, "profile %s matches the pods after the change, but they stay %s until restarted", w.Matched, placedText(w.After))
		}
	}
	profileRef := func(name string) object.Ref {
		return object.Ref{APIVersion: "eks.amazonaws.com", Kind: "FargateProfile", Name: name}
	}
	for _, s := range r.CoverageLost {
		add(CoverageLost, profileRef(s.Profile), object.Source{File: source}, "selector %s of profile %s is not covered after the change", selectorText(s), s.Profile)
	}
	for _, s := range r.CoverageGained {
		add(CoverageGained, profileRef(s.Profile), object.Source{File: source}, "selector %s of profile %s selects pods that no profile selected before", selectorText(s), s.Profile)
	}
	for _, g := range r.Gaps {
		if placedBy(r.Workloads, g.Selector) {
			continue // the workload's own finding tells it
		}
		add(CoverageGap, profileRef(g.Profile), object.Source{File: source},
			"selector %s loses Fargate from operation %d (delete %s) to operation %d (create %s), about %s: pods it placed are recreated off Fargate and stay there",
			selectorText(g.Selector), g.From+1, r.Steps[g.From].Profile, g.To+1, r.Steps[g.To].Profile, minutes(g.For))
	}
	for _, c := range in.Changes {
		if c.CreateBeforeDestroy && c.Before != nil && c.After != nil && c.Before.Name == c.After.Name {
			add(SameNameFirst, profileRef(c.After.Name), object.Source{File: source},
				"%s replaces profile %s with create_before_destroy under the same name: EKS refuses the second profile", c.Address, c.After.Name)
		}
	}
	return out
}

// placedBy reports whether an input workload was placed by the selector's profile and matches the selector.
func placedBy(ws []WorkloadPlan, s Selector) bool {
	for _, w := range ws {
		if w.Before.Where == OnFargate && w.Before.Profile == s.Profile && s.Selector.Matches(w.Namespace, w.Labels) {
			return true
		}
	}
	return false
}

func placedText(p Placement) string {
	switch p.Where {
	case OnEC2:
		return "on EC2 nodes"
	case Pending:
		return "Pending (no EC2 nodes)"
	}
	return "on Fargate profile " + p.Profile
}

func selectorText(s Selector) string {
	var b strings.Builder
	b.WriteString("namespace=" + s.Selector.Namespace)
	if l := selectorString(s.Selector.Labels); l != "" {
		b.WriteString(" labels=" + l)
	}
	return b.String()
}

func minutes(d time.Duration) string {
	return fmt.Sprintf("%.0f min", d.Minutes())
}
