package clustersetup

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// The rules of this file judge ctx.Foundation: the infrastructure code given
// with --profiles (Terraform, CloudFormation, eksctl) or, in scan, the live
// AWS APIs. Without a foundation they report nothing.

// VPCDNS flags a cluster VPC without DNS support or DNS hostnames.
var VPCDNS = &rules.Rule{
	ID: "FG053", Name: "vpc-dns-disabled", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "The cluster's VPC has DNS support or DNS hostnames disabled: Fargate nodes are all named fargate-null and one pod runs.",
	Doc: "EKS on Fargate needs both `enableDnsSupport` and `enableDnsHostnames` on the cluster's VPC. With DNS hostnames " +
		"off, every Fargate node registers as `fargate-null`: the names collide and only one Fargate pod runs at a time " +
		"(`fargatekit scan` reports it live as LV008). A VPC Terraform creates has DNS hostnames off unless " +
		"`enable_dns_hostnames = true`; terraform-aws-modules/vpc and eksctl turn it on.",
	Remediation: "Terraform: `enable_dns_hostnames = true` and `enable_dns_support = true` on the aws_vpc (or the vpc " +
		"module's inputs of the same names). CloudFormation: `EnableDnsHostnames: true` and `EnableDnsSupport: true` on the " +
		"AWS::EC2::VPC. Live: `aws ec2 modify-vpc-attribute --vpc-id VPC --enable-dns-hostnames`.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		f := ctx.Foundation
		if f == nil {
			return
		}
		for _, id := range clusterVPCs(f) {
			v, ok := f.VPCByID(id)
			if !ok {
				continue
			}
			var off []string
			if v.DNSSupport != nil && !*v.DNSSupport {
				off = append(off, "DNS support")
			}
			if v.DNSHostnames != nil && !*v.DNSHostnames {
				off = append(off, "DNS hostnames")
			}
			if len(off) > 0 {
				report(at(v.Origin, "VPC %s has %s disabled: every Fargate node would be named fargate-null and only one Fargate pod runs",
					v.ID, strings.Join(off, " and ")))
			}
		}
	},
}

// PublicSubnet flags a profile subnet routed to an internet gateway.
var PublicSubnet = &rules.Rule{
	ID: "FG054", Name: "public-profile-subnet", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "A Fargate profile names a public subnet (one routed to an internet gateway): EKS refuses the profile.",
	Doc: "Fargate pods run only in private subnets: EKS refuses CreateFargateProfile when a subnet's route table has a " +
		"route to an internet gateway. The finding names the subnet, its route table and the route.",
	Remediation: "Give the profile private subnets: in Terraform `subnet_ids = module.vpc.private_subnets` (not " +
		"public_subnets); in CloudFormation the private AWS::EC2::Subnet resources; in eksctl subnets under " +
		"`vpc.subnets.private`.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		eachProfileSubnet(ctx.Foundation, report, func(f *foundation.Foundation, s *foundation.Subnet, rt *foundation.RouteTable, e foundation.Egress, profiles string) *rules.Finding {
			if e.Public == nil {
				return nil
			}
			fd := at(s.Origin, "subnet %s of Fargate profile %s is public: route table %s routes %s to internet gateway %s",
				s.ID, profiles, name(rt.Origin, rt.ID), e.Public.Destination, e.Public.TargetID)
			return &fd
		})
	},
}

