package availability

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

const zoneKey = "topology.kubernetes.io/zone"

func isZoneKey(k string) bool {
	return k == zoneKey || k == "failure-domain.beta.kubernetes.io/zone"
}

// spreadNote tells what an ignored constraint means for the replicas.
func spreadNote(w *rules.Workload, zonal bool) string {
	switch {
	case w.Replicas > 1 && zonal:
		return fmt.Sprintf("; fargate-scheduler picks a subnet (an AZ) at random per pod, so the %d replicas can all land in one AZ", w.Replicas)
	case w.Replicas > 1:
		return fmt.Sprintf("; the %d replicas are placed at random across the profile's subnets", w.Replicas)
	}
	return ""
}

// AffinityIgnored flags pod affinity, anti-affinity and preferred node affinity on Fargate.
var AffinityIgnored = &rules.Rule{
	ID: "FG030", Name: "affinity-ignored", Category: rules.CategoryAvailability, Severity: rules.Warning,
	Summary: "Fargate ignores pod affinity, pod anti-affinity and node affinity (and, unconfirmed, zone node selectors).",
	Doc: "\"Kubernetes affinity/anti-affinity rules do not apply\" on Fargate (EKS user guide). fargate-scheduler gives " +
		"every pod its own node in a subnet of the profile chosen at random, so anti-affinity meant to spread replicas " +
		"over zones has no effect, and replicas can pile into one Availability Zone. Anti-affinity by hostname is not " +
		"flagged: it always holds, one pod per Fargate node. Node affinity is flagged " +
		"only when it matters: a required term that Fargate nodes do not satisfy (a node group, an instance type), " +
		"which the pod silently escapes, or a zone preference. Affinity that Fargate nodes satisfy anyway " +
		"(linux, amd64) is not flagged. A topology.kubernetes.io/zone node selector was reported to pin Fargate pods " +
		"to an AZ (containers-roadmap#1125), which AWS does not document: it is flagged as ignored unless the setting " +
		"honourZoneSelector says fargate-scheduler keeps to it, as the emulator then does.",
	Remediation: "For a guaranteed spread over AZs, use one Fargate profile per subnet (AZ) and let `fargatekit spread` " +
		"choose each pod's profile (docs/spread.md), or pin one workload per profile with the " +
		"`eks.amazonaws.com/fargate-profile` label, or run the workload on EC2 nodes; " +
		"drop the affinity to make the manifest say what really happens.",
	Unconfirmed: "Whether fargate-scheduler keeps to a topology.kubernetes.io/zone node selector (setting honourZoneSelector, default: it does not).",
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var kinds []string
		zonal := false
		at := obj.Pod.SpecPath("nodeSelector")
		// A zone node selector is ignored unless the settings say that
		// fargate-scheduler honours it (unconfirmed), as the emulator then does.
		if !ctx.Settings.HonourZoneSelector && slices.ContainsFunc(slices.Collect(maps.Keys(obj.Pod.Template.Spec.NodeSelector)), isZoneKey) {
			kinds = append(kinds, "zone node selector")
			zonal = true
		}
		selectorKinds := len(kinds)
		if a := obj.Pod.Template.Spec.Affinity; a != nil {
			// Anti-affinity on the hostname always holds on Fargate, one pod per
			// node; any other topology (zones above all) is ignored.
			if anti := a.PodAntiAffinity; anti != nil && !onlyHostname(anti.RequiredDuringSchedulingIgnoredDuringExecution, anti.PreferredDuringSchedulingIgnoredDuringExecution) {
				kinds = append(kinds, "pod anti-affinity")
				zonal = zonal || termsZonal(anti.RequiredDuringSchedulingIgnoredDuringExecution, anti.PreferredDuringSchedulingIgnoredDuringExecution)
			}
			if a.PodAffinity != nil && (len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
				kinds = append(kinds, "pod affinity")
			}
			if na := a.NodeAffinity; na != nil {
				switch required := requiredNodeAffinity(&obj.Pod.Template.Spec); {
				case required == requiresZone:
					kinds = append(kinds, "zone requirement")
					zonal = true
				case required == requiresOtherNodes:
					kinds = append(kinds, "required node affinity (it asks for nodes that are not Fargate nodes)")
				case preferredZonal(na.PreferredDuringSchedulingIgnoredDuringExecution):
					kinds = append(kinds, "zone preference")
					zonal = true
				}
			}
		}
		if len(kinds) == 0 {
			return nil
		}
		if len(kinds) > selectorKinds {
			at = obj.Pod.SpecPath("affinity")
		}
		return []rules.Finding{rules.At(obj, at,
			"Fargate ignores the %s of this pod%s", strings.Join(kinds, " and "), spreadNote(w, zonal))}
	}),
}

