package compat

import (
	"fmt"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// PodIdentity flags Fargate workloads whose service account relies on EKS Pod Identity.
var PodIdentity = &rules.Rule{
	ID: "FG022", Name: "pod-identity", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "EKS Pod Identity does not work on Fargate; use IAM roles for service accounts (IRSA).",
	Doc: "EKS Pod Identity hands out credentials through the eks-pod-identity-agent DaemonSet, which cannot run on " +
		"Fargate. A Fargate pod whose service account has a Pod Identity association gets no credentials from it, and " +
		"AWS SDK calls fail. Associations are read from ACK `PodIdentityAssociation` objects in the input and from " +
		"`iam.podIdentityAssociations` of an eksctl ClusterConfig given with --profiles.",
	Remediation: "Use IRSA: annotate the service account with `eks.amazonaws.com/role-arn` and trust the cluster's OIDC provider " +
		"in the role, or run the workload on EC2 nodes.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		assoc := map[[2]string]string{}
		for _, a := range ctx.PodIdentity {
			assoc[[2]string{a.Namespace, a.ServiceAccount}] = a.Source.File
		}
		for _, o := range c.Objects["PodIdentityAssociation"] {
			if a, ok := o.Typed.(*object.PodIdentityAssociation); ok {
				assoc[[2]string{a.Spec.Namespace, a.Spec.ServiceAccount}] = fmt.Sprintf("%s:%d", o.Source.File, o.Source.Line)
			}
		}
		if len(assoc) == 0 {
			return
		}
		for w := range c.Workloads.All() {
			if !w.Placement.Fargate {
				continue
			}
			if where, ok := assoc[[2]string{w.Namespace, w.ServiceAccount}]; ok {
				report(rules.AtWorkload(w,
					"service account %s/%s has an EKS Pod Identity association (%s), which Fargate pods cannot use", w.Namespace, w.ServiceAccount, where))
			}
		}
	},
}
