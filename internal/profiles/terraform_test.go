package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// The subnets of the fixtures in testdata/terraform.
var tfSubnets = []string{"subnet-0a7c3e51d2b94f601", "subnet-0b8d4f62e3ca5a712", "subnet-0c9e5a73f4db6b823"}

const (
	tfVersion  = "1.9.8"
	eksNodes   = `module.eks.module.eks_managed_node_group["default"].aws_eks_node_group.this[0]`
	eksFargate = `module.eks.module.fargate_profile["%s"].aws_eks_fargate_profile.this[0]`
	tfFixtures = "testdata/terraform"
	// incidentPlan is the Terraform plan of the profile-merge incident,
	// kept once in examples/incident/ (relative to tfFixtures).
	incidentPlan = "../../../../examples/incident/plan.json"
	clusterShop  = "shop"
)

func fp(key string) string { return strings.Replace(eksFargate, "%s", key, 1) }

// sel is a selector; labels are key, value pairs.
func sel(namespace string, labels ...string) fargate.Selector {
	s := fargate.Selector{Namespace: namespace}
	for i := 0; i+1 < len(labels); i += 2 {
		if s.Labels == nil {
			s.Labels = map[string]string{}
		}
		s.Labels[labels[i]] = labels[i+1]
	}
	return s
}

func prof(name, status string, subnets []string, sels ...fargate.Selector) *fargate.Profile {
	return &fargate.Profile{Name: name, Status: status, Subnets: subnets, Selectors: sels}
}

// The pod execution roles of the fixtures: shopRole, and modRole(k) of
// fargate_profile["k"] of the eks module.
const shopRole = "arn:aws:iam::111122223333:role/shop-fargate-pod-execution"

func modRole(key string) string {
	return "arn:aws:iam::111122223333:role/" + key + "-20240611093512345600000001"
}

// role sets the profile's pod execution role.
func role(arn string, p *fargate.Profile) *fargate.Profile {
	p.PodExecutionRoleARN = arn
	return p
}

// ng is a node group of cluster shop present before and after, of desired size 2.
func ng(address string) NodeGroup {
	return NodeGroup{Address: address, Cluster: clusterShop, Before: true, After: true, DesiredSize: 2}
}

