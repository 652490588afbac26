package compat

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// ClaimProvisioning flags PersistentVolumeClaims mounted by Fargate pods that
// need EBS or dynamic provisioning.
var ClaimProvisioning = &rules.Rule{
	ID: "FG013", Name: "claim-provisioning", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "A PersistentVolumeClaim mounted by Fargate pods needs EBS or dynamic provisioning.",
	Doc: "Fargate mounts only statically provisioned EFS volumes. A claim mounted by a Fargate pod is flagged when it " +
		"is bound to an EBS PersistentVolume in the input, or when nothing in the input can bind it statically: " +
		"no `volumeName`, no PersistentVolume of its storage class, and a storage class other than `\"\"` " +
		"(no class means the cluster default, EBS gp2 on EKS). Claims that are not in the input are not judged.",
	Remediation: "Back the claim with a pre-created EFS PersistentVolume (driver efs.csi.aws.com) of the claim's storage class, " +
		"or keep the workload on EC2 nodes.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster) []rules.Finding {
		claims := map[[2]string]*object.Object{}
		for _, o := range c.Objects["PersistentVolumeClaim"] {
			claims[[2]string{ctx.NamespaceOf(o.Ref), o.Ref.Name}] = o
		}
		var out []rules.Finding
		reported := map[*object.Object]bool{}
		for _, w := range c.Workloads {
			if !w.Placement.Fargate {
				continue
			}
			for _, name := range w.Claims {
				o := claims[[2]string{w.Namespace, name}]
				if o == nil || reported[o] {
					continue
				}
				pvc, ok := o.Typed.(*corev1.PersistentVolumeClaim)
				if !ok {
					continue
				}
				if path, why := claimProblem(pvc, c.Objects["PersistentVolume"]); why != "" {
					reported[o] = true
					out = append(out, rules.At(o, path, "claim %q is mounted by Fargate workload %s but %s", pvc.Name, w.Ref, why))
				}
			}
		}
		return out
	},
}

// claimProblem says why a claim cannot back a Fargate volume, and at which field.
func claimProblem(pvc *corev1.PersistentVolumeClaim, pvs []*object.Object) (path, why string) {
	class := pvc.Spec.StorageClassName
	for _, o := range pvs {
		pv, ok := o.Typed.(*corev1.PersistentVolume)
		if !ok {
			continue
		}
		bound := pvc.Spec.VolumeName == pv.Name
		if !bound && (pvc.Spec.VolumeName != "" || class == nil || *class != pv.Spec.StorageClassName) {
			continue
		}
		if pv.Spec.AWSElasticBlockStore != nil || (pv.Spec.CSI != nil && pv.Spec.CSI.Driver == "ebs.csi.aws.com") {
			return "spec", fmt.Sprintf("binds the EBS PersistentVolume %q, which Fargate cannot attach", pv.Name)
		}
		return "", "" // a static PersistentVolume that is not EBS
	}
	switch {
	case pvc.Spec.VolumeName != "":
		return "", "" // bound to a volume outside the input
	case class == nil:
		return "spec", "it sets no storageClassName, so the cluster's default class (EBS gp2 on EKS) provisions it dynamically"
	case *class == "":
		return "", ""
	}
	return "spec.storageClassName", fmt.Sprintf("no PersistentVolume of storage class %q is in the input, so it is provisioned dynamically", *class)
}
