package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/report"
)

// The charts and kustomizations of internal/render's tests.
const (
	shopChart   = "../render/testdata/charts/shop"
	brokenChart = "../render/testdata/charts/broken"
	overlays    = "../render/testdata/kustomize/overlays"
	kustomBase  = "../render/testdata/kustomize/base"
)

type renderedReport struct {
	Findings []struct {
		Rule   string `json:"rule"`
		File   string `json:"file"`
		Line   int    `json:"line"`
		Object struct {
			Kind      string `json:"kind"`
			Namespace string `json:"namespace"`
			Name      string `json:"name"`
		} `json:"object"`
	} `json:"findings"`
	Workloads []struct {
		Object struct {
			Name string `json:"name"`
		} `json:"object"`
		File string `json:"file"`
	} `json:"workloads"`
	Errors []struct {
		File    string `json:"file"`
		Message string `json:"message"`
	} `json:"errors"`
}

// renderedFindings lists rule object file:line for each finding of a JSON report.
func renderedFindings(t *testing.T, out string) (renderedReport, []string) {
	t.Helper()
	var j renderedReport
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	var list []string
	for _, f := range j.Findings {
		list = append(list, f.Rule+" "+f.Object.Kind+"/"+f.Object.Name+" "+filepath.ToSlash(f.File)+":"+strconv.Itoa(f.Line))
	}
	return j, list
}

// TestCheckChart renders a chart with values and --set: the findings point
// at the templates, at lines of their rendered output.
func TestCheckChart(t *testing.T) {
	code, out, stderr := run(t, "", "check", "-o", "json", "--target-version", "1.35",
		"-f", filepath.Join(shopChart, "values-prod.yaml"), "--set", "hostNetwork=true", shopChart)
	if code != 1 {
		t.Errorf("exit code %d, want 1 (blockers); stderr: %s", code, stderr)
	}
	j, got := renderedFindings(t, out)
	for _, want := range []string{
		"FG006 Deployment/release-shop " + shopChart + "/templates/deployment.yaml:20",                 // hostNetwork through --set
		"FG032 Deployment/release-shop " + shopChart + "/templates/deployment.yaml:1",                  // 3 replicas from values-prod.yaml
		"FG012 StatefulSet/release-redis " + shopChart + "/charts/redis/templates/statefulset.yaml:21", // the subchart's volume claim
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no finding %q among:\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, f := range j.Findings {
		if !strings.HasPrefix(filepath.ToSlash(f.File), shopChart+"/") || !strings.Contains(f.File, "/templates/") {
			t.Errorf("finding %s points at %s, not at a template of the chart", f.Rule, f.File)
		}
	}
	if len(j.Errors) != 0 {
		t.Errorf("errors: %+v", j.Errors)
	}

	// Without --set the chart's default keeps the host network off.
	_, out, _ = run(t, "", "check", "-o", "json", "--target-version", "1.35", shopChart)
	if _, got := renderedFindings(t, out); slices.Contains(got, "FG006 Deployment/release-shop "+shopChart+"/templates/deployment.yaml:20") {
		t.Errorf("FG006 without --set hostNetwork=true:\n%s", strings.Join(got, "\n"))
	}
}

// TestCheckKustomization builds overlays: the findings point at the base's
// file that declared the patched object.
func TestCheckKustomization(t *testing.T) {
	code, out, stderr := run(t, "", "check", "-o", "json", "--target-version", "1.35",
		filepath.Join(overlays, "staging"), filepath.Join(overlays, "prod"))
	if code != 1 {
		t.Errorf("exit code %d, want 1 (blockers); stderr: %s", code, stderr)
	}
	j, got := renderedFindings(t, out)
	if want := "FG006 Deployment/staging-web " + kustomBase + "/deployment.yaml:25"; !slices.Contains(got, want) {
		t.Errorf("no finding %q (the host network of the staging patch) among:\n%s", want, strings.Join(got, "\n"))
	}
	for _, f := range j.Findings {
		if f.Rule == "FG006" && f.Object.Name != "staging-web" {
			t.Errorf("FG006 on %s/%s: only the staging overlay sets the host network", f.Object.Namespace, f.Object.Name)
		}
	}
	var workloads []string
	for _, w := range j.Workloads {
		workloads = append(workloads, w.Object.Name+" "+filepath.ToSlash(w.File))
	}
	want := []string{"staging-web " + kustomBase + "/deployment.yaml", "prod-web " + kustomBase + "/deployment.yaml"}
	if diff := cmp.Diff(want, workloads); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
}

// TestCheckUnrenderableChart checks that a chart that fails to render is an
// input error (exit 2) naming the template, and the other inputs are checked.
func TestCheckUnrenderableChart(t *testing.T) {
	code, out, stderr := run(t, "", "check", "-o", "json", "--fail-on", "none", brokenChart, filepath.Join(overlays, "prod"))
	if code != 2 {
		t.Errorf("exit code %d, want 2 (input error); stderr: %s", code, stderr)
	}
	j, _ := renderedFindings(t, out)
	if len(j.Errors) != 1 || j.Errors[0].File != brokenChart ||
		!strings.Contains(j.Errors[0].Message, "broken/templates/deployment.yaml") || !strings.Contains(j.Errors[0].Message, "image.repository is required") {
		t.Errorf("errors = %+v, want one at %s naming the template and the required value", j.Errors, brokenChart)
	}
	if len(j.Workloads) != 1 || j.Workloads[0].Object.Name != "prod-web" {
		t.Errorf("workloads = %+v, want prod-web of the prod overlay", j.Workloads)
	}
}

// TestCheckLinkedChartLeaksNothing checks a chart of a pull request whose
// file is a link to a file of the runner, which a template prints in its
// error: in every output format the check fails on the input (exit 2),
// names the link, and nothing of the file comes out.
func TestCheckLinkedChartLeaksNothing(t *testing.T) {
	base := t.TempDir()
	const secret = "RUNNER-TOKEN-7f3a9c"
	for name, data := range map[string]string{
		"runner/zq-token-file":                "token: " + secret + "\n",
		"repo/.git/HEAD":                      "ref: refs/heads/main\n",
		"repo/chart/Chart.yaml":               "apiVersion: v2\nname: shop\nversion: 1.0.0\n",
		"repo/chart/templates/leak.yaml":      `{{ fail (.Files.Get "files/x") }}` + "\n",
		"repo/chart/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
	} {
		path := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "repo", "chart", "files", "x")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "runner", "zq-token-file"), link); err != nil {
		t.Fatal(err)
	}
	for _, format := range report.FormatNames() {
		t.Run(format, func(t *testing.T) {
			code, out, stderr := run(t, "", "check", "-o", format, filepath.Join(base, "repo"))
			if code != 2 {
				t.Errorf("exit code %d, want 2 (an input error)", code)
			}
			if strings.Contains(out+stderr, secret) || strings.Contains(out+stderr, "zq-token-file") {
				t.Errorf("the runner's file came out:\n%s\n%s", out, stderr)
			}
			if !strings.Contains(out+stderr, "is a symbolic link") {
				t.Errorf("the link is not named:\n%s\n%s", out, stderr)
			}
		})
	}
}
