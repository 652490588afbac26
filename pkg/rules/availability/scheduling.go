package availability

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

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
	Summary: "Fargate ignores pod affinity, pod anti-affinity and node affinity.",
	Doc: "\"Kubernetes affinity/anti-affinity rules do not apply\" on Fargate (EKS user guide). fargate-scheduler gives " +
		"every pod its own node in a subnet of the profile chosen at random, so anti-affinity meant to spread replicas " +
		"over zones or hosts has no effect, and replicas can pile into one Availability Zone.",
	Remediation: "For a guaranteed spread over AZs, use one Fargate profile per subnet (AZ) and one workload per profile " +
		"(each pinned with the `eks.amazonaws.com/fargate-profile` label), or run the workload on EC2 nodes; " +
		"drop the affinity to make the manifest say what really happens.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		a := obj.Pod.Template.Spec.Affinity
		if a == nil {
			return nil
		}
		var kinds []string
		zonal := false
		if a.PodAntiAffinity != nil && (len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
			kinds = append(kinds, "pod anti-affinity")
			zonal = zonal || termsZonal(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
		}
		if a.PodAffinity != nil && (len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 || len(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
			kinds = append(kinds, "pod affinity")
		}
		if a.NodeAffinity != nil && (a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil || len(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0) {
			kinds = append(kinds, "node affinity")
		}
		if len(kinds) == 0 {
			return nil
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("affinity"),
			"Fargate ignores the %s of this pod%s", strings.Join(kinds, " and "), spreadNote(w, zonal))}
	}),
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
