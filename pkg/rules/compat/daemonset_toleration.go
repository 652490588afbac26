package compat

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// DaemonSetToleratesFargate flags DaemonSets that tolerate the Fargate node taint.
var DaemonSetToleratesFargate = &rules.Rule{
	ID: "FG002", Name: "daemonset-tolerates-fargate", Category: rules.CategoryFargate, Severity: rules.Warning,
	Summary: "A DaemonSet that tolerates every taint gets a Pending pod for every Fargate node.",
	Doc: "Fargate nodes carry the taint `eks.amazonaws.com/compute-type=fargate:NoSchedule`. A DaemonSet that tolerates " +
		"it (a toleration with `operator: Exists` and no key, or one for that key) is placed by the DaemonSet controller on " +
		"every Fargate node too. Those pods never start, because a Fargate node runs only its own pod, and they stay Pending, " +
		"one per Fargate pod, cluttering alerts and autoscalers. This holds even when the DaemonSet itself runs on EC2. " +
		"A node selector or required node affinity that no Fargate node satisfies (compute-type other than fargate, " +
		"Windows, arm64, a node-group label) keeps it off, and the rule stays quiet.",
	Remediation: "Add a required node affinity that keeps the DaemonSet off Fargate: " +
		"`eks.amazonaws.com/compute-type NotIn [fargate]` (as the aws-node DaemonSet does), or narrow the toleration.",
	Check: func(_ *rules.Context, obj *object.Object, _ *rules.Workload) []rules.Finding {
		ds, ok := obj.Typed.(*appsv1.DaemonSet)
		if !ok || !fargate.SelectsFargateNodes(&ds.Spec.Template.Spec) {
			return nil
		}
		for i, t := range ds.Spec.Template.Spec.Tolerations {
			if toleratesFargate(t) {
				return []rules.Finding{rules.At(obj, object.Item(obj.Pod.SpecPath("tolerations"), i),
					"the DaemonSet tolerates the Fargate taint and its node selection admits Fargate nodes: one Pending pod per Fargate node")}
			}
		}
		return nil
	},
}

func toleratesFargate(t corev1.Toleration) bool {
	if t.Effect != "" && t.Effect != corev1.TaintEffectNoSchedule {
		return false
	}
	switch t.Key {
	case "":
		return t.Operator == corev1.TolerationOpExists
	case fargate.ComputeTypeLabel:
		return t.Operator == corev1.TolerationOpExists || t.Value == "fargate"
	}
	return false
}