// NoEgress flags a profile subnet from which images cannot be pulled.
var NoEgress = &rules.Rule{
	ID: "FG055", Name: "profile-subnet-without-egress", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "A Fargate profile's subnet has no default route through a NAT gateway and no ECR and S3 endpoints: images never pull.",
	Doc: "A Fargate pod pulls its images from its subnet. A private subnet needs a default route (0.0.0.0/0) through a NAT " +
		"gateway (or another hop: transit gateway, NAT instance, firewall), or, for images in Amazon ECR only, the VPC " +
		"endpoints `ecr.api` and `ecr.dkr` (interface) and `s3` (gateway, on the subnet's route table). Without either the " +
		"pods are scheduled and never start.",
	Remediation: "Add a NAT gateway and a default route to it in the subnet's route table (terraform-aws-modules/vpc: " +
		"`enable_nat_gateway = true`; eksctl: `vpc.nat.gateway: Single` or `HighlyAvailable`), or create the ecr.api, " +
		"ecr.dkr and s3 endpoints.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		eachProfileSubnet(ctx.Foundation, report, func(f *foundation.Foundation, s *foundation.Subnet, rt *foundation.RouteTable, e foundation.Egress, profiles string) *rules.Finding {
			if e.Public != nil || e.PullsImages() {
				return nil
			}
			fd := at(s.Origin, "subnet %s of Fargate profile %s cannot pull images: route table %s has no default route through a NAT gateway, and the VPC lacks the %s endpoints",
				s.ID, profiles, name(rt.Origin, rt.ID), strings.Join(e.MissingEndpoints, ", "))
			return &fd
		})
	},
}

// RoleTrust flags a pod execution role that does not trust Fargate.
var RoleTrust = &rules.Rule{
	ID: "FG056", Name: "pod-execution-role-trust", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "A Fargate profile's pod execution role does not trust eks-fargate-pods.amazonaws.com: EKS refuses the profile.",
	Doc: "The pod execution role's trust policy must allow the service principal `eks-fargate-pods.amazonaws.com` to " +
		"`sts:AssumeRole`. Otherwise CreateFargateProfile fails with `InvalidParameterException: " + foundation.MisconfiguredTrust + "`.",
	Remediation: "Use the trust policy of the EKS User Guide (pod-execution-role): Principal `{\"Service\": " +
		"\"eks-fargate-pods.amazonaws.com\"}`, Action `sts:AssumeRole`, with an `ArnLike` `aws:SourceArn` condition " +
		"`arn:aws:eks:REGION:ACCOUNT:fargateprofile/CLUSTER/*`.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		eachRole(ctx.Foundation, report, func(f *foundation.Foundation, r *foundation.Role, profiles []string) []rules.Finding {
			if r.Trust == "" {
				return nil
			}
			t, err := foundation.ParseTrust(r.Trust)
			switch {
			case err != nil && !t.Fargate:
				fd := at(r.Origin, "the trust policy of pod execution role %s of Fargate profile %s cannot be read (%v)", r.Name, strings.Join(profiles, ", "), err)
				fd.Severity = rules.Warning
				return []rules.Finding{fd}
			case !t.Fargate:
				return []rules.Finding{at(r.Origin, "pod execution role %s of Fargate profile %s does not trust %s: EKS refuses the profile (%s)",
					r.Name, strings.Join(profiles, ", "), foundation.FargatePrincipal, foundation.MisconfiguredTrust)}
			}
			return nil
		})
	},
}

// RoleSourceARN flags a trust policy whose aws:SourceArn condition names another cluster or account.
var RoleSourceARN = &rules.Rule{
	ID: "FG057", Name: "pod-execution-role-source-arn", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "The pod execution role's aws:SourceArn or aws:SourceAccount condition does not match the profile's cluster or account.",
	Doc: "The EKS User Guide scopes the pod execution role's trust to the cluster's profiles with the condition " +
		"`ArnLike aws:SourceArn arn:aws:eks:REGION:ACCOUNT:fargateprofile/CLUSTER/*`. A role copied from another cluster, " +
		"region or account keeps that cluster's ARN: Fargate cannot assume it for this cluster's profiles.",
	Unconfirmed: "What EKS answers then (CreateFargateProfile refused, or pods that never start) is not documented.",
	Remediation: "Change the condition to this cluster's profiles (`arn:aws:eks:REGION:ACCOUNT:fargateprofile/CLUSTER/*`), " +
		"or give each cluster a pod execution role of its own.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		eachRole(ctx.Foundation, report, func(f *foundation.Foundation, r *foundation.Role, profiles []string) []rules.Finding {
			t, err := foundation.ParseTrust(r.Trust)
			if r.Trust == "" || err != nil || !t.Fargate {
				return nil
			}
			var out []rules.Finding
			for _, p := range profiles {
				if bad := t.Foreign(f.Cluster, p); len(bad) > 0 {
					out = append(out, at(r.Origin, "the trust policy of pod execution role %s allows only %s: not Fargate profile %s of cluster %s",
						r.Name, strings.Join(bad, ", "), p, clusterName(f)))
				}
			}
			return out
		})
	},
}

