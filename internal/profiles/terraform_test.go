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

func TestParseTerraformFixtures(t *testing.T) {
	active := fargate.StatusActive
	for _, tc := range []struct {
		file string
		want TerraformPlan
	}{
		{file: incidentPlan, want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: fp("apps"), Cluster: clusterShop, Action: ActionCreate,
					After: prof("apps", "", tfSubnets, sel("orders"), sel("payments"), sel("catalog"), sel("shipping"))},
				{Address: fp("catalog"), Cluster: clusterShop, Action: ActionDelete, Before: prof("catalog", active, tfSubnets, sel("catalog"))},
				{Address: fp("orders"), Cluster: clusterShop, Action: ActionDelete, Before: prof("orders", active, tfSubnets, sel("orders"))},
				{Address: fp("payments"), Cluster: clusterShop, Action: ActionDelete, Before: prof("payments", active, tfSubnets, sel("payments"))},
				{Address: fp("shipping"), Cluster: clusterShop, Action: ActionDelete, Before: prof("shipping", active, tfSubnets, sel("shipping"))},
			},
			NodeGroups: []string{eksNodes},
		}},
		{file: "add-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: fp("kube-system"), Cluster: clusterShop, Action: ActionNoop,
					Before: prof("kube-system", active, tfSubnets, sel("kube-system")), After: prof("kube-system", active, tfSubnets, sel("kube-system"))},
				{Address: "module.fargate_profile_batch.aws_eks_fargate_profile.this[0]", Cluster: clusterShop, Action: ActionCreate,
					After: prof("batch", "", tfSubnets, sel("batch", "workload", "batch"))},
			},
		}},
		{file: "remove-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.legacy", Cluster: clusterShop, Action: ActionDelete,
					Before: prof("legacy", active, tfSubnets, sel("legacy", "app", "monolith"))},
				{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionNoop,
					Before: prof("web", active, tfSubnets, sel("web")), After: prof("web", active, tfSubnets, sel("web"))},
			},
			NodeGroups: []string{"aws_eks_node_group.system"},
		}},
		{file: "replace-cbd.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionReplace, CreateBeforeDestroy: true,
				Before: prof("web", active, tfSubnets, sel("web", "tier", "frontend")),
				After:  prof("web", "", tfSubnets, sel("web"), sel("web-canary"))}},
		}},
		{file: "replace-destroy-first.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionReplace,
				Before: prof("web", active, tfSubnets, sel("web", "tier", "frontend")),
				After:  prof("web", "", tfSubnets, sel("web"), sel("web-canary"))}},
		}},
		{file: "subnets-only.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{{Address: fp("web"), Cluster: clusterShop, Action: ActionReplace,
				Before: prof("web", active, tfSubnets, sel("web")),
				After:  prof("web", "", tfSubnets[:2], sel("web"))}},
			NodeGroups: []string{eksNodes},
		}},
		{file: "wildcard.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.teams", Cluster: clusterShop, Action: ActionNoop,
					Before: prof("teams", active, tfSubnets, sel("team-*")), After: prof("teams", active, tfSubnets, sel("team-*"))},
				{Address: "aws_eks_fargate_profile.web", Cluster: clusterShop, Action: ActionCreate,
					After: prof("web", "", tfSubnets, sel("prod", "app", "web-?"), sel("staging-*", "app", "web-*", "tier", "front?nd"))},
			},
		}},
		{file: "state.json", want: TerraformPlan{
			Changes: []ProfileChange{
				{Address: "aws_eks_fargate_profile.default", Cluster: clusterShop, Action: ActionNoop,
					Before: prof("default", active, tfSubnets, sel("default")), After: prof("default", active, tfSubnets, sel("default"))},
				{Address: fp("kube-system"), Cluster: clusterShop, Action: ActionNoop,
					Before: prof("kube-system", active, tfSubnets, sel("kube-system", "k8s-app", "kube-dns")),
					After:  prof("kube-system", active, tfSubnets, sel("kube-system", "k8s-app", "kube-dns"))},
			},
			NodeGroups: []string{eksNodes},
		}},
		{file: "no-fargate.plan.json", want: TerraformPlan{}},
		{file: "unknown-values.plan.json", want: TerraformPlan{
			Changes: []ProfileChange{
				// The name falls back to the address's last element; the
				// selector keeps its known labels.
				{Address: "aws_eks_fargate_profile.jobs", Cluster: clusterShop, Action: ActionCreate,
					After:   prof("jobs", "", nil, sel("", "app", "jobs")),
					Unknown: []string{"fargate_profile_name", "selector", "subnet_ids"}},
				{Address: "aws_eks_fargate_profile.ops", Cluster: clusterShop, Action: ActionUpdate,
					Before: prof("ops", active, tfSubnets, sel("ops")), After: prof("ops", active, tfSubnets, sel("ops"))},
			},
		}},
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
			if diff := cmp.Diff(&tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
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
		{name: "values of the wrong types", data: tfPlan(`{"actions": ["create"], "before": null,
			"after": {"fargate_profile_name": 3, "selector": [1, {"namespace": ["x"], "labels": {"a": 1, "b": "c"}}], "subnet_ids": "s"}, "after_unknown": {"selector": "x"}}`),
			want: []ProfileChange{{Address: `module.m.aws_eks_fargate_profile.p["k"]`, Action: ActionCreate, After: prof("", "", nil, sel("", "b", "c"))}}},
		{name: "no change", data: tfPlan(`null`)},
		{name: "a data source", data: strings.Replace(tfPlan(`{"actions": ["read"]}`), `"managed"`, `"data"`, 1)},
		{name: "unexpected actions", data: tfPlan(`{"actions": ["delete", "delete"]}`), wantErr: `aws_eks_fargate_profile.p["k"]: unexpected change actions ["delete" "delete"]`},
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

func TestParseTerraformErrors(t *testing.T) {
	badVersion, err := os.ReadFile(filepath.Join(tfFixtures, "bad-version.plan.json"))
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
			"after": {"fargate_profile_name": "eks-web", "selector": [{"namespace": "web"}, {"namespace": ""}]}, "after_unknown": {}}`),
			wantProfiles: nil,
			wantErr:      `module.m.aws_eks_fargate_profile.p["k"] (eks-web) is left out: fargateProfileName "eks-web" starts with the reserved prefix`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			if tc.file != "" {
				var err error
				if data, err = os.ReadFile(filepath.Join(tfFixtures, tc.file)); err != nil {
					t.Fatal(err)
				}
			}
			set, err := Parse("f", data)
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
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
