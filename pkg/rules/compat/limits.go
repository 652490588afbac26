package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// LimitAboveSize flags containers that fargate.LimitFailures says do not
// start: a limit above the size Fargate provisions from the requests.
var LimitAboveSize = &rules.Rule{
	ID: "FG025", Name: "limit-above-fargate-size", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "A container's CPU limit is above the vCPU Fargate provisions for the pod: the container does not start.",
	Doc: "Fargate sizes a pod from its requests and runs it on a node of that size. The kernel refuses a container a CPU " +
		"quota above its pod's, so a container whose CPU limit is above the pod's vCPU fails at every start " +
		"(`failed to write \"100000\": write .../cpu.cfs_quota_us: invalid argument`) and stays in CrashLoopBackOff; " +
		"the pod is admitted and its other containers run. Controllers shipped with `requests: {cpu: 100m}` and " +
		"`limits: {cpu: 1}` hit it (fluxcd/flux2#3138, aws/containers-roadmap#1864). The emulator starts such a pod the " +
		"same way, and `fargatekit scan` reports it running (LV012).",
	Remediation: "Set the container's CPU request equal to its limit, as the EKS user guide asks for Fargate, or lower the " +
		"limit to at most the pod's vCPU (the message names it).",
	Unconfirmed: "Whether a memory limit above the pod's memory stops the container too: users report failures with limits " +
		"above requests without saying which. The setting `memoryLimitAboveSizeFails` (default false) decides.",
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if !w.Sizing.Fits {
			return nil // FG016 reports it
		}
		var out []rules.Finding
		for _, f := range fargate.LimitFailures(&obj.Pod.Template.Spec, w.Sizing.Provisioned, ctx.Settings) {
			out = append(out, rules.At(obj, obj.Pod.SpecPath(f.Field), "%s: the container does not start%s", f.Detail, rules.Where(w)))
		}
		return out
	}),
}

// LimitsUnequal flags container limits that differ from their requests.
var LimitsUnequal = &rules.Rule{
	ID: "FG026", Name: "limits-differ-from-requests", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "A container's CPU or memory limit differs from its request (a warning when it is above the whole pod): Fargate sizes the pod from requests only.",
	Doc: "The EKS user guide asks that on Fargate \"the requested CPU and memory must be equal to the limit\". Fargate " +
		"provisions the pod from its requests (plus 256 MB), rounded up to a size: a container may use what that " +
		"rounding leaves, but a limit above the pod's whole size promises what is not there. That is a warning: under " +
		"pressure the pod's node runs out before the container reaches its limit. Any other limit that differs from " +
		"its request is an info, worth making equal. A CPU limit above the pod's vCPU stops the container (FG025, " +
		"reported instead of this one). A container without a limit is not flagged.",
	Remediation: "Set the request equal to the limit (raising the request sizes the pod for it), or drop the limit.",
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		if !w.Sizing.Fits {
			return nil // FG016: no size at all
		}
		spec := &obj.Pod.Template.Spec
		failing := map[string]bool{}
		for _, f := range fargate.LimitFailures(spec, w.Sizing.Provisioned, ctx.Settings) {
			failing[f.Field] = true
		}
		var out []rules.Finding
		for _, d := range fargate.LimitsDiffer(spec, w.Sizing.Provisioned) {
			if failing[d.Field] {
				continue
			}
			f := rules.At(obj, obj.Pod.SpecPath(d.Field), "container %q requests %s %s but limits it to %s, more than the whole pod has: Fargate provisions %s from the requests%s",
				d.Container, d.Request, d.Resource, d.Limit, w.Sizing.Provisioned, rules.Where(w))
			if !d.AboveSize {
				f = rules.At(obj, obj.Pod.SpecPath(d.Field), "container %q requests %s %s but limits it to %s: Fargate provisions %s from the requests%s",
					d.Container, d.Request, d.Resource, d.Limit, w.Sizing.Provisioned, rules.Where(w))
				f.Severity = rules.Info
			}
			out = append(out, f)
		}
		return out
	}),
}
