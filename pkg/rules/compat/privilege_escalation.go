package compat

import (
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// PrivilegeEscalation flags containers that allow privilege escalation.
var PrivilegeEscalation = &rules.Rule{
	ID: "FG005", Name: "privilege-escalation", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "allowPrivilegeEscalation: true is reported to be rejected by Fargate.",
	Doc: "Users report that fargate-scheduler rejects pods whose containers set `allowPrivilegeEscalation: true`. " +
		"Only an explicit `true` is flagged; the Kubernetes default (unset) is not.",
	Remediation: "Set `allowPrivilegeEscalation: false` or remove the field.",
	Unconfirmed: "The EKS user guide does not list this field; the rejection is reported by users. " +
		"The rule is a warning for that reason: raise it to a blocker in .fargatekit.yaml if your clusters reject it.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			if sc := c.SecurityContext; sc != nil && sc.AllowPrivilegeEscalation != nil && *sc.AllowPrivilegeEscalation {
				out = append(out, rules.At(obj, c.Path(obj.Pod, "securityContext.allowPrivilegeEscalation"),
					"container %q allows privilege escalation%s", c.Name, rules.Where(w)))
			}
		}
		return out
	}),
}