func TestParseTerraformFixtures(t *testing.T) {
	active := fargate.StatusActive
	for _, tc := range []struct {
		file string
		want TerraformPlan
		// ec2 is EC2Capacity for each cluster, "" meaning any.
		ec2 map[string]bool
	}{
		{file: incidentPlan, want: TerraformPlan{
			Changes: []ProfileChange{
				// The role of apps is created by the plan: unknown.
				{Address: fp("apps"), Cluster: clusterShop, Action: ActionCreate,
					After: prof("apps", "", tfSubnets, sel("orders"), sel("payments"), sel("catalog"), sel("shipping"))},
				{Address: fp("catalog"), Cluster: clusterShop, Action: ActionDelete,
					Before: role(modRole("catalog"), prof("catalog", active, tfSubnets, sel("catalog")))},
				{Address: fp("orders"), Cluster: clusterShop, Action: ActionDelete,
					Before: role(modRole("orders"), prof("orders", active, tfSubnets, sel("orders")))},
				{Address: fp("payments"), Cluster: clusterShop, Action: ActionDelete,
					Before: role(modRole("payments"), prof("payments", active, tfSubnets, sel("payments")))},
				{Address: fp("shipping"), Cluster: clusterShop, Action: ActionDelete,
					Before: role(modRole("shipping"), prof("shipping", active, tfSubnets, sel("shipping")))},
			},
			NodeGroups: []NodeGroup{ng(eksNodes)},
		}, ec2: map[string]bool{clusterShop: true, "": true, "other": false}},
		{file: "add-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: fp("kube-system"), Cluster: clusterShop, Action: ActionNoop,
					Before: role(modRole("kube-system"), prof("kube-system", active, tfSubnets, sel("kube-system"))),
					After:  role(modRole("kube-system"), prof("kube-system", active, tfSubnets, sel("kube-system")))},
				{Address: "module.fargate_profile_batch.aws_eks_fargate_profile.this[0]", Cluster: clusterShop, Action: ActionCreate,
					After: prof("batch", "", tfSubnets, sel("batch", "workload", "batch"))},
			},
		}, ec2: map[string]bool{clusterShop: false, "": false}},
		{file: "remove-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.legacy", Cluster: clusterShop, Action: ActionDelete,
					Before: role(shopRole, prof("legacy", active, tfSubnets, sel("legacy", "app", "monolith")))},
				{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionNoop,
					Before: role(shopRole, prof("web", active, tfSubnets, sel("web"))), After: role(shopRole, prof("web", active, tfSubnets, sel("web")))},
			},
			NodeGroups: []NodeGroup{ng("aws_eks_node_group.system")},
		}, ec2: map[string]bool{clusterShop: true}},
		{file: "replace-cbd.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionReplace, CreateBeforeDestroy: true,
				Before: role(shopRole, prof("web", active, tfSubnets, sel("web", "tier", "frontend"))),
				After:  role(shopRole, prof("web", "", tfSubnets, sel("web"), sel("web-canary")))}},
		}},
		{file: "replace-destroy-first.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionReplace,
				Before: role(shopRole, prof("web", active, tfSubnets, sel("web", "tier", "frontend"))),
				After:  role(shopRole, prof("web", "", tfSubnets, sel("web"), sel("web-canary")))}},
		}},
		{file: "subnets-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: fp("web"), Cluster: clusterShop, Action: ActionReplace,
				Before: role(modRole("web"), prof("web", active, tfSubnets, sel("web"))),
				After:  role(modRole("web"), prof("web", "", tfSubnets[:2], sel("web")))}},
			NodeGroups: []NodeGroup{ng(eksNodes)},
		}},
		{file: "wildcard.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.teams", Cluster: clusterShop, Action: ActionNoop,
					Before: role(shopRole, prof("teams", active, tfSubnets, sel("team-*"))), After: role(shopRole, prof("teams", active, tfSubnets, sel("team-*")))},
				{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionCreate,
					After: role(shopRole, prof("web", "", tfSubnets, sel("prod", "app", "web-?"), sel("staging-*", "app", "web-*", "tier", "front?nd")))},
			},
		}},
		{file: "state.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.default", Cluster: clusterShop, Action: ActionNoop,
					Before: role(shopRole, prof("default", active, tfSubnets, sel("default"))), After: role(shopRole, prof("default", active, tfSubnets, sel("default")))},
				{Address: fp("kube-system"), Cluster: clusterShop, Action: ActionNoop,
					Before: role(modRole("kube-system"), prof("kube-system", active, tfSubnets, sel("kube-system", "k8s-app", "kube-dns"))),
					After:  role(modRole("kube-system"), prof("kube-system", active, tfSubnets, sel("kube-system", "k8s-app", "kube-dns")))},
			},
			NodeGroups: []NodeGroup{ng(eksNodes)},
		}, ec2: map[string]bool{clusterShop: true}},
		{file: "no-fargate.plan.json", want: TerraformPlan{}, ec2: map[string]bool{"": false}},
		{file: "unknown-values.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				// The name falls back to the address's last element; the
				// selector keeps its known labels.
				{Address: "aws_eks_fargate_profile.jobs", Cluster: clusterShop, Action: ActionCreate,
					After:   role(shopRole, prof("jobs", "", nil, sel("", "app", "jobs"))),
					Unknown: []string{"fargate_profile_name", "selector", "subnet_ids"}},
				{Address: "aws_eks_fargate_profile.ops", Cluster: clusterShop, Action: ActionUpdate,
					Before: role(shopRole, prof("ops", active, tfSubnets, sel("ops"))), After: role(shopRole, prof("ops", active, tfSubnets, sel("ops")))},
			},
		}},
		{file: "node-groups.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionCreate,
				After: role(shopRole, prof("web", "", tfSubnets, sel("web")))}},
			NodeGroups: []NodeGroup{
				// Another cluster's, its desired size known after apply.
				{Address: "aws_eks_node_group.analytics", Cluster: "analytics", Before: true, After: true, DesiredSize: -1},
				// Created by the plan: not there before.
				{Address: "aws_eks_node_group.arm", Cluster: clusterShop, After: true, DesiredSize: 2},
				{Address: "aws_eks_node_group.spare", Cluster: clusterShop, Before: true, After: true, DesiredSize: 0},
				// Deleted by the plan.
				{Address: "aws_eks_node_group.system", Cluster: clusterShop, Before: true, DesiredSize: 2},
			},
		}, ec2: map[string]bool{clusterShop: false, "analytics": true, "": true}},
		{file: "deposed.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionNoop,
					Before: role(shopRole, prof("web-v2", active, tfSubnets, sel("web"), sel("web-canary"))),
					After:  role(shopRole, prof("web-v2", active, tfSubnets, sel("web"), sel("web-canary")))},
				{Address: "aws_eks_fargate_profile.web (deposed 5f2c1a9e)", Cluster: clusterShop, Action: ActionDelete,
					Before: role(shopRole, prof("web", active, tfSubnets, sel("web", "tier", "frontend")))},
			},
			NodeGroups: []NodeGroup{
				{Address: "aws_eks_node_group.system", Cluster: clusterShop, Before: true, After: true, DesiredSize: 2},
				{Address: "aws_eks_node_group.system (deposed 3b7d9e21)", Cluster: clusterShop, Before: true, DesiredSize: 2},
			},
		}, ec2: map[string]bool{clusterShop: true}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(tfFixtures, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseTerraform(tc.file, data)
			if err != nil {
				t.Fatal(err)
			}
			tc.want.TerraformVersion = tfVersion
			// Clusters and versions: TestParseTerraformVersions; the foundation: TestTerraformFoundation.
			ignore := cmp.Options{cmpopts.IgnoreFields(NodeGroup{}, "Name", "Version", "ReleaseVersion"), cmpopts.IgnoreFields(TerraformPlan{}, "Clusters", "Foundation")}
			if diff := cmp.Diff(&tc.want, got, cmpopts.EquateEmpty(), ignore); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for cluster, want := range tc.ec2 {
				if got := got.EC2Capacity(cluster); got != want {
					t.Errorf("EC2Capacity(%q) = %v, want %v", cluster, got, want)
				}
			}
		})
	}
}

