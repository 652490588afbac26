package compat

import (
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/object"
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
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		allowed := ctx.AllowedCapabilities
		if allowed == nil {
			allowed = rules.DefaultAllowedCapabilities
		}
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			sc := c.SecurityContext
			if sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Add) == 0 {
				continue
			}
			var names []string
			for _, cap := range sc.Capabilities.Add {
				if !slices.Contains(allowed, strings.TrimPrefix(strings.ToUpper(string(cap)), "CAP_")) {
					names = append(names, string(cap))
				}
			}
			if len(names) == 0 {
				continue
			}
			out = append(out, rules.At(obj, c.Path(obj.Pod, "securityContext.capabilities.add"),
				"container %q adds capabilities %s%s", c.Name, strings.Join(names, ", "), rules.Where(w)))
		}
		return out
	}),
}