// RolePolicy flags a pod execution role without AmazonEKSFargatePodExecutionRolePolicy.
var RolePolicy = &rules.Rule{
	ID: "FG058", Name: "pod-execution-role-policy", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "The pod execution role lacks AmazonEKSFargatePodExecutionRolePolicy: images from Amazon ECR do not pull.",
	Doc: "Fargate pulls the pods' images from Amazon ECR with the pod execution role, EKS's own images (CoreDNS) " +
		"included. The AWS managed policy `AmazonEKSFargatePodExecutionRolePolicy` grants that. A blocker when the role " +
		"has no policy at all; a warning when it has others, managed or inline, which may grant the same permissions " +
		"(fargatekit does not read their documents).",
	Remediation: "Attach `arn:aws:iam::aws:policy/AmazonEKSFargatePodExecutionRolePolicy` (Terraform: an " +
		"aws_iam_role_policy_attachment; CloudFormation: `ManagedPolicyArns`; live: `aws iam attach-role-policy`).",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		eachRole(ctx.Foundation, report, func(f *foundation.Foundation, r *foundation.Role, profiles []string) []rules.Finding {
			if !r.PoliciesKnown || r.HasPodExecutionPolicy() {
				return nil
			}
			fd := at(r.Origin, "pod execution role %s of Fargate profile %s has no %s: Fargate cannot pull images from Amazon ECR",
				r.Name, strings.Join(profiles, ", "), foundation.PodExecutionPolicy)
			switch others := r.OtherPolicies(); len(others) {
			case 0:
			case 1:
				fd.Severity, fd.Message = rules.Warning, fd.Message+" unless "+others[0]+" allows it"
			default:
				fd.Severity, fd.Message = rules.Warning, fd.Message+" unless one of "+strings.Join(others, ", ")+" allows it"
			}
			return []rules.Finding{fd}
		})
	},
}

