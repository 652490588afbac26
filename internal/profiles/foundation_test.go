package profiles

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestFoundation reads the foundation of Terraform, CloudFormation and
// eksctl fixtures and compares it with testdata/terraform/<golden>.foundation.json:
// in examples/foundation/plan.json every ID and link is known only after
// apply and is followed through the configuration's references, module
// outputs and count indexes; in the CloudFormation template through Ref and
// GetAtt.
func TestFoundation(t *testing.T) {
	const rules = "../../pkg/rules/builtin/testdata/foundation/"
	for path, name := range map[string]string{
		filepath.Join(tfFixtures, "foundation-broken.state.json"): "foundation-broken.state",
		filepath.Join(tfFixtures, "foundation-ok.state.json"):     "foundation-ok.state",
		filepath.Join(tfFixtures, "state.json"):                   "state",
		"../../examples/foundation/plan.json":                     "examples-foundation-plan",
		rules + "cloudformation.yaml":                             "cloudformation",
		rules + "eksctl-nat-disabled.yaml":                        "eksctl-nat-disabled",
		rules + "eksctl-private-cluster.yaml":                     "eksctl-private-cluster",
	} {
		t.Run(name, func(t *testing.T) {
			set, err := ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(set.Foundation, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(tfFixtures, name+".foundation.json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to write it)", err)
			}
			if diff := cmp.Diff(string(want), string(got)+"\n"); diff != "" {
				t.Errorf("foundation of %s (-want +got):\n%s", name, diff)
			}
		})
	}
}

// TestTerraformInlinePolicies: a role's inline policies, in the role
// (inline_policy) or as aws_iam_role_policy and aws_iam_role_policies_exclusive
// resources, are the role's.
func TestTerraformInlinePolicies(t *testing.T) {
	const state = `{"format_version": "1.0", "terraform_version": "1.9.8", "values": {"root_module": {"resources": [
	  {"address": "aws_iam_role.a", "mode": "managed", "type": "aws_iam_role", "name": "a",
	   "values": {"name": "a", "arn": "arn:aws:iam::111122223333:role/a", "inline_policy": [{"name": "in-role", "policy": "{}"}]}},
	  {"address": "aws_iam_role.b", "mode": "managed", "type": "aws_iam_role", "name": "b",
	   "values": {"name": "b", "arn": "arn:aws:iam::111122223333:role/b", "inline_policy": [{"name": "", "policy": ""}]}},
	  {"address": "aws_iam_role_policy.ecr", "mode": "managed", "type": "aws_iam_role_policy", "name": "ecr",
	   "values": {"name": "ecr-pull", "role": "b", "policy": "{}"}},
	  {"address": "aws_iam_role_policies_exclusive.b", "mode": "managed", "type": "aws_iam_role_policies_exclusive", "name": "b",
	   "values": {"role_name": "b", "policy_names": ["ecr-pull", "logs"]}},
	  {"address": "aws_eks_fargate_profile.apps", "mode": "managed", "type": "aws_eks_fargate_profile", "name": "apps",
	   "values": {"cluster_name": "shop", "fargate_profile_name": "apps", "pod_execution_role_arn": "arn:aws:iam::111122223333:role/b",
	     "subnet_ids": ["subnet-1"], "selector": [{"namespace": "apps", "labels": null}]}}
	]}}}`
	set, err := Parse("state.json", []byte(state))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range set.Foundation.Roles {
		got[r.Name] = r.InlinePolicies
	}
	want := map[string][]string{"a": {"in-role"}, "b": {"ecr-pull", "logs"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inline policies (-want +got):\n%s", diff)
	}
}
