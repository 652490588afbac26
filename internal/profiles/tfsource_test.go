package profiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// TestTerraformSources: a state read from a configuration's directory
// names the blocks that declare its resources, in the root module and in a
// module of Terraform's manifest; without the configuration, the state file.
func TestTerraformSources(t *testing.T) {
	dir := filepath.Join(tfFixtures, "configuration")
	set, err := ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]object.Source{}
	for _, o := range set.Foundation.Origins() {
		got[o.Ref.Name] = o.Source
	}
	root, vpc := filepath.Join(dir, "main.tf"), filepath.Join(dir, "modules", "vpc", "main.tf")
	for address, want := range map[string]object.Source{
		"aws_eks_cluster.this":              {File: root, Line: 7},
		"aws_iam_role.copied":               {File: root, Line: 11},
		"aws_eks_fargate_profile.apps":      {File: root, Line: 23},
		"module.vpc.aws_vpc.this":           {File: vpc, Line: 3},
		"module.vpc.aws_subnet.isolated":    {File: vpc, Line: 39},
		"module.vpc.aws_route_table.public": {File: vpc, Line: 23},
	} {
		if diff := cmp.Diff(want, got[address]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", address, diff)
		}
	}

	// The same state elsewhere: the resources are in the state file.
	data, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		t.Fatal(err)
	}
	alone := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(alone, data, 0o600); err != nil {
		t.Fatal(err)
	}
	set, err = ReadFile(alone)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range set.Foundation.Origins() {
		if o.Source != (object.Source{File: alone}) {
			t.Errorf("%s: %+v, want the state file", o.Ref.Name, o.Source)
		}
	}
}

// TestTerraformSourcesBroken: a .tf file that does not parse is an error
// naming it, and the blocks before the error still count.
func TestTerraformSourcesBroken(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("resource \"aws_vpc\" \"this\" {\n}\n\nresource \"aws_subnet\" {{\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := newTFSources(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, ok, err := s.Source("aws_vpc.this")
	if err == nil || !ok || src.Line != 1 {
		t.Errorf("Source: %+v %v, error %v; want line 1 and an error naming main.tf", src, ok, err)
	}
	if err != nil && !strings.Contains(err.Error(), filepath.Join(dir, "main.tf")) {
		t.Errorf("error %v does not name the file", err)
	}
}

func TestSplitAddress(t *testing.T) {
	for _, tt := range []struct {
		address, modules, resource string
		ok                         bool
	}{
		{"aws_subnet.private", "", "aws_subnet.private", true},
		{"aws_subnet.private[0]", "", "aws_subnet.private", true},
		{"module.vpc.aws_subnet.private[2]", "vpc", "aws_subnet.private", true},
		{`module.eks.module.fargate_profile["a.b[c]"].aws_iam_role.this[0]`, "eks.fargate_profile", "aws_iam_role.this", true},
		{"data.aws_iam_policy_document.assume", "", "data.aws_iam_policy_document.assume", true},
		{`module.x["k"].data.aws_caller_identity.current`, "x", "data.aws_caller_identity.current", true},
		{"the main route table of vpc-1", "", "", false},
		{"module.vpc", "", "", false},
		{"", "", "", false},
	} {
		modules, resource, ok := splitAddress(tt.address)
		if got := strings.Join(modules, "."); got != tt.modules || resource != tt.resource || ok != tt.ok {
			t.Errorf("splitAddress(%q) = %q, %q, %v; want %q, %q, %v", tt.address, got, resource, ok, tt.modules, tt.resource, tt.ok)
		}
	}
}

func FuzzSplitAddress(f *testing.F) {
	for _, a := range []string{"module.vpc.aws_subnet.private[2]", `module.a["x.y"].data.t.n`, "a.b", "[", `"`, "]]..["} {
		f.Add(a)
	}
	f.Fuzz(func(t *testing.T, address string) {
		modules, resource, ok := splitAddress(address)
		if !ok && (modules != nil || resource != "") {
			t.Errorf("not ok but %q %q", modules, resource)
		}
	})
}
