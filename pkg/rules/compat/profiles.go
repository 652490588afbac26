package compat

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// AmbiguousProfile reports pods that several profiles match.
var AmbiguousProfile = &rules.Rule{
	ID: "FG020", Name: "ambiguous-profile", Category: rules.CategoryConfig, Severity: rules.Info,
	Summary: "Several Fargate profiles match the pods and none is named by the pod's profile label.",
	Doc: "When more than one profile matches a pod, the EKS user guide says EKS picks the first profile in alphanumeric " +
		"order of names and records it in the pod label `eks.amazonaws.com/fargate-profile`. fargatekit assumes that order. " +
		"Subnets (and so AZs) and the pod execution role come from the chosen profile, so an accidental choice matters.",
	Remediation: "Make the selectors disjoint, or pin the profile with the pod template label `eks.amazonaws.com/fargate-profile: <name>`.",
	Unconfirmed: "An AWS re:Post article says the choice among matching profiles is random rather than alphanumeric.",
	Check: rules.OnFargate(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		p := w.Placement
		if len(p.Matching) < 2 || p.ByLabel {
			return nil
		}
		return []rules.Finding{rules.At(obj, obj.Pod.MetadataPath("labels"),
			"profiles %s all match; EKS picks %q (first in alphanumeric order)", strings.Join(p.Matching, ", "), p.Profile)}
	}),
}

// ProfileLabelMismatch reports pods whose profile label names a profile that does not match them.
var ProfileLabelMismatch = &rules.Rule{
	ID: "FG021", Name: "profile-label-mismatch", Category: rules.CategoryConfig, Severity: rules.Warning,
	Summary: "The pod's eks.amazonaws.com/fargate-profile label names a profile that does not match it.",
	Doc: "A pod can choose among the profiles that match it with the label `eks.amazonaws.com/fargate-profile`, but it " +
		"must still match one of that profile's selectors. A label naming another profile does not move the pod there: " +
		"fargatekit assumes EKS then chooses as if the label were absent.",
	Remediation: "Fix the label's value, or change the named profile's selectors so that they match the pod.",
	Unconfirmed: "What EKS does with a label naming a profile that does not match (ignore it, or leave the pod Pending) is not documented.",
	Check: func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if w == nil || ctx.Profiles == nil || (!w.Placement.Fargate && w.Placement.Reason != fargate.ReasonNoProfile) {
			return nil // no profiles to name, or the pod keeps itself off Fargate
		}
		want, ok := w.Labels[fargate.ProfileLabel]
		if !ok || slices.Contains(w.Placement.Matching, want) {
			return nil
		}
		where := "no profile matches the pod"
		if w.Placement.Profile != "" {
			where = "EKS will choose " + w.Placement.Profile + " instead"
		}
		return []rules.Finding{rules.At(obj, obj.Pod.MetadataPath(object.Key("labels", fargate.ProfileLabel)),
			"the pod asks for Fargate profile %q, which does not match it; %s", want, where)}
	},
}

// ProfileQuota reports profiles beyond EKS's quotas.
var ProfileQuota = &rules.Rule{
	ID: "FG024", Name: "profile-quota", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "A Fargate profile exceeds EKS's quotas: selectors per profile, labels per selector, or profiles per cluster.",
	Doc: "EKS refuses to create a profile with more selectors or labels than its quotas allow, and a profile beyond the " +
		"cluster's number of profiles (`ResourceLimitExceededException: Fargate Profile limit exceeded for cluster.`). " +
		"The profile then does not exist, and the pods it would select are not placed on Fargate. The defaults are 5 " +
		"selectors per profile, 5 label pairs per selector and 10 profiles per cluster; AWS raises them on request, so " +
		"the limits are settings (`limits` in .fargatekit.yaml), applied the same way by check, plan and the emulator's " +
		"EKS API. plan also counts the profiles that exist at once during its safe sequence, which creates before it deletes.",
	Unconfirmed: "The quotas' current default values are not confirmed; set yours in .fargatekit.yaml.",
	Remediation: "Merge selectors (namespaces and label values take the wildcards * and ?), split the profile in two, merge " +
		"profiles, or ask AWS to raise the quota and set the new limit in .fargatekit.yaml.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		for _, f := range QuotaFindings(ctx.Profiles, ctx.Settings.Limits, "") {
			report(f)
		}
	},
}

// QuotaFindings returns a finding for each quota the profiles exceed under
// limits; when is "" for profiles that exist together, or says when they
// would (", during the safe sequence").
func QuotaFindings(profiles []fargate.Profile, l fargate.Limits, when string) []rules.Finding {
	var out []rules.Finding
	at := func(p *fargate.Profile, v fargate.Violation, format string, args ...any) {
		out = append(out, rules.Finding{
			Object: object.Ref{APIVersion: "eks.amazonaws.com/v1", Kind: "FargateProfile", Name: p.Name},
			Source: p.Source, Path: v.Field, Message: fmt.Sprintf(format, args...),
		})
	}
	for i := range profiles {
		p := &profiles[i]
		for _, v := range p.Validate(l).Quotas() {
			at(p, v, "profile %q: %s%s: EKS refuses to create it", p.Name, v.Error(), when)
		}
	}
	for _, v := range fargate.ValidateCluster(profiles, l) {
		last := &profiles[len(profiles)-1]
		at(last, v, "%s%s: EKS refuses to create the profiles beyond the quota, such as %q", v.Error(), when, last.Name)
	}
	return out
}