// CoreDNSLabels are the labels of the CoreDNS pods EKS installs.
var CoreDNSLabels = map[string]string{"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}

// KubeSystemCapacity flags a cluster where CoreDNS has nowhere to run.
var KubeSystemCapacity = &rules.Rule{
	ID: "FG059", Name: "kube-system-without-capacity", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "No Fargate profile selects CoreDNS in kube-system and the cluster has no node group: DNS never runs.",
	Doc: "CoreDNS runs in kube-system. On a cluster without EC2 capacity (no node group, no self-managed nodes, no " +
		"Karpenter, no EKS Auto Mode) it needs a Fargate profile selecting namespace `kube-system` (labels, if any, " +
		"matching `k8s-app: kube-dns`), or it stays Pending and nothing in the cluster resolves names. Judged only when " +
		"the input describes the whole cluster (an aws_eks_cluster, an AWS::EKS::Cluster, an eksctl ClusterConfig).",
	Remediation: "Add a Fargate profile with the selector `namespace: kube-system` (terraform-aws-modules/eks: " +
		"`fargate_profiles = { kube_system = { selectors = [{ namespace = \"kube-system\" }] } }`), or a node group.",
	CheckCluster: func(ctx *rules.Context, _ *rules.Cluster, report func(rules.Finding)) {
		f := ctx.Foundation
		if f == nil || !f.CapacityKnown || f.HasCapacity() {
			return
		}
		for _, p := range f.Profiles {
			if p.Matches("kube-system", CoreDNSLabels) {
				return
			}
		}
		report(at(f.Cluster.Origin, "cluster %s has no node group and no Fargate profile selects CoreDNS (namespace kube-system, k8s-app=kube-dns): DNS stays Pending",
			clusterName(f)))
	},
}

// NoCapacity flags workloads no profile matches on a cluster without EC2 capacity.
var NoCapacity = &rules.Rule{
	ID: "FG060", Name: "no-capacity", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "The workload's pods do not go to Fargate and the cluster has no node group: they stay Pending.",
	Doc: "A pod no Fargate profile selects (or kept off Fargate by the `eks.amazonaws.com/compute-type: ec2` annotation, " +
		"a scheduler of its own) goes to the default scheduler, which places it on EC2 nodes. A cluster " +
		"whose infrastructure code declares no node group, no self-managed nodes, no Karpenter and no EKS Auto Mode has " +
		"none: the pods stay Pending. Judged only when the input describes the whole cluster.",
	Remediation: "Add a Fargate profile whose selector matches the workload's namespace and pod labels, or a node group.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		f := ctx.Foundation
		if f == nil || !f.CapacityKnown || f.HasCapacity() {
			return
		}
		for w := range c.Workloads.All() {
			if w.Placement.Fargate || w.Ref.Kind == "DaemonSet" {
				continue
			}
			why := "its pods stay off Fargate (" + w.Placement.Reason + ")"
			if w.Placement.Reason == fargate.ReasonNoProfile {
				why = "no Fargate profile matches namespace " + w.Namespace + " and labels " + labelsText(w.Labels)
			}
			report(rules.AtWorkload(w, "%s, and cluster %s has no node group: the pods stay Pending", why, clusterName(f)))
		}
	},
}

// ImageOutsideECR flags images that do not pull from the subnets of the
// workload's profile that reach only Amazon ECR.
var ImageOutsideECR = &rules.Rule{
	ID: "FG062", Name: "image-outside-ecr", Category: rules.CategoryConfig, Severity: rules.Blocker,
	Summary: "The image is not in a private Amazon ECR registry, and the Fargate profile's subnets reach only ECR (VPC endpoints, no NAT route): the pods never start.",
	Doc: "A private subnet without a default route out reaches Amazon ECR through the `ecr.api`, `ecr.dkr` and `s3` VPC " +
		"endpoints, and no other registry: an image on Docker Hub, Quay, GitHub's registry or ECR Public (`public.ecr.aws`) " +
		"does not pull, and the pod waits in `ImagePullBackOff`. eksctl builds fully private clusters " +
		"(`privateCluster.enabled`) so. Judged on the subnets of the profile that takes the workload; when only some of " +
		"them lack a NAT route, the pods fargate-scheduler places there never start.",
	Remediation: "Push the image to a private ECR repository, or let ECR fetch it (a pull-through cache rule serves Docker " +
		"Hub, Quay, GitHub's registry and ECR Public images through the same endpoints) and use that reference; or give the " +
		"subnets a NAT route.",
	Check: rules.OnFargatePods(func(ctx *rules.Context, obj *object.Object, w *rules.Workload) []rules.Finding {
		f := ctx.Foundation
		if f == nil {
			return nil
		}
		p, ok := f.ProfileByName(w.Placement.Profile)
		if !ok {
			return nil
		}
		var out []rules.Finding
		for _, c := range obj.Pod.Containers() {
			var only []string
			for _, s := range p.Subnets {
				if f.Pull(s, p.PodExecutionRoleARN, c.Image) == foundation.PullOnlyECR {
					only = append(only, s)
				}
			}
			if len(only) == 0 {
				continue
			}
			where := "the subnets of Fargate profile " + p.Name + " reach"
			if len(only) < len(p.Subnets) {
				where = "subnet " + strings.Join(only, ", ") + " of Fargate profile " + p.Name + " reaches"
			}
			out = append(out, rules.At(obj, c.Path(obj.Pod, "image"),
				"image %s of container %q is not in a private Amazon ECR registry, and %s only ECR (VPC endpoints, no NAT route): pods placed there never start",
				c.Image, c.Name, where))
		}
		return out
	}),
}

