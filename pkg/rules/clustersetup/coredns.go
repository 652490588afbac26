package clustersetup

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// CoreDNSComputeType flags CoreDNS kept off Fargate by the compute-type annotation.
var CoreDNSComputeType = &rules.Rule{
	ID: "FG050", Name: "coredns-compute-type", Category: rules.CategoryConfig, Severity: rules.Warning,
	Summary: "CoreDNS is annotated eks.amazonaws.com/compute-type: ec2, so it never runs on Fargate (or fargate, which no profile backs).",
	Doc: "Older EKS clusters created the CoreDNS Deployment in kube-system with the pod annotation " +
		"`eks.amazonaws.com/compute-type: ec2`. On a cluster with only Fargate, CoreDNS then stays Pending even with a " +
		"profile for kube-system, and nothing in the cluster resolves names. The rule fires when no profiles are given or " +
		"when a given profile matches the CoreDNS pods. The annotation `eks.amazonaws.com/compute-type: fargate` does " +
		"not send CoreDNS to Fargate either: only a profile that matches its pods does, so with profiles given and none " +
		"matching, the rule fires on it too.",
	Remediation: "Remove the annotation: `kubectl patch deployment coredns -n kube-system --type json " +
		"-p='[{\"op\": \"remove\", \"path\": \"/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type\"}]'`, " +
		"then `kubectl rollout restart -n kube-system deployment coredns`. Setting it to `fargate` instead does nothing by " +
		"itself: CoreDNS runs on Fargate only under a Fargate profile that selects kube-system (with the label " +
		"`k8s-app: kube-dns`, if the profile has labels), created before the pods are.",
	Check: func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		d, ok := obj.Typed.(*appsv1.Deployment)
		if !ok || d.Name != "coredns" || ctx.NamespaceOf(obj.Ref) != "kube-system" {
			return nil
		}
		annotation := obj.Pod.MetadataPath(object.Key("annotations", fargate.ComputeTypeAnnotation))
		computeType := d.Spec.Template.Annotations[fargate.ComputeTypeAnnotation]
		if computeType == "fargate" {
			if ctx.Profiles == nil || fargate.Choose(ctx.Profiles, "kube-system", d.Spec.Template.Labels).Profile != nil {
				return nil
			}
			return []rules.Finding{rules.At(obj, annotation, "the annotation does not send CoreDNS to Fargate and no Fargate "+
				"profile matches its pods (namespace kube-system, labels %s): it runs on EC2 nodes, or without them stays Pending", labelList(d.Spec.Template.Labels))}
		}
		if computeType != "ec2" {
			return nil
		}
		why := "with no profiles given, a Fargate-only cluster is assumed"
		if ctx.Profiles != nil {
			c := fargate.Choose(ctx.Profiles, "kube-system", d.Spec.Template.Labels)
			if c.Profile == nil {
				return nil // no profile would take CoreDNS anyway: it is meant for EC2
			}
			why = "Fargate profile " + c.Profile.Name + " matches it"
		}
		return []rules.Finding{rules.At(obj, annotation, "CoreDNS can never run on Fargate (%s); without EC2 nodes, DNS stays Pending", why)}
	},
}

// labelList writes labels as k=v, sorted.
func labelList(l map[string]string) string {
	return labels.Set(l).String()
}