// What a pod's required node affinity asks of Fargate nodes.
const (
	requiresNothingSpecial = iota // Fargate nodes satisfy it, or there is none
	requiresZone                  // only zones, which fargate-scheduler ignores
	requiresOtherNodes            // nodes Fargate nodes are not (a node group, an instance type)
)

func requiredNodeAffinity(spec *corev1.PodSpec) int {
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil || fargate.SelectsFargateNodes(spec) {
		return requiresNothingSpecial
	}
	// Without its zone and region expressions, would the affinity admit Fargate nodes?
	stripped := spec.DeepCopy()
	for i := range stripped.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		t := &stripped.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[i]
		t.MatchExpressions = slices.DeleteFunc(t.MatchExpressions, func(e corev1.NodeSelectorRequirement) bool {
			return isZoneKey(e.Key) || e.Key == "topology.kubernetes.io/region" || e.Key == "failure-domain.beta.kubernetes.io/region"
		})
	}
	if fargate.SelectsFargateNodes(stripped) {
		return requiresZone
	}
	return requiresOtherNodes
}

// preferredZonal reports whether preferred node affinity terms are about zones.
func preferredZonal(terms []corev1.PreferredSchedulingTerm) bool {
	for _, t := range terms {
		for _, e := range t.Preference.MatchExpressions {
			if isZoneKey(e.Key) {
				return true
			}
		}
	}
	return false
}

// onlyHostname reports whether every term (there may be none) spreads by
// kubernetes.io/hostname.
func onlyHostname(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) bool {
	for _, t := range req {
		if t.TopologyKey != corev1.LabelHostname {
			return false
		}
	}
	for _, t := range pref {
		if t.PodAffinityTerm.TopologyKey != corev1.LabelHostname {
			return false
		}
	}
	return true
}

func termsZonal(req []corev1.PodAffinityTerm, pref []corev1.WeightedPodAffinityTerm) bool {
	for _, t := range req {
		if isZoneKey(t.TopologyKey) {
			return true
		}
	}
	for _, t := range pref {
		if isZoneKey(t.PodAffinityTerm.TopologyKey) {
			return true
		}
	}
	return false
}

// TopologySpreadIgnored flags topologySpreadConstraints on Fargate.
var TopologySpreadIgnored = &rules.Rule{
	ID: "FG031", Name: "topology-spread-ignored", Category: rules.CategoryAvailability, Severity: rules.Warning,
	Summary: "Fargate ignores topologySpreadConstraints.",
	Doc: "\"Fargate does not currently support Kubernetes topologySpreadConstraints\" (EKS user guide; " +
		"aws/containers-roadmap#824 has been open since 2020). fargate-scheduler picks one of the profile's subnets at " +
		"random for every pod: with 2 subnets, 2 replicas landed in one AZ in 5 of 10 scale-ups in the report.",
	Remediation: "For a guaranteed spread over AZs, use one Fargate profile per subnet (AZ) and one workload per profile, " +
		"or run the workload on EC2 nodes.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		tsc := obj.Pod.Template.Spec.TopologySpreadConstraints
		if len(tsc) == 0 {
			return nil
		}
		zonal := false
		for _, c := range tsc {
			zonal = zonal || isZoneKey(c.TopologyKey)
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("topologySpreadConstraints"),
			"Fargate ignores topologySpreadConstraints%s", spreadNote(w, zonal))}
	}),
}
