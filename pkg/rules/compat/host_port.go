package compat

import (
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// HostPort flags container ports bound on the host.
var HostPort = &rules.Rule{
	ID: "FG009", Name: "host-port", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Container ports with hostPort or hostIP do not run on Fargate.",
	Doc: "fargate-scheduler rejects a pod whose container ports set `hostPort` or `hostIP`: " +
		"`Pod not supported on Fargate: port contains HostIP or HostPort`.",
	Remediation: "Remove `hostPort` and `hostIP` and reach the pod through a Service (a load balancer in IP target mode).",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			for j, p := range c.Ports {
				if p.HostPort == 0 && p.HostIP == "" {
					continue
				}
				field := "hostPort"
				if p.HostPort == 0 {
					field = "hostIP"
				}
				out = append(out, rules.At(obj, c.Path(obj.Pod, object.Item("ports", j)+"."+field),
					"container %q port %d binds a host port%s", c.Name, p.ContainerPort, rules.Where(w)))
			}
		}
		return out
	}),
}