func at(o foundation.Origin, format string, args ...any) rules.Finding {
	return rules.Finding{Object: o.Ref, Source: o.Source, Message: fmt.Sprintf(format, args...)}
}

// name is how a message names a resource: its address or logical ID when it
// has one, else its ID (an eksctl ClusterConfig names the cluster, not the
// resource).
func name(o foundation.Origin, id string) string {
	if o.Ref.Name != "" && o.Ref.Name != id && o.Ref.Kind != "ClusterConfig" {
		return o.Ref.Name + " (" + id + ")"
	}
	return id
}

func clusterName(f *foundation.Foundation) string {
	if f.Cluster.Name == "" {
		return "(unnamed)"
	}
	return f.Cluster.Name
}

// labelsText writes a pod's labels as a selector would name them.
func labelsText(l map[string]string) string {
	if len(l) == 0 {
		return "(none)"
	}
	return labels.Set(l).String()
}

// clusterVPCs are the VPCs the cluster uses: its own when known, else those
// of the profiles' subnets, else the only VPC of the input.
func clusterVPCs(f *foundation.Foundation) []string {
	if f.Cluster.VPC != "" {
		return []string{f.Cluster.VPC}
	}
	var out []string
	for _, p := range f.Profiles {
		for _, id := range p.Subnets {
			if s, ok := f.SubnetByID(id); ok && s.VPC != "" && !slices.Contains(out, s.VPC) {
				out = append(out, s.VPC)
			}
		}
	}
	if len(out) == 0 && len(f.VPCs) == 1 {
		out = append(out, f.VPCs[0].ID)
	}
	return out
}

// eachProfileSubnet calls judge once per subnet of the profiles whose route
// table is known, with the names of the profiles that use it.
func eachProfileSubnet(f *foundation.Foundation, report func(rules.Finding), judge func(*foundation.Foundation, *foundation.Subnet, *foundation.RouteTable, foundation.Egress, string) *rules.Finding) {
	if f == nil {
		return
	}
	users := map[string][]string{}
	var order []string
	for _, p := range f.Profiles {
		for _, id := range p.Subnets {
			if users[id] == nil {
				order = append(order, id)
			}
			if !slices.Contains(users[id], p.Name) {
				users[id] = append(users[id], p.Name)
			}
		}
	}
	for _, id := range order {
		s, ok := f.SubnetByID(id)
		if !ok {
			continue
		}
		rt, ok := f.RouteTableOf(s)
		if !ok {
			continue
		}
		if fd := judge(f, s, rt, f.EgressOf(s, rt), strings.Join(users[id], ", ")); fd != nil {
			report(*fd)
		}
	}
}

// eachRole calls judge once per pod execution role the profiles name and the
// input describes, with the names of those profiles.
func eachRole(f *foundation.Foundation, report func(rules.Finding), judge func(*foundation.Foundation, *foundation.Role, []string) []rules.Finding) {
	if f == nil {
		return
	}
	users := map[*foundation.Role][]string{}
	var order []*foundation.Role
	for _, p := range f.Profiles {
		r, ok := f.Role(p.PodExecutionRoleARN)
		if !ok {
			continue
		}
		if users[r] == nil {
			order = append(order, r)
		}
		users[r] = append(users[r], p.Name)
	}
	for _, r := range order {
		for _, fd := range judge(f, r, users[r]) {
			report(fd)
		}
	}
}
