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
