package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// InstanceMetadata flags containers that fargate.MetadataUses says need
// the instance metadata service, which Fargate pods do not have.
var InstanceMetadata = &rules.Rule{
	ID: "FG027", Name: "needs-instance-metadata", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "The container needs the EC2 instance metadata service (IMDS), which Fargate pods cannot reach.",
	Doc: "IMDS \"isn't available to Pods that are deployed to Fargate nodes\" (EKS user guide). Controllers that ask it " +
		"for what they are not told stop at startup and crash-loop: the AWS Load Balancer Controller without " +
		"`--aws-vpc-id` (the user guide sets `vpcId` and `region` on Fargate), the App Mesh controller without " +
		"`--aws-region`, the EFS CSI driver before v1.7.7; and, where IRSA does not give the region (the setting " +
		"below), Karpenter, cluster-autoscaler before 1.35 and the EBS CSI driver without one. The finding names the " +
		"flag or variable that tells each; the list of controllers is data (`pkg/fargate/data/metadata-clients.yaml`). " +
		"A container whose environment, arguments or command hold a URL of IMDS (`http://169.254.169.254`, " +
		"`[fd00:ec2::254]`) is a warning: it reaches nothing there. Bare addresses (an iptables rule that drops them) " +
		"and proxy variables (NO_PROXY) are not flagged, and a container that takes variables from a ConfigMap or " +
		"Secret (`envFrom`) is taken to set those it needs.",
	Remediation: "Set the flag or variable the finding names (in Helm values: `region`, `vpcId` for the AWS Load Balancer " +
		"Controller; `region` for App Mesh), upgrade the image, or run the controller on EC2 nodes.",
	Unconfirmed: "Whether the pods of IRSA service accounts get AWS_REGION and AWS_DEFAULT_REGION on EKS: users report " +
		"that EKS's pod identity webhook injects them; AWS does not document it. The setting `irsaInjectsRegion` " +
		"(default true) takes them to be there, so that a region such a variable gives is not asked for.",
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var out []rules.Finding
		for _, u := range fargate.MetadataUses(&obj.Pod.Template.Spec, ctx.Settings) {
			if u.Client == nil {
				f := rules.At(obj, obj.Pod.SpecPath(u.Field), "container %q names the instance metadata address %s, which Fargate pods cannot reach%s",
					u.Container, u.Address, rules.Where(w))
				f.Severity = rules.Warning
				out = append(out, f)
				continue
			}
			out = append(out, rules.At(obj, obj.Pod.SpecPath(u.Field), "%s: it stops at startup%s", u.Detail(), rules.Where(w)))
		}
		return out
	}),
}
