package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Platform flags pods that require Arm or Windows nodes.
var Platform = &rules.Rule{
	ID: "FG015", Name: "arm-or-windows", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "EKS on Fargate runs Linux on x86-64 only; pods that require arm64 or Windows never start.",
	Doc: "Fargate nodes are labelled `kubernetes.io/arch=amd64` and `kubernetes.io/os=linux`. A pod whose node selector or " +
		"required node affinity asks for another architecture or for Windows, or that sets `spec.os.name: windows`, " +
		"cannot run there. Multi-architecture affinity that still allows amd64 is fine.",
	Remediation: "Build an amd64 (or multi-architecture) image and drop the arm64/Windows requirement, or run the workload on EC2 nodes.",
	Refusal:     fargate.RefusePlatform,
}

// NodeSelection flags pods that a Fargate profile matches but whose node
// selection excludes Fargate nodes.
var NodeSelection = &rules.Rule{
	ID: "FG023", Name: "node-selection-excludes-fargate", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "A pod that a Fargate profile matches goes to fargate-scheduler even when its node selector excludes Fargate, and stays Pending.",
	Doc: "EKS's Fargate webhook looks at the pod's namespace, labels and `eks.amazonaws.com/compute-type` annotation, not " +
		"at its node selector or node affinity. A pod that a profile matches is sent to fargate-scheduler even when it " +
		"requires `eks.amazonaws.com/compute-type` other than `fargate` (a node selector `compute-type: ec2`, or the " +
		"`NotIn [fargate]` affinity that keeps DaemonSets off Fargate), and fargate-scheduler refuses it " +
		"(`MatchNodeSelector failed: Fargate profile <name> cannot ...`, reported for the EBS CSI controller in " +
		"kubernetes-sigs/aws-ebs-csi-driver#496). The pod stays Pending instead of running on EC2. Without profiles, such " +
		"a workload is taken as meant for EC2 and is not assessed.",
	Unconfirmed: "The event's text after `cannot` was not found; the emulator composes it.",
	Remediation: "Annotate the pod template `eks.amazonaws.com/compute-type: ec2`, which the webhook does honour, or narrow the " +
		"profile's selectors so that they do not match the pod.",
	Refusal: fargate.RefuseNodeSelection,
}
