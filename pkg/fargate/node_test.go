package fargate

import (
	"net/netip"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestSelectsFargateNodes(t *testing.T) {
	req := func(key string, op corev1.NodeSelectorOperator, vals ...string) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}},
		}}}
	}
	for _, tc := range []struct {
		name string
		spec corev1.PodSpec
		want bool
	}{
		{"nothing required", corev1.PodSpec{}, true},
		{"linux", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}, true},
		{"windows", corev1.PodSpec{NodeSelector: map[string]string{"kubernetes.io/os": "windows"}}, false},
		{"node group label", corev1.PodSpec{NodeSelector: map[string]string{"eks.amazonaws.com/nodegroup": "ng-1"}}, false},
		{"not fargate", corev1.PodSpec{Affinity: req(ComputeTypeLabel, corev1.NodeSelectorOpNotIn, "fargate")}, false},
		{"arm64 only", corev1.PodSpec{Affinity: req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "arm64")}, false},
		{"amd64 or arm64", corev1.PodSpec{Affinity: req("kubernetes.io/arch", corev1.NodeSelectorOpIn, "amd64", "arm64")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SelectsFargateNodes(&tc.spec); got != tc.want {
				t.Errorf("SelectsFargateNodes = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodeName(t *testing.T) {
	ip := netip.MustParseAddr("10.0.1.2")
	for _, tc := range []struct {
		region string
		dns    bool
		want   string
	}{
		{"us-east-1", true, "fargate-ip-10-0-1-2.ec2.internal"},
		{"eu-west-1", true, "fargate-ip-10-0-1-2.eu-west-1.compute.internal"},
		{"us-east-2", true, "fargate-ip-10-0-1-2.us-east-2.compute.internal"},
		{"eu-west-1", false, "fargate-null"},
	} {
		if got := NodeName(tc.region, ip, tc.dns); got != tc.want {
			t.Errorf("NodeName(%s, dns %v) = %q, want %q", tc.region, tc.dns, got, tc.want)
		}
	}
}