func TestEC2Capacity(t *testing.T) {
	shop := func(before, after bool, size int) NodeGroup {
		return NodeGroup{Address: "aws_eks_node_group.n", Cluster: clusterShop, Before: before, After: after, DesiredSize: size}
	}
	for _, tc := range []struct {
		name    string
		groups  []NodeGroup
		cluster string
		want    bool
	}{
		{name: "none", cluster: clusterShop},
		{name: "kept", groups: []NodeGroup{shop(true, true, 2)}, cluster: clusterShop, want: true},
		{name: "kept, any cluster", groups: []NodeGroup{shop(true, true, 2)}, want: true},
		{name: "unknown size counts", groups: []NodeGroup{shop(true, true, -1)}, cluster: clusterShop, want: true},
		{name: "scaled to zero", groups: []NodeGroup{shop(true, true, 0)}, cluster: clusterShop},
		{name: "deleted", groups: []NodeGroup{shop(true, false, 2)}, cluster: clusterShop},
		{name: "created", groups: []NodeGroup{shop(false, true, 2)}, cluster: clusterShop},
		{name: "another cluster's", groups: []NodeGroup{shop(true, true, 2)}, cluster: "analytics"},
		{name: "one of several", groups: []NodeGroup{shop(true, false, 2), shop(true, true, 0), shop(true, true, 1)}, cluster: clusterShop, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &TerraformPlan{NodeGroups: tc.groups}
			if got := p.EC2Capacity(tc.cluster); got != tc.want {
				t.Errorf("EC2Capacity(%q) = %v, want %v", tc.cluster, got, tc.want)
			}
		})
	}
}

func TestTerraformPlanCluster(t *testing.T) {
	p := &TerraformPlan{Changes: []ProfileChange{{Address: "a"}, {Address: "b", Cluster: "shop"}, {Address: "c", Cluster: "other"}}}
	if got := p.Cluster(); got != "shop" {
		t.Errorf("Cluster() = %q, want shop", got)
	}
	if got := (&TerraformPlan{}).Cluster(); got != "" {
		t.Errorf("Cluster() of no change = %q, want empty", got)
	}
}

// tfPlan is a plan with one aws_eks_fargate_profile change.
func tfPlan(change string) string {
	return `{"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": [{
		"address": "module.m.aws_eks_fargate_profile.p[\"k\"]", "module_address": "module.m",
		"mode": "managed", "type": "aws_eks_fargate_profile", "name": "p", "index": "k", "change": ` + change + `}]}`
}

const tfWeb = `{"cluster_name": "c", "fargate_profile_name": "web", "selector": [{"namespace": "web", "labels": null}], "subnet_ids": null, "status": "ACTIVE"}`

