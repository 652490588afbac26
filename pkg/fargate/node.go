package fargate

import (
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
	node := &corev1.Node{}
	node.Labels = NodeLabels("", "")
	ok, err := nodeaffinity.GetRequiredNodeAffinity(&corev1.Pod{Spec: *spec}).Match(node)
	return err == nil && ok
}
