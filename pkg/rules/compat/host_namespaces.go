package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// hostNamespaceRule builds the rule for one of the pod's host namespace switches.
func hostNamespaceRule(id, name, field, what string, refusal fargate.RefusalKind) *rules.Rule {
	return &rules.Rule{
		ID: id, Name: name, Category: rules.CategoryFargate, Severity: rules.Blocker,
		Summary: "Pods that use the host's " + what + " do not run on Fargate.",
		Doc: "A Fargate pod has its own micro-VM and no access to a host " + what + ". fargate-scheduler rejects a pod " +
			"that sets `spec." + field + ": true` (`Pod not supported on Fargate: fields not supported: ...`) and it stays Pending.",
		Remediation: "Remove `spec." + field + "`, or keep the workload on EC2 nodes.",
		Refusal:     refusal,
	}
}

// HostNetwork flags pods on the host network.
var HostNetwork = hostNamespaceRule("FG006", "host-network", "hostNetwork", "network", fargate.RefuseHostNetwork)

// HostPID flags pods in the host's PID namespace.
var HostPID = hostNamespaceRule("FG007", "host-pid", "hostPID", "process namespace", fargate.RefuseHostPID)

// HostIPC flags pods in the host's IPC namespace.
var HostIPC = hostNamespaceRule("FG008", "host-ipc", "hostIPC", "IPC namespace", fargate.RefuseHostIPC)
