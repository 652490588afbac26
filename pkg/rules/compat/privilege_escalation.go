package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// PrivilegeEscalation flags containers that allow privilege escalation.
var PrivilegeEscalation = &rules.Rule{
	ID: "FG005", Name: "privilege-escalation", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "allowPrivilegeEscalation: true is reported to be rejected by Fargate.",
	Doc: "Users report that fargate-scheduler rejects pods whose containers set `allowPrivilegeEscalation: true`. " +
		"Only an explicit `true` is flagged; the Kubernetes default (unset) is not. By default the finding is a warning " +
		"and the emulator runs the pod; with `refusePrivilegeEscalation: true` in .fargatekit.yaml it is a blocker and " +
		"the emulator refuses the pod (`invalid SecurityContext fields: AllowPrivilegeEscalation`).",
	Remediation: "Set `allowPrivilegeEscalation: false` or remove the field.",
	Unconfirmed: "The EKS user guide does not list this field; the rejection is reported by users. " +
		"Whether Fargate refuses it is the setting `refusePrivilegeEscalation` (default false).",
	Refusal: fargate.RefusePrivilegeEscalation,
	// Where the settings say Fargate runs the pod: a warning.
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if ctx.Settings.RefusePrivilegeEscalation {
			return nil // reported as a refusal
		}
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			if fargate.EscalatesPrivileges(c.Container) {
				out = append(out, rules.At(obj, c.Path(obj.Pod, "securityContext.allowPrivilegeEscalation"),
					"container %q allows privilege escalation%s", c.Name, rules.Where(w)))
			}
		}
		return out
	}),
}
