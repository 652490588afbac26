package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Privileged flags privileged containers.
var Privileged = &rules.Rule{
	ID: "FG003", Name: "privileged", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Privileged containers do not run on Fargate.",
	Doc: "fargate-scheduler rejects a pod with a privileged container: " +
		"`Pod not supported on Fargate: invalid SecurityContext fields: Privileged`. The pod stays Pending.",
	Remediation: "Remove `securityContext.privileged`, or keep the workload on EC2 nodes (annotate the pod template " +
		"`eks.amazonaws.com/compute-type: ec2` or leave it out of every Fargate profile).",
	Refusal: fargate.RefusePrivileged,
}
