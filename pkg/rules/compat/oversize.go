package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Oversize flags pods larger than the largest Fargate size.
var Oversize = &rules.Rule{
	ID: "FG016", Name: "oversize-pod", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "The pod needs more than 16 vCPU, 120 GB of memory or 175 GiB of ephemeral storage.",
	Doc: "Fargate sizes a pod from the larger of its biggest init container and the sum of its long-running containers " +
		"(limits stand in for missing requests), adds 256 MB of memory, and rounds up to a valid size. The largest size " +
		"is 16 vCPU with 120 GB, and ephemeral storage goes up to 175 GiB. A larger pod cannot be scheduled.",
	Remediation: "Lower the requests, split the workload, or run it on EC2 nodes.",
	Refusal:     fargate.RefuseOversize,
}
