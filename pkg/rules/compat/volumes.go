package compat

import (
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// HostPathVolume flags hostPath volumes.
var HostPathVolume = &rules.Rule{
	ID: "FG010", Name: "host-path-volume", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "hostPath volumes do not work on Fargate.",
	Doc: "A Fargate pod has no host file system to mount: fargate-scheduler rejects pods with `hostPath` volumes " +
		"(`Pod not supported on Fargate: volumes not supported: <name> is of an unsupported volume Type`).",
	Remediation: "Use an emptyDir for scratch space, a ConfigMap or Secret for files, or an EFS volume for shared data; " +
		"agents that read the node's files belong on EC2 nodes.",
	Refusal: fargate.RefuseHostPath,
}

// UnsupportedVolume flags volume types Fargate cannot mount.
var UnsupportedVolume = &rules.Rule{
	ID: "FG011", Name: "unsupported-volume", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "Volume types other than ConfigMap, Secret, emptyDir, projected, downwardAPI and EFS claims do not work on Fargate.",
	Doc: "Fargate mounts ConfigMap, Secret, emptyDir, projected and downwardAPI volumes, and Amazon EFS through " +
		"statically provisioned PersistentVolumeClaims. Every other volume type (awsElasticBlockStore, nfs, csi inline volumes " +
		"such as the Secrets Store CSI driver, gitRepo, iscsi, image, ...) makes fargate-scheduler reject the pod: " +
		"`Pod not supported on Fargate: volumes not supported: <name> is of an unsupported volume Type`.",
	Remediation: "Replace the volume with a supported type, mount EFS through a PersistentVolume and claim, " +
		"or keep the workload on EC2 nodes.",
	Refusal: fargate.RefuseVolume,
}

// DynamicProvisioning flags volumes that would be provisioned on demand.
var DynamicProvisioning = &rules.Rule{
	ID: "FG012", Name: "dynamic-provisioning", Category: rules.CategoryFargate, Severity: rules.Blocker,
	Summary: "StatefulSet volumeClaimTemplates and generic ephemeral volumes need dynamic provisioning, which Fargate does not support.",
	Doc: "Fargate cannot attach EBS volumes and supports EFS only through statically provisioned PersistentVolumes. " +
		"A StatefulSet's `volumeClaimTemplates` creates a claim per replica, and a generic `ephemeral` volume one per pod; " +
		"unless pre-created EFS PersistentVolumes can bind them, a storage class must provision them (on EKS the default " +
		"class is EBS) and the pods stay Pending. A claim template is not flagged when its `storageClassName` is `\"\"` " +
		"(static binding to volumes outside the input) or when EFS PersistentVolumes of its class are in the input.",
	Remediation: "Create EFS PersistentVolumes (driver efs.csi.aws.com) ahead of time with the claim template's storage class, " +
		"use emptyDir for scratch data, or keep the workload on EC2 nodes.",
	CheckCluster: func(_ *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		for w := range c.Workloads.WithDynamicVolumes() {
			if !w.Placement.Fargate {
				continue
			}
			for _, v := range w.DynamicVolumes {
				f := rules.AtWorkload(w, "volume %q is a generic ephemeral volume, provisioned dynamically per pod%s", v.Name, rules.Where(w))
				if !v.Ephemeral {
					_, why := bindProblem("", v.StorageClass, c.Objects["PersistentVolume"])
					if why == "" {
						continue
					}
					f = rules.AtWorkload(w, "volumeClaimTemplate %q %s%s", v.Name, why, rules.Where(w))
				}
				f.Source.Line = v.Line
				report(f)
			}
		}
	},
}
