package compat

import (
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
