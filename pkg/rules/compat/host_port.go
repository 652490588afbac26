package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// HostPort flags container ports bound on the host.
var HostPort = &rules.Rule{
	ID: "FG009", Name: "host-port", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Container ports with hostPort or hostIP do not run on Fargate.",
	Doc: "fargate-scheduler rejects a pod whose container ports set `hostPort` or `hostIP`: " +
		"`Pod not supported on Fargate: port contains HostIP or HostPort`.",
	Remediation: "Remove `hostPort` and `hostIP` and reach the pod through a Service (a load balancer in IP target mode).",
	Refusal:     fargate.RefuseHostPort,
}
