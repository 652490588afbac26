package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// GPU flags containers that request GPUs or other accelerators.
var GPU = &rules.Rule{
	ID: "FG014", Name: "gpu", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Fargate has no GPUs or other accelerators.",
	Doc: "Fargate offers CPU and memory only. A pod that requests `nvidia.com/gpu`, `amd.com/gpu`, AWS Neuron devices " +
		"or another accelerator (in requests or limits) never gets one there.",
	Remediation: "Run GPU workloads on EC2 node groups (GPU instances, Karpenter or EKS Auto Mode) and keep them out of every Fargate profile.",
	Refusal:     fargate.RefuseGPU,
}
