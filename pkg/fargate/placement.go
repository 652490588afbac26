package fargate

import (
	corev1 "k8s.io/api/core/v1"
)

// Placement says whether the pods of a template would run on Fargate.
type Placement struct {
	Fargate bool
	// Profile is the chosen profile; empty when no profiles were given
	// (every workload is then a Fargate candidate) or when not on Fargate.
	Profile string
	// Matching lists every active profile that matches the pods.
	Matching []string
	// ByLabel is true when the pod's eks.amazonaws.com/fargate-profile label chose the profile.
	ByLabel bool
	// Reason tells why the pods are not on Fargate; empty when they are.
	Reason string
}

// Reasons a pod does not go to Fargate.
const (
	ReasonEC2Annotation = "annotated eks.amazonaws.com/compute-type: ec2"
	ReasonEC2Affinity   = "requires nodes that are not Fargate (node selector or required node affinity)"
	ReasonOwnScheduler  = "names a scheduler of its own"
	ReasonNoProfile     = "no Fargate profile matches"
)

// Place decides where the pods of tmpl in namespace ns go, as EKS's Fargate
// webhook does when a pod is created: a pod annotated compute-type ec2, or
// naming a scheduler of its own, is left alone; otherwise the profile Choose
// picks sends it to fargate-scheduler. The webhook does not look at the
// pod's node selection: a pod whose node selector excludes Fargate still goes
// there, and fargate-scheduler refuses it (Refusals).
//
// profiles == nil means no profiles are known: every pod is then assessed as
// a Fargate candidate, unless it keeps itself off Fargate, node selection
// included (it is meant for EC2 by design).
func Place(profiles []Profile, ns string, tmpl *corev1.PodTemplateSpec) Placement {
	if tmpl.Annotations[ComputeTypeAnnotation] == "ec2" {
		return Placement{Reason: ReasonEC2Annotation}
	}
	if s := tmpl.Spec.SchedulerName; s != "" && s != corev1.DefaultSchedulerName {
		return Placement{Reason: ReasonOwnScheduler}
	}
	if profiles == nil {
		if ExcludesFargate(&tmpl.Spec) {
			return Placement{Reason: ReasonEC2Affinity}
		}
		return Placement{Fargate: true}
	}
	c := Choose(profiles, ns, tmpl.Labels)
	if c.Profile == nil {
		return Placement{Reason: ReasonNoProfile}
	}
	return Placement{Fargate: true, Profile: c.Profile.Name, Matching: c.Matching, ByLabel: c.ByLabel}
}

// ExcludesFargate reports whether the pod's node selector or required node
// affinity rules out nodes labelled eks.amazonaws.com/compute-type=fargate: the
// workload is meant for EC2 by design.
func ExcludesFargate(spec *corev1.PodSpec) bool {
	return !Admits(spec, ComputeTypeLabel)
}
