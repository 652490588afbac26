package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

func TestCommands(t *testing.T) {
	const (
		phase1   = "# Phase 1: create the new profiles, and remove nothing yet"
		phase2   = "# Phase 2: once every new profile is ACTIVE, make the rest of the change"
		move     = "# Move the pods to the new profiles now, at the pace of their rollout (phase 2 would stop them all at once, ignoring PodDisruptionBudgets)"
		restart  = "# If the change already ran as planned: recreate the pods left off Fargate, so that EKS places them again"
		nothing  = "# Nothing replaces the deleted profiles: the pods they placed leave Fargate for good (PL001, PL004)"
		remain   = "# The remaining profiles cover what the deleted ones selected; deleting a profile stops its pods at once (PodDisruptionBudgets are ignored)"
		eksctlNS = "eksctl create fargateprofile -f new.yaml   # creates the profiles of the file that do not exist yet"
	)
	wait := func(name string) string {
		return "aws eks wait fargate-profile-active --cluster-name shop --fargate-profile-name " + name
	}
	rollout := func(ns, name string) string {
		return "kubectl rollout restart -n " + ns + " deployment/" + name + " && kubectl rollout status -n " + ns + " deployment/" + name
	}
	terraform := Tool{Cluster: "shop", Terraform: true}
	eksctl := Tool{Cluster: "shop", Config: "new.yaml"}
	// withRole is a profile as Terraform or eksctl gives it: a role,
	// subnets and a selector with labels.
	withRole := func(name, ns string) *fargate.Profile {
		return &fargate.Profile{Name: name, PodExecutionRoleARN: "arn:aws:iam::1:role/pods", Subnets: []string{"subnet-a", "subnet-b"},
			Selectors: []fargate.Selector{{Namespace: ns, Labels: map[string]string{"app": "web"}}}}
	}
	web := workload("web", "web", map[string]string{"app": "web"})
	for _, tc := range []struct {
		name string
		in   Input
		tool Tool
		want []string
	}{
		{
			name: "no change: no command",
			tool: terraform,
		},
		{
			name: "only a profile known after apply: no command",
			in:   Input{Changes: []Change{{Address: "aws_eks_fargate_profile.jobs", After: profile("jobs", "jobs"), Unknown: true}}},
			tool: terraform,
		},
		{
			name: "terraform: the new profile by -target, the pods moved, then the rest",
			in: Input{Changes: []Change{
				{Address: "aws_eks_fargate_profile.orders", Before: profile("orders", "orders")},
				{Address: "aws_eks_fargate_profile.apps", After: profile("apps", "orders")},
			}, Workloads: []Workload{workload("orders", "orders", nil)}, NodeGroups: true},
			tool: terraform,
			want: []string{
				phase1,
				"terraform apply -target='aws_eks_fargate_profile.apps'",
				wait("apps"),
				move, rollout("orders", "orders"),
				phase2,
				"terraform apply",
				// In the worst order, apps comes after the deletion of orders.
				restart, rollout("orders", "orders"),
			},
		},
		{
			name: "terraform: a new name at the address of the old one cannot be targeted",
			in:   Input{Changes: []Change{{Address: "aws_eks_fargate_profile.web", Before: profile("web", "web"), After: profile("web-v2", "web")}}},
			tool: terraform,
			want: []string{
				phase1,
				"#   aws_eks_fargate_profile.web replaces web by web-v2 at one address, which -target cannot split: add web-v2 as a new resource (another key or name), apply it here, and remove web in phase 2",
				phase2,
				"terraform apply",
			},
		},
		{
			name: "eksctl: the file creates the new profiles, each old one is deleted",
			in: Input{Changes: []Change{
				{Address: "a", Before: profile("a", "a")},
				{Address: "n", After: profile("n", "a")},
				{Address: "x", Before: profile("x", "x")},
			}},
			tool: eksctl,
			want: []string{
				phase1,
				eksctlNS,
				wait("n"),
				phase2,
				"eksctl delete fargateprofile --cluster shop --name a --wait",
				"eksctl delete fargateprofile --cluster shop --name x --wait",
			},
		},
		{
			name: "terraform: deletions that the remaining profiles cover",
			in: Input{Changes: []Change{{Address: "aws_eks_fargate_profile.narrow", Before: profile("narrow", "web")}},
				Unchanged: []fargate.Profile{*profile("wide", "w*")}},
			tool: terraform,
			want: []string{remain, "terraform apply"},
		},
		{
			name: "eksctl: deletions that nothing replaces",
			in:   Input{Changes: []Change{{Address: "web", Before: profile("web", "web")}}},
			tool: eksctl,
			want: []string{nothing, "eksctl delete fargateprofile --cluster shop --name web --wait"},
		},
		{
			name: "terraform: a create-before-destroy replacement that keeps its name is bridged",
			in: Input{Changes: []Change{{Address: "aws_eks_fargate_profile.web", Before: withRole("web", "web"), After: withRole("web", "w*"), CreateBeforeDestroy: true}},
				Workloads: []Workload{web}, NodeGroups: true},
			tool: terraform,
			want: []string{
				phase1,
				"# web is deleted and created again under its name: the temporary profile web-bridge, with its old selectors, carries its pods meanwhile",
				"#   first set create_before_destroy = false for aws_eks_fargate_profile.web: EKS refuses the new web while the old one exists (PL006)",
				`aws eks create-fargate-profile --cluster-name shop --fargate-profile-name web-bridge --pod-execution-role-arn arn:aws:iam::1:role/pods --selectors '[{"namespace":"web","labels":{"app":"web"}}]' --subnets subnet-a subnet-b`,
				wait("web-bridge"),
				phase2,
				"terraform apply",
				wait("web"),
				"# web sorts before web-bridge, so it takes the restarted pods; then the temporary profile goes",
				rollout("web", "web"),
				"aws eks delete-fargate-profile --cluster-name shop --fargate-profile-name web-bridge",
				"aws eks wait fargate-profile-deleted --cluster-name shop --fargate-profile-name web-bridge",
			},
		},
		{
			name: "eksctl: a replacement in place is bridged, deleted, then created from the file",
			in: Input{Changes: []Change{{Address: "web", Before: profile("web", "web"), After: profile("web", "web", "api")}},
				Workloads: []Workload{web, workload("api", "api", nil)}, NodeGroups: true},
			tool: eksctl,
			want: []string{
				phase1,
				"# web is deleted and created again under its name: the temporary profile web-bridge, with its old selectors, carries its pods meanwhile",
				`aws eks create-fargate-profile --cluster-name shop --fargate-profile-name web-bridge --pod-execution-role-arn <the pod execution role of web> --selectors '[{"namespace":"web"}]'`,
				wait("web-bridge"),
				phase2,
				"eksctl delete fargateprofile --cluster shop --name web --wait",
				"eksctl create fargateprofile -f new.yaml",
				wait("web"),
				"# web sorts before web-bridge, so it takes the restarted pods; then the temporary profile goes",
				rollout("web", "web"), // not api, which web did not place
				"aws eks delete-fargate-profile --cluster-name shop --fargate-profile-name web-bridge",
				"aws eks wait fargate-profile-deleted --cluster-name shop --fargate-profile-name web-bridge",
				// In the worst order web is deleted before it is created again.
				restart, rollout("web", "web"), rollout("api", "api"),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Commands(Analyze(tc.in), tc.tool)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
