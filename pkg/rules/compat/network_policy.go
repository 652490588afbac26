package compat

import (
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/pkg/rules"
)

// NetworkPolicyNotEnforced flags NetworkPolicies that select Fargate pods.
var NetworkPolicyNotEnforced = &rules.Rule{
	ID: "FG019", Name: "network-policy-not-enforced", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "NetworkPolicies are not enforced for Fargate pods.",
	Doc: "The Amazon VPC CNI enforces Kubernetes NetworkPolicies on EC2 nodes only, and alternate CNIs (Calico, Cilium) " +
		"do not run on Fargate. A NetworkPolicy that selects Fargate pods is accepted by the API server and does nothing " +
		"for them: traffic the policy should block still reaches them.",
	Remediation: "Isolate Fargate pods with security groups for pods (SecurityGroupPolicy) or at the load balancer, " +
		"and keep the NetworkPolicy for the EC2 part of the cluster.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		for _, o := range c.Objects["NetworkPolicy"] {
			np, ok := o.Typed.(*networkingv1.NetworkPolicy)
			if !ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
			if err != nil {
				continue
			}
			var names []string
			for _, w := range c.Selected(ctx.NamespaceOf(o.Ref), sel) {
				if w.Placement.Fargate {
					names = append(names, w.Ref.String())
				}
			}
			if len(names) > 0 {
				report(rules.At(o, "spec.podSelector",
					"the policy selects Fargate pods, where it is not enforced: %s", strings.Join(names, ", ")))
			}
		}
	},
}
