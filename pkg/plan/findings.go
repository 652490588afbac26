package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/compat"
	"k8s.io/apimachinery/pkg/labels"
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
		ID: "PL006", Name: "name-reused-first", Category: rules.CategoryConfig, Severity: rules.Blocker,
		Summary: "A profile is created under the name of one the change deletes, and may be created first, which EKS refuses.",
		Doc: "EKS refuses a second profile with the name of an existing one (`ResourceInUseException: A Fargate Profile " +
			"already exists with this name in this cluster.`). A create-before-destroy replacement that keeps the name " +
			"always creates first; a creation at another address (a renamed module key) that reuses the name of a " +
			"profile the change deletes may run first, since Terraform orders independent resources as it likes. " +
			"Either way the apply fails halfway.",
		Remediation: "Give the new profile a new name, or follow the plan's safe sequence, which carries the pods over a " +
			"temporary profile while the name is deleted and created again.",
	}
	UnknownAfterApply = &rules.Rule{
		ID: "PL008", Name: "known-after-apply", Category: rules.CategoryConfig, Severity: rules.Info,
		Summary: "A new profile's selectors are known only after apply: the plan leaves it out.",
		Doc: "Terraform computes some profile attributes during apply (selectors from another resource's output, for " +
			"example). Which pods such a profile selects cannot be known from the plan, so it takes no part in the " +
			"simulation: findings about the pods it would take may be missing or too pessimistic.",
		Remediation: "Make the selectors known at plan time (literal values or variables), or check again with the state " +
			"after apply: `terraform show -json > state.json && fargatekit check --profiles state.json`.",
	}
)

// Rules lists the plan's rules, for documentation.
var Rules = []*rules.Rule{LeavesFargate, StaysOffFargate, MovesProfile, CoverageLost, CoverageGained, SameNameFirst, CoverageGap, UnknownAfterApply}

// Findings turns a simulation into findings. source names the change (the
// plan file) for findings about profiles rather than workloads.
func Findings(in Input, r Result, source string) []rules.Finding {
	var out []rules.Finding
	add := func(rule *rules.Rule, ref object.Ref, src object.Source, format string, args ...any) {
		out = append(out, rules.Finding{Rule: rule, Severity: rule.Severity, Object: ref, Source: src, Message: fmt.Sprintf(format, args...)})
	}
	for _, w := range r.Workloads {
		switch {
		case w.After.Where == Gone:
			add(LeavesFargate, w.Ref, w.Source, "deleting profile %s deletes the pod, and no controller recreates a bare Pod%s", w.Before.Profile, pinned(w))
		case w.Uncovered > 0:
			msg := fmt.Sprintf("deleting profile %s stops the pods and they are recreated %s; in the worst order no profile matches them for %d operation(s), about %s",
				w.Before.Profile, placedText(w.Moves[0]), w.Uncovered, FormatDuration(w.UncoveredFor))
			switch {
			case w.RestartNeeded:
				msg += fmt.Sprintf("; after the change they stay there although profile %s matches them, until restarted", w.Matched)
			case w.Ref.Kind == "CronJob" && w.Matched != "":
				msg += fmt.Sprintf("; the next runs go to profile %s", w.Matched)
			case w.Matched == "":
				msg += "; no profile matches them after the change"
			}
			add(LeavesFargate, w.Ref, w.Source, "%s%s", msg, pinned(w))
		case len(w.Moves) > 0:
			add(MovesProfile, w.Ref, w.Source, "deleting profile %s stops every pod at once (PodDisruptionBudgets are ignored); they are recreated on profile %s%s",
				w.Before.Profile, w.After.Profile, pinned(w))
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
			"in the worst order, selector %s has no ACTIVE profile for %d operation(s), about %s, from the deletion of %s: pods it placed are recreated off Fargate and stay there",
			selectorText(g.Selector), g.To-g.From+1, FormatDuration(g.For), g.Profile)
	}
	for _, b := range r.Safe.Bridges {
		switch {
		case b.Replacement && b.New.CreateBeforeDestroy:
			add(SameNameFirst, profileRef(b.Old.Name), object.Source{File: source},
				"%s replaces profile %s with create_before_destroy under the same name: EKS refuses the second profile", b.New.Address, b.Old.Name)
		case !b.Replacement:
			add(SameNameFirst, profileRef(b.Old.Name), object.Source{File: source},
				"%s creates profile %s, the name of a profile this change deletes: if the creation runs first, EKS refuses it", b.New.Address, b.Old.Name)
		}
	}
	for _, c := range r.Unknown {
		add(UnknownAfterApply, profileRef(nameOf(c.After)), object.Source{File: source},
			"the selectors of %s are known only after apply: the profile is left out of the analysis", c.Address)
	}
	return out
}

// QuotaFindings returns the findings of compat.ProfileQuota for the change:
// the profiles beyond EKS's quotas after it, and the profiles that exist at
// once during the safe sequence, which creates the new ones (and the bridges)
// before it deletes.
func QuotaFindings(in Input, r Result, l fargate.Limits) []rules.Finding {
	after := slices.Clone(in.Unchanged)
	var peak []fargate.Profile
	for _, c := range in.Changes {
		if c.After != nil {
			after = append(after, *c.After)
		}
		if c.Before != nil {
			peak = append(peak, *c.Before)
		}
	}
	out := compat.QuotaFindings(after, l, "")
	peak = append(peak, in.Unchanged...)
	for _, c := range r.Safe.Create {
		peak = append(peak, *c.After)
	}
	for _, b := range r.Safe.Bridges {
		bridge := b.Old
		bridge.Name = b.BridgeName()
		peak = append(peak, bridge)
	}
	created := len(r.Safe.Create) + len(r.Safe.Bridges)
	if created > 0 && len(fargate.ValidateCluster(after, l)) == 0 { // the created ones are last: the findings name one
		for _, f := range compat.QuotaFindings(peak, l, " during the safe sequence, which creates before it deletes") {
			if f.Path == "fargateProfiles" {
				out = append(out, f)
			}
		}
	}
	for i := range out {
		out[i].Rule, out[i].Severity = compat.ProfileQuota, compat.ProfileQuota.Severity
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

// pinned notes that the pod template asks for a profile the change deletes.
func pinned(w WorkloadPlan) string {
	if w.Pinned == "" {
		return ""
	}
	return fmt.Sprintf(" (the pod template asks for profile %s with the %s label, which the change deletes: what EKS then does is unconfirmed; fargatekit assumes it picks among the profiles that match)",
		w.Pinned, fargate.ProfileLabel)
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
	if l := labels.Set(s.Selector.Labels).String(); l != "" {
		b.WriteString(" labels=" + l)
	}
	return b.String()
}
