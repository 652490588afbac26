package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// AddedCapabilities flags containers that add Linux capabilities.
var AddedCapabilities = &rules.Rule{
	ID: "FG004", Name: "added-capabilities", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Containers that add Linux capabilities do not run on Fargate.",
	Doc: "fargate-scheduler rejects pods whose containers add capabilities, even harmless ones such as `CAP_CHOWN`: " +
		"`Pod not supported on Fargate: invalid SecurityContext fields: Capabilities added: CAP_CHOWN`. " +
		"`SYS_PTRACE` is not allowed on EKS Fargate either. Dropping capabilities is fine. " +
		"`NET_BIND_SERVICE` is assumed accepted: EKS's own CoreDNS Deployment adds it and runs on Fargate.",
	Unconfirmed: "No AWS source lists the capabilities EKS Fargate accepts. The accepted list defaults to NET_BIND_SERVICE " +
		"and is set with `allowedCapabilities` in .fargatekit.yaml.",
	Remediation: "Remove `securityContext.capabilities.add` (keep `drop`), or keep the workload on EC2 nodes.",
	Refusal:     fargate.RefuseCapabilities,
}
