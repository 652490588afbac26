package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fargatekit/fargatekit/internal/cli/versioncmd"
)

const tfPlans = "../profiles/testdata/terraform"

// TestPlanGolden runs `fargatekit plan` on each scenario of the profile-change
// problem and compares the text report with a golden file (-update rewrites them).
func TestPlanGolden(t *testing.T) {
	m := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join("testdata/plan/manifests", n+".yaml"))
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
	}{
		{"incident-terraform", []string{"--terraform", "../../examples/incident/plan.json", "../../examples/incident/manifests"}, 1},
		{"incident-eksctl", []string{"--old", "../../examples/incident/eksctl/old.yaml", "--new", "../../examples/incident/eksctl/new.yaml", "../../examples/incident/manifests"}, 1},
		{"add-only", append([]string{"--terraform", tfPlans + "/add-only.plan.json"}, m("batch")...), 0},
		{"remove-only", append([]string{"--terraform", tfPlans + "/remove-only.plan.json"}, m("legacy")...), 1},
		{"replace-create-before-destroy", append([]string{"--terraform", tfPlans + "/replace-cbd.plan.json"}, m("web", "web-canary")...), 1},
		{"replace-destroy-first", append([]string{"--terraform", tfPlans + "/replace-destroy-first.plan.json"}, m("web", "web-canary")...), 1},
		{"subnets-only", append([]string{"--terraform", tfPlans + "/subnets-only.plan.json"}, m("web")...), 1},
		{"wildcard", append([]string{"--terraform", tfPlans + "/wildcard.plan.json"}, m("wildcard")...), 0},
		{"profile-label", append([]string{"--old", "testdata/plan/eksctl/label-old.yaml", "--new", "testdata/plan/eksctl/label-new.yaml"}, m("label")...), 0},
		{"no-workloads", []string{"--terraform", "../../examples/incident/plan.json"}, 1},
		{"kustomization", []string{"--terraform", "../../examples/incident/plan.json", "testdata/plan/kustomize"}, 1},
		{"helm-chart", []string{"--terraform", "../../examples/incident/plan.json", "-n", "orders", "../render/testdata/charts/shop"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := run(t, "", append([]string{"plan", "--color", "never"}, tc.args...)...)
			if code != tc.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tc.wantCode, stderr)
			}
			checkGolden(t, filepath.Join("testdata/plan", tc.name+".golden"), out)
		})
	}
}

// TestPlanJSON checks the plan section of the JSON contract on the incident.
func TestPlanJSON(t *testing.T) {
	_, out, _ := run(t, "", "plan", "-o", "json", "--terraform", "../../examples/incident/plan.json", "../../examples/incident/manifests")
	checkGolden(t, "testdata/plan/incident.json.golden", strings.ReplaceAll(out, `"version": "`+versioncmd.Current(build()).Version+`"`, `"version": "test"`))
}

func TestPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		inStderr string
	}{
		{"no change given", []string{"plan"}, "give the change"},
		{"both kinds", []string{"plan", "--terraform", "x.json", "--old", "a", "--new", "b"}, "not both"},
		{"missing plan", []string{"plan", "--terraform", "missing.json"}, "missing.json"},
		{"bad version", []string{"plan", "--terraform", tfPlans + "/bad-version.plan.json"}, "2.0"},
		{"bad node-groups", []string{"plan", "--terraform", tfPlans + "/add-only.plan.json", "--node-groups", "maybe"}, "--node-groups"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.inStderr)
			}
		})
	}
	code, _, stderr := run(t, "", "plan", "--terraform", tfPlans+"/no-fargate.plan.json")
	if code != 0 || !strings.Contains(stderr, "nothing to analyse") {
		t.Errorf("a plan without profiles: exit %d, stderr %q", code, stderr)
	}
}

// TestPlanSettings: plan applies .fargatekit.yaml as check does (disabled
// rules, severities), and reports EKS's profile quota for the profiles that
// exist at once during the safe sequence, which creates before it deletes.
func TestPlanSettings(t *testing.T) {
	dir := t.TempDir()
	eksctl := func(name string, profiles ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: eksctl.io/v1alpha5\nkind: ClusterConfig\nmetadata: {name: shop, region: us-east-1}\nfargateProfiles:\n")
		for _, p := range profiles {
			fmt.Fprintf(&b, "  - name: %s\n    selectors: [{namespace: %s}]\n", p, p)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	nine := []string{"p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}
	old := eksctl("old.yaml", nine...)
	// Two profiles replaced under new names: nine after, eleven at once in phase 1.
	replaced := eksctl("new.yaml", append(slices.Clone(nine[:7]), "q8", "q9")...)
	_, out, _ := run(t, "", "plan", "-o", "json", "--old", old, "--new", replaced)
	j := decode(t, out)
	var quota []string
	for _, f := range j.Findings {
		if f.Rule == "FG024" {
			quota = append(quota, f.Message)
		}
	}
	if len(quota) != 1 || !strings.Contains(quota[0], "has 11 profiles for one cluster, at most 10 are allowed during the safe sequence") {
		t.Errorf("FG024 findings %q, want one about the 11 profiles of phase 1", quota)
	}
	settings := filepath.Join(dir, "settings.yaml")
	if err := os.WriteFile(settings, []byte("limits: {profilesPerCluster: 20}\ndisable: [PL005]\nseverity: {coverage-lost: info}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, _ = run(t, "", "plan", "-o", "json", "--settings", settings, "--old", old, "--new", replaced)
	for _, f := range decode(t, out).Findings {
		if f.Rule == "FG024" || f.Rule == "PL005" || (f.Rule == "PL004" && f.Severity != "info") {
			t.Errorf("with the settings: %s %s %s", f.Rule, f.Severity, f.Message)
		}
	}
}
