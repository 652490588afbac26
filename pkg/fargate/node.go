package fargate

import (
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// NodeTaint is the taint every Fargate node carries.
var NodeTaint = corev1.Taint{Key: ComputeTypeLabel, Value: "fargate", Effect: corev1.TaintEffectNoSchedule}

// NodeLabels returns the labels of a Fargate node. region and zone may be
// empty when unknown, and the topology labels are then left out.
func NodeLabels(region, zone string) map[string]string {
	l := map[string]string{
		ComputeTypeLabel:          "fargate",
		"kubernetes.io/os":        "linux",
		"kubernetes.io/arch":      "amd64",
		"beta.kubernetes.io/os":   "linux",
		"beta.kubernetes.io/arch": "amd64",
	}
	if region != "" {
		l["topology.kubernetes.io/region"] = region
		l["failure-domain.beta.kubernetes.io/region"] = region
	}
	if zone != "" {
		l["topology.kubernetes.io/zone"] = zone
		l["failure-domain.beta.kubernetes.io/zone"] = zone
	}
	return l
}

// SelectsFargateNodes reports whether the pod's node selector and required
// node affinity admit a Fargate node, as the DaemonSet controller and
// kube-scheduler judge it. Zone and region are unknown here, so terms that
// require them do not match.
func SelectsFargateNodes(spec *corev1.PodSpec) bool {
	return Admits(spec)
}

// Admits reports whether the pod's node selector and required node affinity
// admit a Fargate node (NodeLabels, no zone), judged by Kubernetes' own
// matcher. With keys, only requirements on those label keys count and the
// others are taken as met: Admits(spec, "kubernetes.io/arch") asks about the
// architecture alone.
func Admits(spec *corev1.PodSpec, keys ...string) bool {
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: spec.NodeSelector, Affinity: spec.Affinity}}
	if len(keys) > 0 {
		pod.Spec = onlyKeys(spec, keys)
	}
	node := &corev1.Node{}
	node.Labels = NodeLabels("", "")
	ok, err := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)
	return err == nil && ok
}

// onlyKeys returns the node selector and required node affinity of spec
// reduced to requirements on keys. A term left without requirements admits
// every node, and so does the whole affinity (terms are ORed).
func onlyKeys(spec *corev1.PodSpec, keys []string) corev1.PodSpec {
	var out corev1.PodSpec
	for k, v := range spec.NodeSelector {
		if slices.Contains(keys, k) {
			if out.NodeSelector == nil {
				out.NodeSelector = map[string]string{}
			}
			out.NodeSelector[k] = v
		}
	}
	a := spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	var terms []corev1.NodeSelectorTerm
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var kept []corev1.NodeSelectorRequirement
		for _, e := range t.MatchExpressions {
			if slices.Contains(keys, e.Key) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			return out // this term asks nothing of these keys: the affinity admits the node
		}
		terms = append(terms, corev1.NodeSelectorTerm{MatchExpressions: kept})
	}
	out.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms},
	}}
	return out
}

// PrivateDNSName is the EC2 private DNS name of an address in region, as
// the VPC's DNS hostnames give it: ip-10-0-1-2.ec2.internal in us-east-1,
// ip-10-0-1-2.<region>.compute.internal in every other region.
func PrivateDNSName(region string, ip netip.Addr) string {
	host := "ip-" + strings.ReplaceAll(ip.String(), ".", "-")
	if region == "us-east-1" {
		return host + ".ec2.internal"
	}
	return host + "." + region + ".compute.internal"
}

// NullNodeName is the name of every Fargate node when the VPC has DNS
// hostnames disabled: the names collide, so only one Fargate pod runs.
const NullNodeName = "fargate-null"

// NodeName is the name of the Fargate node of a pod at ip: "fargate-" and
// the address's private DNS name, or NullNodeName without DNS hostnames.
func NodeName(region string, ip netip.Addr, dnsHostnames bool) string {
	if !dnsHostnames {
		return NullNodeName
	}
	return "fargate-" + PrivateDNSName(region, ip)
}
