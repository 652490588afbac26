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
		"is bound to a PersistentVolume of the input that is not EFS (driver efs.csi.aws.com), or when nothing in the input can bind it statically: " +
		"no `volumeName`, no PersistentVolume of its storage class, and a storage class other than `\"\"` " +
		"(no class means the cluster default, EBS gp2 on EKS). Claims that are not in the input are not judged.",
	Remediation: "Back the claim with a pre-created EFS PersistentVolume (driver efs.csi.aws.com) of the claim's storage class, " +
		"or keep the workload on EC2 nodes.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		claims := map[[2]string]*object.Object{}
		for _, o := range c.Objects["PersistentVolumeClaim"] {
			claims[[2]string{ctx.NamespaceOf(o.Ref), o.Ref.Name}] = o
		}
		if len(claims) == 0 {
			return
		}
		reported := map[*object.Object]bool{}
		for w := range c.Workloads.All() {
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
				if path, why := bindProblem(pvc.Spec.VolumeName, pvc.Spec.StorageClassName, c.Objects["PersistentVolume"]); why != "" {
					reported[o] = true
					report(rules.At(o, path, "claim %q is mounted by Fargate workload %s but %s", pvc.Name, w.Ref, why))
				}
			}
		}
	},
}

// efsDriver is the CSI driver of the only persistent volumes Fargate mounts.
const efsDriver = "efs.csi.aws.com"

// bindProblem says why a claim (bound to volumeName, or of storage class
// class) cannot back a Fargate volume, and at which field of the claim; ""
// when it can, or when the input does not tell.
func bindProblem(volumeName string, class *string, pvs []*object.Object) (path, why string) {
	for _, o := range pvs {
		pv, ok := o.Typed.(*corev1.PersistentVolume)
		if !ok {
			continue
		}
		if volumeName != "" && volumeName != pv.Name {
			continue
		}
		if volumeName == "" && (class == nil || *class != pv.Spec.StorageClassName) {
			continue
		}
		if pv.Spec.CSI != nil && pv.Spec.CSI.Driver == efsDriver {
			return "", ""
		}
		return "spec", fmt.Sprintf("binds PersistentVolume %q, which Fargate cannot mount (only EFS through the %s driver)", pv.Name, efsDriver)
	}
	switch {
	case volumeName != "":
		return "", "" // bound to a volume outside the input
	case class == nil:
		return "spec", "sets no storageClassName, so the cluster's default class (EBS gp2 on EKS) provisions it dynamically"
	case *class == "":
		return "", ""
	}
	return "spec.storageClassName", fmt.Sprintf("is provisioned dynamically: no PersistentVolume of storage class %q is in the input", *class)
}
