package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// DaemonSet flags DaemonSets whose pods would go to Fargate.
var DaemonSet = &rules.Rule{
	ID: "FG001", Name: "daemonset", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "DaemonSets do not run on Fargate.",
	Doc: "Fargate runs one pod per micro-VM and has no nodes to run a DaemonSet on. " +
		"A DaemonSet whose pods match a Fargate profile never gets a pod on a Fargate node, so whatever it " +
		"provides (log shipping, metrics, security agents) is missing for every Fargate pod.",
	Remediation: "Run the agent as a sidecar container in the pods that need it (for logs, use Fargate's built-in " +
		"Fluent Bit through the aws-observability namespace), or keep the DaemonSet on EC2 nodes and out of every Fargate profile's selectors.",
	Refusal: fargate.RefuseDaemonSet,
}