func TestParseTerraformChanges(t *testing.T) {
	web := prof("web", fargate.StatusActive, nil, sel("web"))
	for _, tc := range []struct {
		name, data string
		want       []ProfileChange
		wantErr    string
	}{
		{name: "read is ignored", data: tfPlan(`{"actions": ["read"], "before": null, "after": ` + tfWeb + `}`)},
		{name: "forget keeps the profile", data: tfPlan(`{"actions": ["forget"], "before": ` + tfWeb + `, "after": null}`),
			want: []ProfileChange{{Address: `module.m.aws_eks_fargate_profile.p["k"]`, Cluster: "c", Action: ActionForget, Before: web, After: web}}},
		{name: "everything unknown", data: tfPlan(`{"actions": ["create"], "before": null, "after": {}, "after_unknown": true}`),
			want: []ProfileChange{{Address: `module.m.aws_eks_fargate_profile.p["k"]`, Action: ActionCreate, After: prof(`p["k"]`, "", nil),
				Unknown: []string{"cluster_name", "fargate_profile_name", "selector", "subnet_ids"}}}},
		{name: "unknown parts are left out", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"cluster_name": "c", "fargate_profile_name": "web", "pod_execution_role_arn": "arn:aws:iam::111122223333:role/r",
				"selector": [null, {"labels": {"a": null, "b": "c"}}], "subnet_ids": ["s1", null]},
			"after_unknown": {"selector": [true, {"namespace": true, "labels": {"a": true}}], "subnet_ids": [false, true]}}`),
			want: []ProfileChange{{Address: `module.m.aws_eks_fargate_profile.p["k"]`, Cluster: "c", Action: ActionCreate,
				After:   role("arn:aws:iam::111122223333:role/r", prof("web", "", []string{"s1"}, sel("", "b", "c"))),
				Unknown: []string{"selector", "subnet_ids"}}}},
		{name: "a deposed object", data: strings.Replace(tfPlan(`{"actions": ["delete"], "before": `+tfWeb+`, "after": null}`),
			`"mode"`, `"deposed": "00f1e2d3", "mode"`, 1),
			want: []ProfileChange{{Address: `module.m.aws_eks_fargate_profile.p["k"] (deposed 00f1e2d3)`, Cluster: "c", Action: ActionDelete, Before: web}}},
		{name: "no change", data: tfPlan(`null`)},
		{name: "a data source", data: strings.Replace(tfPlan(`{"actions": ["read"]}`), `"managed"`, `"data"`, 1)},
		{name: "unexpected actions", data: tfPlan(`{"actions": ["delete", "delete"]}`),
			wantErr: `plan.json: module.m.aws_eks_fargate_profile.p["k"]: unexpected change actions ["delete" "delete"]`},
		{name: "no actions", data: tfPlan(`{"actions": []}`), wantErr: "unexpected change actions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTerraform("plan.json", []byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Changes, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// tfMalformed is a profile of tfPlan with one attribute replaced: the change
// creates it, or deletes it when before is true.
func tfMalformed(attr, value string, before bool) string {
	v := strings.Replace(`{"cluster_name": "c", "fargate_profile_name": "web", "selector": [{"namespace": "web", "labels": {"app": "web"}}], "subnet_ids": ["s"]}`,
		`"`+attr+`": `, `"`+attr+`": `+value+`, "x-`+attr+`": `, 1)
	if before {
		return tfPlan(`{"actions": ["delete"], "before": ` + v + `, "after": null, "after_unknown": {}}`)
	}
	return tfPlan(`{"actions": ["create"], "before": null, "after": ` + v + `, "after_unknown": {}}`)
}

func TestParseTerraformMalformed(t *testing.T) {
	const addr = `plan.json: module.m.aws_eks_fargate_profile.p["k"]: `
	for _, tc := range []struct {
		name, data string
		wantErr    []string
	}{
		{name: "name a number", data: tfMalformed("fargate_profile_name", "3", false), wantErr: []string{addr + "after.fargate_profile_name is 3, not a string"}},
		{name: "name null", data: tfMalformed("fargate_profile_name", "null", false), wantErr: []string{addr + "after.fargate_profile_name is null, not a string"}},
		{name: "name missing, not unknown", data: tfPlan(`{"actions": ["create"], "before": null, "after": {"selector": [{"namespace": "web"}]}, "after_unknown": {}}`),
			wantErr: []string{addr + "after.fargate_profile_name is null, not a string"}},
		{name: "name of a deleted profile", data: tfMalformed("fargate_profile_name", `{"a": 1}`, true),
			wantErr: []string{addr + `before.fargate_profile_name is {"a":1}, not a string`}},
		{name: "namespace null", data: tfMalformed("namespace", "null", false), wantErr: []string{addr + "after.selector[0].namespace is null, not a string"}},
		{name: "namespace missing", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"fargate_profile_name": "web", "selector": [{"namespace": "web"}, {"labels": {}}]}, "after_unknown": {}}`),
			wantErr: []string{addr + "after.selector[1].namespace is null, not a string"}},
		{name: "namespace empty", data: tfMalformed("namespace", `""`, false), wantErr: []string{addr + "after.selector[0].namespace is empty"}},
		{name: "namespace a list", data: tfMalformed("namespace", `["web"]`, false), wantErr: []string{addr + `after.selector[0].namespace is ["web"], not a string`}},
		{name: "selector a number", data: tfMalformed("selector", `[{"namespace": "web"}, 1]`, false), wantErr: []string{addr + "after.selector[1] is 1, not an object"}},
		{name: "selector null, not unknown", data: tfMalformed("selector", `[null]`, false), wantErr: []string{addr + "after.selector[0] is null, not an object"}},
		{name: "selector an object", data: tfMalformed("selector", `{"namespace": "web"}`, false), wantErr: []string{addr + `after.selector is {"namespace":"web"}, not a list`}},
		{name: "labels a list", data: tfMalformed("labels", `["app"]`, false), wantErr: []string{addr + `after.selector[0].labels is ["app"], not a map of strings`}},
		{name: "label a number", data: tfMalformed("labels", `{"app": "web", "tier": 1}`, false), wantErr: []string{addr + `after.selector[0].labels["tier"] is 1, not a string`}},
		{name: "label null, not unknown", data: tfMalformed("labels", `{"app": null}`, false), wantErr: []string{addr + `after.selector[0].labels["app"] is null, not a string`}},
		{name: "subnets a string", data: tfMalformed("subnet_ids", `"s"`, false), wantErr: []string{addr + `after.subnet_ids is "s", not a list`}},
		{name: "subnet a number", data: tfMalformed("subnet_ids", `["s", 2]`, false), wantErr: []string{addr + `after.subnet_ids[1] is 2, not a string`}},
		{name: "every problem", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"fargate_profile_name": 3, "selector": [1, {"namespace": ["x"], "labels": {"a": 1, "b": "c"}}], "subnet_ids": "s"}, "after_unknown": {"selector": "x"}}`),
			wantErr: []string{addr + "after.fargate_profile_name is 3", "\n" + addr[len("plan.json: "):] + "after.selector[0] is 1",
				"selector[1].namespace is", `selector[1].labels["a"] is 1`, "after.subnet_ids is"}},
		{name: "replacement without after", data: tfPlan(`{"actions": ["create", "delete"], "before": ` + tfWeb + `, "after": null}`),
			wantErr: []string{addr + `actions ["create" "delete"] with after null, not an object`}},
		{name: "replacement without before", data: tfPlan(`{"actions": ["delete", "create"], "before": null, "after": ` + tfWeb + `}`),
			wantErr: []string{addr + `actions ["delete" "create"] with before null, not an object`}},
		{name: "replacement with neither", data: tfPlan(`{"actions": ["delete", "create"], "before": null, "after": null}`),
			wantErr: []string{"with before null", "with after null"}},
		{name: "update without after", data: tfPlan(`{"actions": ["update"], "before": ` + tfWeb + `, "after": []}`),
			wantErr: []string{addr + `actions ["update"] with after [], not an object`}},
		{name: "a deposed object", data: strings.Replace(tfMalformed("namespace", `""`, true), `"mode"`, `"deposed": "00f1e2d3", "mode"`, 1),
			wantErr: []string{`plan.json: module.m.aws_eks_fargate_profile.p["k"] (deposed 00f1e2d3): before.selector[0].namespace is empty`}},
		{name: "in a state", data: `{"format_version": "1.0", "terraform_version": "1.9.8", "values": {"root_module": {"resources": [
			{"address": "aws_eks_fargate_profile.web", "mode": "managed", "type": "aws_eks_fargate_profile", "name": "web",
			 "values": {"cluster_name": "c", "fargate_profile_name": "web", "selector": [{"namespace": null}]}}]}}}`,
			wantErr: []string{"plan.json: aws_eks_fargate_profile.web: selector[0].namespace is null, not a string"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTerraform("plan.json", []byte(tc.data))
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			if got != nil {
				t.Errorf("a plan with an error: %+v", got)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if n := strings.Count(err.Error(), "plan.json"); n != 1 {
				t.Errorf("error %q names the file %d times", err, n)
			}
		})
	}
}

func TestParseTerraformNodeGroups(t *testing.T) {
	const ngValues = `{"cluster_name": "shop", "node_group_name": "n", "version": "1.33", "release_version": "1.33.5-20251016",
		"scaling_config": [{"desired_size": 2, "max_size": 3, "min_size": 1}]}`
	plan := func(change string) string {
		return `{"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": [{
			"address": "aws_eks_node_group.n", "mode": "managed", "type": "aws_eks_node_group", "name": "n", "change": ` + change + `}]}`
	}
	const addr = "aws_eks_node_group.n"
	for _, tc := range []struct {
		name, data string
		want       []NodeGroup
	}{
		{name: "forget: it stays", data: plan(`{"actions": ["forget"], "before": ` + ngValues + `, "after": null}`),
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: 2, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"}}},
		{name: "replaced, scaled to zero", data: plan(`{"actions": ["delete", "create"], "before": ` + ngValues + `,
			"after": {"cluster_name": "shop", "scaling_config": [{"desired_size": 0}]}, "after_unknown": {"arn": true}}`),
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: 0, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"}}},
		{name: "cluster unknown after: the one before", data: plan(`{"actions": ["create", "delete"], "before": ` + ngValues + `,
			"after": {"scaling_config": [{"desired_size": 2}]}, "after_unknown": {"cluster_name": true}}`),
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: 2, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"}}},
		{name: "scaling_config unknown", data: plan(`{"actions": ["update"], "before": ` + ngValues + `,
			"after": {"cluster_name": "shop"}, "after_unknown": {"scaling_config": true}}`),
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: -1, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"}}},
		{name: "desired size of the wrong type", data: plan(`{"actions": ["no-op"], "before": {"cluster_name": "shop", "scaling_config": [{"desired_size": "2"}]},
			"after": {"cluster_name": "shop", "scaling_config": [{"desired_size": "2"}]}}`),
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: -1}}},
		{name: "a read", data: plan(`{"actions": ["read"], "before": null, "after": ` + ngValues + `}`)},
		{name: "only in the prior state (a plan with -target)", data: `{"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": [],
			"prior_state": {"format_version": "1.0", "values": {"root_module": {"resources": [
				{"address": "aws_eks_node_group.n", "mode": "managed", "type": "aws_eks_node_group", "name": "n", "values": ` + ngValues + `},
				{"address": "aws_eks_node_group.n", "mode": "managed", "type": "aws_eks_node_group", "name": "n", "deposed_key": "0a1b2c3d", "values": ` + ngValues + `}]}}}}`,
			want: []NodeGroup{{Address: addr, Cluster: "shop", Before: true, After: true, DesiredSize: 2, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"},
				{Address: addr + " (deposed 0a1b2c3d)", Cluster: "shop", Before: true, After: true, DesiredSize: 2, Name: "n", Version: "1.33", ReleaseVersion: "1.33.5-20251016"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTerraform("plan.json", []byte(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.NodeGroups, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseTerraformErrors(t *testing.T) {
	badVersion, err := os.ReadFile(filepath.Join(tfFixtures, "bad-version.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	errored, err := os.ReadFile(filepath.Join(tfFixtures, "errored.plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, data string
		wantErr    []string
	}{
		{name: "bad version", data: string(badVersion),
			wantErr: []string{`f.json: reading Terraform plan (format_version "2.0")`, `"2.0.0" does not satisfy ">= 0.1, < 2.0"`}},
		{name: "bad state version", data: `{"format_version": "0.0.1", "values": {}}`,
			wantErr: []string{`reading Terraform state (format_version "0.0.1")`, `does not satisfy ">= 0.1, < 2.0"`}},
		{name: "invalid version", data: `{"format_version": "one", "resource_changes": []}`, wantErr: []string{`invalid format version "one"`}},
		{name: "not JSON", data: "format_version: 1.2\n", wantErr: []string{"f.json: not JSON"}},
		{name: "empty", data: "", wantErr: []string{"not JSON"}},
		{name: "truncated", data: `{"format_version": "1.2", "resource_changes": [`, wantErr: []string{"not JSON"}},
		{name: "array", data: `[{"format_version": "1.2"}]`, wantErr: []string{"not `terraform show -json` output", "resource_changes (a saved plan) or values (a state)"}},
		{name: "null", data: `null`, wantErr: []string{"not `terraform show -json` output"}},
		{name: "other JSON", data: `{"fargateProfile": {"fargateProfileName": "web"}}`, wantErr: []string{"expected a JSON object with format_version"}},
		{name: "raw tfstate", data: `{"version": 4, "terraform_version": "1.9.8", "serial": 7, "lineage": "3f0c", "outputs": {}, "resources": []}`,
			wantErr: []string{"raw Terraform state (terraform.tfstate) is not read", "terraform show -json"}},
		{name: "wrong types", data: `{"format_version": "1.2", "resource_changes": {"a": 1}}`, wantErr: []string{"reading Terraform plan", "cannot unmarshal"}},
		{name: "errored plan", data: string(errored),
			wantErr: []string{`f.json: the plan is incomplete: planning failed ("errored": true)`, "save the plan again"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTerraform("f.json", []byte(tc.data))
			if err == nil {
				t.Fatalf("no error, got %+v", got)
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			// The file once, first: callers add nothing.
			if !strings.HasPrefix(err.Error(), "f.json: ") || strings.Count(err.Error(), "f.json") != 1 {
				t.Errorf("error %q does not name the file once, first", err)
			}
		})
	}
}

func TestParseTerraformEmptyState(t *testing.T) {
	// `terraform show -json` of an empty state prints no values.
	got, err := ParseTerraform("state.json", []byte(`{"format_version": "1.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Changes) != 0 || len(got.NodeGroups) != 0 {
		t.Errorf("got %+v, want nothing", got)
	}
}

func TestParseDetectsTerraform(t *testing.T) {
	for _, tc := range []struct {
		name, file, data string
		wantProfiles     []string // name/status
		wantErr          string
	}{
		{name: "plan: the profiles after it", file: incidentPlan, wantProfiles: []string{"apps/"}},
		{name: "plan: deleted profiles are gone", file: "remove-only.plan.json", wantProfiles: []string{"web/ACTIVE"}},
		{name: "plan: replaced profiles once", file: "replace-cbd.plan.json", wantProfiles: []string{"web/"}},
		{name: "state: every profile", file: "state.json", wantProfiles: []string{"default/ACTIVE", "kube-system/ACTIVE"}},
		{name: "unknown values are not validated", file: "unknown-values.plan.json", wantProfiles: []string{"jobs/", "ops/ACTIVE"}},
		{name: "no profile", file: "no-fargate.plan.json", wantErr: "no aws_eks_fargate_profile in the Terraform plan or state"},
		{name: "bad version", file: "bad-version.plan.json", wantErr: "does not satisfy"},
		{name: "invalid profiles are reported", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"fargate_profile_name": "eks-web", "selector": [{"namespace": "web"}]}, "after_unknown": {}}`),
			wantProfiles: nil,
			wantErr:      `module.m.aws_eks_fargate_profile.p["k"] (eks-web) is left out: fargateProfileName "eks-web" starts with the reserved prefix`},
		{name: "malformed values are an error", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"fargate_profile_name": "web", "selector": [{"namespace": "web"}, {"namespace": ""}]}, "after_unknown": {}}`),
			wantErr: `module.m.aws_eks_fargate_profile.p["k"]: after.selector[1].namespace is empty`},
		{name: "errored plan", file: "errored.plan.json", wantErr: "planning failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := parseFixture(t, tfFixtures, tc.file, tc.data, tc.wantErr)
			var got []string
			for _, p := range set.Profiles {
				got = append(got, p.Name+"/"+p.Status)
			}
			if diff := cmp.Diff(tc.wantProfiles, got); diff != "" {
				t.Errorf("profiles (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseTerraform(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(tfFixtures, "*.json"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(tfPlan(`{"actions": ["create"], "after": {"selector": [{"labels": {"a": null}}]}, "after_unknown": {"selector": [true]}}`)))
	f.Add([]byte(`{"format_version": "1.0", "values": {"root_module": {"child_modules": [{"child_modules": [null]}]}}}`))
	f.Add([]byte(`{"format_version": "1.2", "prior_state": {"format_version": "1.0"}, "planned_values": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		plan, err := ParseTerraform("fuzz.json", data)
		if err != nil {
			return
		}
		for _, c := range plan.Changes {
			if (c.Before == nil) != (c.Action == ActionCreate) {
				t.Errorf("%s: action %s with Before %v", c.Address, c.Action, c.Before)
			}
			if (c.After == nil) != (c.Action == ActionDelete) {
				t.Errorf("%s: action %s with After %v", c.Address, c.Action, c.After)
			}
			if c.CreateBeforeDestroy && c.Action != ActionReplace {
				t.Errorf("%s: create_before_destroy on %s", c.Address, c.Action)
			}
		}
	})
}

func TestParseTerraformVersions(t *testing.T) {
	const (
		cluster = "module.eks.aws_eks_cluster.this[0]"
		ngAddr  = `module.eks.module.eks_managed_node_group["default"].aws_eks_node_group.this[0]`
		ngName  = "default-20240611092710450300000004"
	)
	plan := func(changes string) string {
		return `{"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": [` + changes + `]}`
	}
	change := func(typ, name, actions, before, after string) string {
		return `{"address": "` + typ + `.` + name + `", "mode": "managed", "type": "` + typ + `", "name": "` + name + `",
			"change": {"actions": ` + actions + `, "before": ` + before + `, "after": ` + after + `}}`
	}
	for _, tc := range []struct {
		name, file, data string
		want             []EKSCluster
		nodeGroups       []NodeGroup
	}{
		{name: "state", file: "state.json",
			want:       []EKSCluster{{Address: cluster, Name: clusterShop, Version: "1.30"}},
			nodeGroups: []NodeGroup{{Address: ngAddr, Cluster: clusterShop, Before: true, After: true, DesiredSize: 2, Name: ngName, Version: "1.30", ReleaseVersion: "1.30.4-20240917"}}},
		{name: "a plan's no-op", file: incidentPlan,
			want: []EKSCluster{{Address: cluster, Name: clusterShop, Version: "1.30"}}},
		{name: "a plan that updates: the version before", data: plan(change("aws_eks_cluster", "c", `["update"]`, `{"name": "shop", "version": "1.33"}`, `{"name": "shop", "version": "1.34"}`) + "," +
			change("aws_eks_node_group", "n", `["update"]`, `{"cluster_name": "shop", "node_group_name": "n", "version": "1.32"}`, `{"cluster_name": "shop", "node_group_name": "n", "version": "1.33"}`)),
			want:       []EKSCluster{{Address: "aws_eks_cluster.c", Name: "shop", Version: "1.33"}},
			nodeGroups: []NodeGroup{{Address: "aws_eks_node_group.n", Cluster: "shop", Before: true, After: true, DesiredSize: -1, Name: "n", Version: "1.32"}}},
		{name: "a plan that creates: the version after", data: plan(change("aws_eks_cluster", "c", `["create"]`, `null`, `{"name": "shop", "version": "1.34"}`)),
			want: []EKSCluster{{Address: "aws_eks_cluster.c", Name: "shop", Version: "1.34"}}},
		{name: "a deposed cluster is not the cluster", data: plan(change("aws_eks_cluster", "c", `["no-op"]`, `{"name": "shop", "version": "1.33"}`, `{"name": "shop", "version": "1.33"}`) + "," +
			strings.Replace(change("aws_eks_cluster", "c", `["delete"]`, `{"name": "shop", "version": "1.31"}`, `null`), `"change":`, `"deposed": "0a1b2c3d", "change":`, 1)),
			want: []EKSCluster{{Address: "aws_eks_cluster.c", Name: "shop", Version: "1.33"}}},
		{name: "a read is not a cluster", data: plan(change("aws_eks_cluster", "c", `["read"]`, `null`, `{"name": "shop", "version": "1.34"}`))},
		{name: "two clusters, sorted", data: plan(change("aws_eks_cluster", "z", `["no-op"]`, `{"name": "shop", "version": "1.33"}`, `{"name": "shop", "version": "1.33"}`) + "," +
			change("aws_eks_cluster", "a", `["no-op"]`, `{"name": "analytics", "version": "1.32"}`, `{"name": "analytics", "version": "1.32"}`)),
			want: []EKSCluster{{Address: "aws_eks_cluster.a", Name: "analytics", Version: "1.32"}, {Address: "aws_eks_cluster.z", Name: "shop", Version: "1.33"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			if tc.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join(tfFixtures, tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ParseTerraform("plan.json", data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.Clusters, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Clusters (-want +got):\n%s", diff)
			}
			if tc.nodeGroups != nil {
				if diff := cmp.Diff(tc.nodeGroups, got.NodeGroups); diff != "" {
					t.Errorf("NodeGroups (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestEKSCluster(t *testing.T) {
	two := &TerraformPlan{Clusters: []EKSCluster{{Address: "aws_eks_cluster.a", Name: "analytics"}, {Address: "aws_eks_cluster.z", Name: "shop"}}}
	for _, tc := range []struct {
		name    string
		plan    *TerraformPlan
		cluster string
		want    string // the address, or the error
	}{
		{name: "the only one", plan: &TerraformPlan{Clusters: two.Clusters[1:]}, want: "aws_eks_cluster.z"},
		{name: "by name", plan: two, cluster: "shop", want: "aws_eks_cluster.z"},
		{name: "several, no name", plan: two, want: "2 aws_eks_cluster resources (analytics, shop): name the cluster"},
		{name: "not there", plan: two, cluster: "web", want: "no aws_eks_cluster named web in the Terraform plan or state, only analytics, shop"},
		{name: "none", plan: &TerraformPlan{}, want: "no aws_eks_cluster in the Terraform plan or state"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.plan.EKSCluster(tc.cluster)
			got := c.Address
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("EKSCluster(%q) = %q, want %q", tc.cluster, got, tc.want)
			}
		})
	}
}
