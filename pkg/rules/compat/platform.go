package compat

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

var (
	archLabels = []string{"kubernetes.io/arch", "beta.kubernetes.io/arch"}
	osLabels   = []string{"kubernetes.io/os", "beta.kubernetes.io/os"}
)

// Platform flags pods that require Arm or Windows nodes.
var Platform = &rules.Rule{
	ID: "FG015", Name: "arm-or-windows", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "EKS on Fargate runs Linux on x86-64 only; pods that require arm64 or Windows never start.",
	Doc: "Fargate nodes are labelled `kubernetes.io/arch=amd64` and `kubernetes.io/os=linux`. A pod whose node selector or " +
		"required node affinity asks for another architecture or for Windows, or that sets `spec.os.name: windows`, " +
		"cannot run there. Multi-architecture affinity that still allows amd64 is fine.",
	Remediation: "Build an amd64 (or multi-architecture) image and drop the arm64/Windows requirement, or run the workload on EC2 nodes.",
	Check: rules.OnFargatePods(func(_ *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		spec := &obj.Pod.Template.Spec
		var out []rules.Finding
		if spec.OS != nil && spec.OS.Name == corev1.Windows {
			out = append(out, rules.At(obj, obj.Pod.SpecPath("os.name"), "the pod targets Windows%s", rules.Where(w)))
		}
		for _, l := range archLabels {
			if v, ok := spec.NodeSelector[l]; ok && v != "amd64" {
				out = append(out, rules.At(obj, obj.Pod.SpecPath(object.Key("nodeSelector", l)), "the pod selects %s=%s nodes%s", l, v, rules.Where(w)))
			}
		}
		for _, l := range osLabels {
			if v, ok := spec.NodeSelector[l]; ok && v != "linux" {
				out = append(out, rules.At(obj, obj.Pod.SpecPath(object.Key("nodeSelector", l)), "the pod selects %s=%s nodes%s", l, v, rules.Where(w)))
			}
		}
		if requiresOtherPlatform(spec) {
			out = append(out, rules.At(obj, obj.Pod.SpecPath("affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"),
				"the pod's required node affinity allows no linux/amd64 node%s", rules.Where(w)))
		}
		return out
	}),
}

// requiresOtherPlatform reports whether the required node affinity (the node
// selector is reported on its own) rules out linux/amd64 nodes.
func requiresOtherPlatform(spec *corev1.PodSpec) bool {
	return !fargate.Admits(&corev1.PodSpec{Affinity: spec.Affinity}, append(archLabels, osLabels...)...)
}
