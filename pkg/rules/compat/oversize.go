package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
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
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		s := w.Sizing
		if s.Fits {
			return nil
		}
		if s.EphemeralGiB > fargate.MaxEphemeralGiB {
			return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("containers"),
				"the pod needs %d GiB of ephemeral storage; Fargate provides at most %d GiB%s", s.EphemeralGiB, fargate.MaxEphemeralGiB, rules.Where(w))}
		}
		return []rules.Finding{rules.At(obj, obj.Pod.SpecPath("containers"),
			"the pod requests %s (+256 MB Fargate overhead); the largest Fargate size is 16vCPU 120GB%s",
			s.Requested(), rules.Where(w))}
	}),
}
