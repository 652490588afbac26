package live

import "github.com/fargatekit/fargatekit/pkg/rules"

// The findings of `fargatekit scan` about what runs. They are rules in every
// way but one: Analyze, not the engine, produces them, from a Snapshot.
var (
	Drift = &rules.Rule{
		ID: "LV001", Name: "drift-off-fargate", Category: rules.CategoryAvailability, Severity: rules.Blocker,
		Summary: "Pods run off Fargate (on EC2 nodes, or Pending) although an ACTIVE Fargate profile matches them now.",
		Doc: "EKS's Fargate webhook places a pod only when the pod is created. Pods created while no profile matched " +
			"them (a profile replaced by deleting it first, a profile created after the workload) went to EC2 nodes, or " +
			"stay Pending on a cluster without any, and stay there after a matching profile becomes ACTIVE. This is the " +
			"incident `fargatekit plan` predicts (PL001, PL002). DaemonSet pods are left out: Fargate never runs them.",
		Remediation: "Restart the workload so that EKS places its pods again: the finding gives the command, and " +
			"`fargatekit fix drift --apply` restarts every drifted Deployment and StatefulSet, one at a time.",
	}
	ProfileGone = &rules.Rule{
		ID: "LV002", Name: "profile-gone", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "Pods run on Fargate under a profile that is DELETING or no longer exists.",
		Doc: "Deleting a Fargate profile stops the pods it placed. Pods still running under a profile that is DELETING, " +
			"or that the EKS API no longer lists, are about to stop or were left behind; when they are recreated, the " +
			"ACTIVE profiles decide where they go, and with none matching that is EC2 (or Pending).",
		Remediation: "Create a profile that matches the pods before they are recreated, or restart them now if another " +
			"ACTIVE profile matches (the finding says which).",
	}
	Refused = &rules.Rule{
		ID: "LV003", Name: "refused-by-fargate", Category: rules.CategoryFargate, Severity: rules.Blocker,
		Summary: "Pods sent to Fargate are Pending: fargate-scheduler refused them.",
		Doc: "fargate-scheduler leaves a pod it cannot run Pending and records a Warning event on it, such as " +
			"`Pod not supported on Fargate: fields not supported: HostNetwork`. The finding quotes the newest one; the " +
			"check rules (FG001–FG024) on the same workload name the field.",
		Remediation: "Change the pod spec as the event and the FG finding say, or keep the workload off Fargate (a " +
			"selector that does not match it, or the annotation eks.amazonaws.com/compute-type: ec2 with EC2 nodes).",
	}
	Unplaced = &rules.Rule{
		ID: "LV004", Name: "unplaced", Category: rules.CategoryAvailability, Severity: rules.Blocker,
		Summary: "Pods are Pending: no Fargate profile matches them and the cluster has no EC2 nodes.",
		Doc: "A pod that no ACTIVE profile matches is left to the default scheduler, which needs EC2 nodes. A cluster " +
			"of Fargate alone keeps such pods Pending for good.",
		Remediation: "Create a Fargate profile whose selectors match the pods' namespace and labels, wait until it is " +
			"ACTIVE, and recreate the pods; or add EC2 capacity.",
	}
	AZSkew = &rules.Rule{
		ID: "LV005", Name: "az-skew", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "A workload's Fargate pods are unevenly spread over AZs (max − min > 1).",
		Doc: "fargate-scheduler ignores affinity and topologySpreadConstraints and picks one of the profile's subnets " +
			"at random, so replicas pile into one AZ and an AZ outage takes most of them. The AZs counted are those " +
			"of the Fargate nodes under the workload's profile anywhere in the cluster (the profile's subnets are not " +
			"read: that needs the EC2 API).",
		Remediation: "Delete a pod of the fullest AZ and let its controller recreate it (the dice are cast again), " +
			"until the spread is even; the finding gives the command for one pod.",
	}
	KubeletSkew = &rules.Rule{
		ID: "LV006", Name: "kubelet-behind", Category: rules.CategoryDeprecation, Severity: rules.Warning,
		Summary: "Nodes run a kubelet a minor version behind the control plane: recycle them before the next upgrade.",
		Doc: "EKS upgrades the control plane one minor version at a time and requires the nodes at its version first. " +
			"A Fargate pod keeps the kubelet of the day it started, so Fargate pods started before the last upgrade " +
			"must be restarted; managed node groups are updated with `aws eks update-nodegroup-version`.",
		Remediation: "Restart the Fargate workloads named (the finding gives the command) and update the node groups.",
	}
	Stuck = &rules.Rule{
		ID: "LV007", Name: "stuck-terminating", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "A pod has been Terminating for longer than --stuck-after.",
		Doc: "A pod is deleted only when its finalizers are gone and its kubelet confirms the containers stopped. A " +
			"finalizer whose controller is gone, or a node that no longer answers, holds the pod Terminating, and with it " +
			"a StatefulSet's replacement, a Fargate node, or a rollout.",
		Remediation: "Find out why the finalizer is not removed; if its controller is gone, remove the finalizers " +
			"(the finding gives the command). A pod without finalizers can be deleted with --force.",
	}
	NullNode = &rules.Rule{
		ID: "LV008", Name: "fargate-null-node", Category: rules.CategoryConfig, Severity: rules.Blocker,
		Summary: "A Fargate node is named fargate-null: the VPC has DNS hostnames disabled, and only one Fargate pod runs.",
		Doc: "Fargate names a node after its private DNS name. In a VPC with enableDnsHostnames off there is none: " +
			"every Fargate node is named `fargate-null`, the names collide, and only one Fargate pod runs at a time.",
		Remediation: "Enable DNS hostnames on the cluster's VPC, then restart the Fargate workloads.",
	}
	KeptOffFargate = &rules.Rule{
		ID: "LV009", Name: "ec2-without-nodes", Category: rules.CategoryConfig, Severity: rules.Blocker,
		Summary: "Pods annotated eks.amazonaws.com/compute-type: ec2 are Pending on a cluster without EC2 nodes.",
		Doc: "The annotation keeps a pod off Fargate whatever the profiles say. On a cluster of Fargate alone the pod " +
			"never runs. CoreDNS created by older EKS versions carries it: then nothing in the cluster resolves names.",
		Remediation: "Remove the annotation from the pod template (the finding gives the command) and restart the workload.",
	}
	Billed = &rules.Rule{
		ID: "LV010", Name: "billed-size", Category: rules.CategoryCost, Severity: rules.Info,
		Summary: "Fargate bills the pods at another size than their requests need now.",
		Doc: "fargate-scheduler sizes a pod when it starts and writes the size it bills in the pod's " +
			"`CapacityProvisioned` annotation. When the requests changed since (a pod created from an older template, " +
			"or in-place resizing), the bill follows the annotation, not the requests.",
		Remediation: "Restart the workload so that its pods are sized by their requests now.",
	}
	SubnetHeadroom = &rules.Rule{
		ID: "LV011", Name: "subnet-headroom", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "A Fargate profile's subnets have fewer free addresses than its workloads may need.",
		Doc: "Every Fargate pod has a network interface of its own, which takes an address of the subnet " +
			"fargate-scheduler picks (AWS keeps five per subnet: a /24 holds 251 Fargate pods). When no subnet of the " +
			"profile has a free address, new pods stay Pending with a fargate-scheduler event (LV003 quotes it) until " +
			"one frees. The headroom a profile needs is, over the workloads it matches, the replicas not running on " +
			"Fargate yet (up to a HorizontalPodAutoscaler's maxReplicas) plus the pods a rollout adds (a Deployment's or Rollout's maxSurge, 25% by default), or the " +
			"number given with --subnet-headroom. The free addresses are EC2's AvailableIpAddressCount, which counts " +
			"what else uses the subnets too; a subnet shared by several profiles counts for each.",
		Remediation: "Add a larger subnet to the profile (a new profile with it, since profiles are immutable, then " +
			"delete the old one: `fargatekit plan` checks the order), or free addresses in the subnets.",
	}
	CrashLooping = &rules.Rule{
		ID: "LV012", Name: "crash-looping", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary: "A workload's containers on Fargate do not start or keep exiting: they wait in CrashLoopBackOff.",
		Doc: "A pod admitted and placed can still fail: a container that cannot be created or started, or that exits, " +
			"is restarted with a growing back-off (CrashLoopBackOff, RunContainerError, CreateContainerError); one the " +
			"runtime cannot start, in a pod that is not restarted, ends with StartError and the pod fails. The finding " +
			"counts such pods on Fargate and quotes how the container last ended; crash loops on EC2 nodes are left to " +
			"the alerts for them. It names the cause where Fargate is one, and is then a blocker: a CPU limit above the " +
			"vCPU the pod was provisioned with (its CapacityProvisioned annotation) stops the container at every start " +
			"(FG025); a controller that asks the instance metadata service for what it is not told exits (FG027).",
		Remediation: "Where the finding names a cause, fix it as its FG rule says: set the container's request equal to its " +
			"limit (or lower the limit), or give the controller the flag or variable named, and let the workload roll out. " +
			"Otherwise read the container's logs (`kubectl logs --previous`) and its events.",
	}
)

// Rules lists the findings of scan about what runs, in documentation order.
var Rules = []*rules.Rule{Drift, ProfileGone, Refused, Unplaced, AZSkew, KubeletSkew, Stuck, NullNode, KeptOffFargate, Billed, SubnetHeadroom, CrashLooping}
