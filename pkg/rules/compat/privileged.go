package compat

import (
	"github.com/fargatekit/fargatekit/pkg/object"
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
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			if sc := c.SecurityContext; sc != nil && sc.Privileged != nil && *sc.Privileged {
				out = append(out, rules.At(obj, c.Path(obj.Pod, "securityContext.privileged"),
					"container %q is privileged%s", c.Name, rules.Where(w)))
			}
		}
		return out
	}),
}
