package fargate

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// wording is how fargate-scheduler words the reason a rule stands for, in
// its event "Pod not supported on Fargate: ...". The texts of FG003, FG004,
// FG006, FG009 and FG010/FG011 were observed on EKS; the others are the
// emulator's, in the same style (unconfirmed).
var wording = map[string]func(rules.Finding, *corev1.Pod) string{
	"FG003": func(rules.Finding, *corev1.Pod) string { return "invalid SecurityContext fields: Privileged" },
	"FG004": func(f rules.Finding, p *corev1.Pod) string {
		return "invalid SecurityContext fields: Capabilities added: " + strings.Join(addedCapabilities(p), ", ")
	},
	"FG005": func(rules.Finding, *corev1.Pod) string {
		return "invalid SecurityContext fields: AllowPrivilegeEscalation"
	},
	"FG006": func(rules.Finding, *corev1.Pod) string { return "fields not supported: HostNetwork" },
	"FG007": func(rules.Finding, *corev1.Pod) string { return "fields not supported: HostPID" },
	"FG008": func(rules.Finding, *corev1.Pod) string { return "fields not supported: HostIPC" },
	"FG009": func(rules.Finding, *corev1.Pod) string { return "port contains HostIP or HostPort" },
	"FG010": volumeWording,
	"FG011": volumeWording,
	"FG014": func(rules.Finding, *corev1.Pod) string { return "resources not supported: GPU" },
	"FG015": func(rules.Finding, *corev1.Pod) string { return "node selection not supported: only linux/amd64" },
	"FG016": func(rules.Finding, *corev1.Pod) string {
		return "resources exceed the largest Fargate size (16 vCPU, 120 GB)"
	},
}

func volumeWording(f rules.Finding, _ *corev1.Pod) string {
	name := f.Message
	if i := strings.IndexByte(name, '"'); i >= 0 {
		if j := strings.IndexByte(name[i+1:], '"'); j >= 0 {
			name = name[i+1 : i+1+j]
		}
	}
	return "volumes not supported: " + name + " is of an unsupported volume Type"
}

func addedCapabilities(p *corev1.Pod) []string {
	var out []string
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for _, c := range list {
			if c.SecurityContext != nil && c.SecurityContext.Capabilities != nil {
				for _, cap := range c.SecurityContext.Capabilities.Add {
					name := strings.ToUpper(string(cap))
					if !strings.HasPrefix(name, "CAP_") {
						name = "CAP_" + name
					}
					out = append(out, name)
				}
			}
		}
	}
	return out
}

// rejectRules are the rules whose blockers make fargate-scheduler refuse a pod.
func rejectRules() []*rules.Rule {
	var out []*rules.Rule
	for _, r := range builtin.Rules() {
		if _, ok := wording[r.ID]; ok {
			out = append(out, r)
		}
	}
	return out
}

// Rejection returns why fargate-scheduler refuses the pod, worded as EKS
// does ("Pod not supported on Fargate: fields not supported: HostNetwork, ..."),
// or "" when it accepts it. It runs the rules of `fargatekit check` on the pod.
func Rejection(pod *corev1.Pod, allowedCapabilities []string) string {
	var reasons []string
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			reasons = append(reasons, "DaemonSet pods are not supported")
		}
	}
	data, err := json.Marshal(pod)
	if err != nil {
		return fmt.Sprintf("Pod not supported on Fargate: cannot read the pod: %v", err)
	}
	obj, err := object.Decode("v1", "Pod", data, object.Source{}, nil)
	if err != nil {
		return fmt.Sprintf("Pod not supported on Fargate: cannot read the pod: %v", err)
	}
	ctx := &rules.Context{Namespace: pod.Namespace, AllowedCapabilities: allowedCapabilities}
	engine := rules.NewEngine(ctx, rejectRules(), rules.Options{})
	engine.Add(obj)
	seen := map[string]bool{}
	for _, f := range engine.Result().Findings {
		if f.Severity != rules.Blocker && f.Rule.ID != "FG005" {
			continue
		}
		if r := wording[f.Rule.ID](f, pod); !seen[r] {
			seen[r] = true
			reasons = append(reasons, r)
		}
	}
	if len(reasons) == 0 {
		return ""
	}
	return "Pod not supported on Fargate: " + strings.Join(reasons, ", ")
}
