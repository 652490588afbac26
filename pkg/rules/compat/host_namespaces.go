package compat

import (
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// hostNamespaceRule builds the rule for one of the pod's host namespace switches.
func hostNamespaceRule(id, name, field, what string, get func(*object.PodTemplate) bool) *rules.Rule {
	return &rules.Rule{
		ID: id, Name: name, Category: rules.CategoryFargate, Severity: rules.Blocker,
		Summary: "Pods that use the host's " + what + " do not run on Fargate.",
		Doc: "A Fargate pod has its own micro-VM and no access to a host " + what + ". fargate-scheduler rejects a pod " +
			"that sets `spec." + field + ": true` (`Pod not supported on Fargate: fields not supported: ...`) and it stays Pending.",
		Remediation: "Remove `spec." + field + "`, or keep the workload on EC2 nodes.",
		Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
			if !get(obj.Pod) {
				return nil
			}
			return []rules.Finding{rules.At(obj, obj.Pod.SpecPath(field), "the pod sets %s%s", field, rules.Where(w))}
		}),
	}
}

// HostNetwork flags pods on the host network.
var HostNetwork = hostNamespaceRule("FG006", "host-network", "hostNetwork", "network",
	func(p *object.PodTemplate) bool { return p.Template.Spec.HostNetwork })

// HostPID flags pods in the host's PID namespace.
var HostPID = hostNamespaceRule("FG007", "host-pid", "hostPID", "process namespace",
	func(p *object.PodTemplate) bool { return p.Template.Spec.HostPID })

// HostIPC flags pods in the host's IPC namespace.
var HostIPC = hostNamespaceRule("FG008", "host-ipc", "hostIPC", "IPC namespace",
	func(p *object.PodTemplate) bool { return p.Template.Spec.HostIPC })
