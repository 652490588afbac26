package release

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/owenrumney/go-sarif/v2/sarif"
	"sigs.k8s.io/yaml"
)

// action is what the test reads of action.yml.
type action struct {
	Inputs  map[string]struct{ Default string }
	Outputs map[string]struct{ Value string }
	Runs    struct {
		Using string
		Steps []struct {
			ID, Name, If, Shell, Run, Uses string
			Env, With                      map[string]string
		}
	}
}

// actionRun is what running the action's steps did.
type actionRun struct {
	log     string
	failed  string            // the step that failed, "" when none did
	outputs map[string]string // the action's
	uploads []string          // the sarif_file of each upload step that would run
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// runAction runs the steps of action.yml as a GitHub runner does with the
// inputs given (the others take their defaults): each run step with bash as
// `shell: bash` does, in workspace, with the GITHUB_* and RUNNER_* variables
// and files of a runner; it stops at the first step that fails, but for the
// steps whose condition holds after a failure. Steps that use another action
// are not run: the upload's sarif_file is recorded. The expressions it knows
// are the ones action.yml needs: inputs, github and step outputs, compared
// with == and != (ignoring case, as GitHub does) and joined with &&, and
// !cancelled(). The PATH the steps start with has no fargatekit: the one they
// run is the one the action installed.
func runAction(t *testing.T, a action, inputs map[string]string, github map[string]string, workspace, server string) actionRun {
	t.Helper()
	for name := range inputs {
		if _, ok := a.Inputs[name]; !ok {
			t.Fatalf("the test gives the input %q, which action.yml does not declare", name)
		}
	}
	runnerTemp := t.TempDir()
	pathFile := filepath.Join(runnerTemp, "path")
	steps := map[string]map[string]string{}
	value := func(ref string) string {
		switch parts := strings.Split(ref, "."); {
		case len(parts) == 2 && parts[0] == "inputs":
			in, ok := a.Inputs[parts[1]]
			if !ok {
				t.Fatalf("action.yml names the input %q, which it does not declare", parts[1])
			}
			if v, ok := inputs[parts[1]]; ok {
				return v
			}
			return in.Default
		case len(parts) == 2 && parts[0] == "github":
			return github[parts[1]]
		case len(parts) == 4 && parts[0] == "steps" && parts[2] == "outputs":
			return steps[parts[1]][parts[3]]
		}
		t.Fatalf("action.yml: an expression the test does not know: %s", ref)
		return ""
	}
	eval := func(s string) string {
		return expression.ReplaceAllStringFunc(s, func(e string) string { return value(expression.FindStringSubmatch(e)[1]) })
	}
	var failed bool
	cond := func(s string) bool {
		s = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(s), "${{"), "}}"))
		if s == "" {
			return !failed
		}
		afterFailure := false
		for _, term := range strings.Split(s, "&&") {
			term = strings.TrimSpace(term)
			if term == "!cancelled()" {
				afterFailure = true
				continue
			}
			op := "=="
			if strings.Contains(term, "!=") {
				op = "!="
			}
			l, r, ok := strings.Cut(term, op)
			if !ok {
				t.Fatalf("action.yml: a condition the test does not know: %s", term)
			}
			if strings.EqualFold(value(strings.TrimSpace(l)), strings.Trim(strings.TrimSpace(r), "'")) != (op == "==") {
				return false
			}
		}
		return !failed || afterFailure
	}
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "fargatekit")); err != nil {
			dirs = append(dirs, dir)
		}
	}
	path := strings.Join(dirs, string(os.PathListSeparator))
	arch := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	var res actionRun
	var log strings.Builder
	for _, step := range a.Runs.Steps {
		if !cond(step.If) {
			continue
		}
		if step.Uses != "" {
			res.uploads = append(res.uploads, eval(step.With["sarif_file"]))
			continue
		}
		if step.Shell != "bash" {
			t.Fatalf("step %q: shell %q; the test runs bash", step.Name, step.Shell)
		}
		dir := t.TempDir()
		output := filepath.Join(dir, "output")
		script := filepath.Join(dir, "step.sh")
		if err := os.WriteFile(script, []byte(eval(step.Run)), 0o644); err != nil {
			t.Fatal(err)
		}
		env := append(os.Environ(), "PATH="+path, "GITHUB_OUTPUT="+output, "GITHUB_PATH="+pathFile, "GITHUB_ACTION_PATH="+root,
			"GITHUB_WORKSPACE="+workspace, "GITHUB_SERVER_URL="+server, "RUNNER_OS=Linux", "RUNNER_ARCH="+arch, "RUNNER_TEMP="+runnerTemp, "NO_COLOR=1")
		for k, v := range step.Env {
			env = append(env, k+"="+eval(v))
		}
		c := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script) // GitHub's `shell: bash`
		c.Dir, c.Env = workspace, env
		out, err := c.CombinedOutput()
		log.Write(out)
		if data, rerr := os.ReadFile(output); rerr == nil {
			outs := map[string]string{}
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if k, v, ok := strings.Cut(l, "="); ok {
					outs[k] = v
				}
			}
			steps[step.ID] = outs
		}
		if data, rerr := os.ReadFile(pathFile); rerr == nil {
			for _, dir := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				path = dir + string(os.PathListSeparator) + path // one directory a line, as GitHub reads it
			}
			_ = os.Remove(pathFile)
		}
		if err != nil && !failed {
			failed, res.failed = true, step.Name
		}
	}
	res.log, res.outputs = log.String(), map[string]string{}
	for name, o := range a.Outputs {
		res.outputs[name] = eval(o.Value)
	}
	return res
}

// TestAction runs the steps of action.yml with a runner's environment: it
// installs the snapshot release's archive (served as GitHub serves release
// assets, checksum checked), checks a workspace, writes SARIF and fails on a
// blocker; a clean workspace passes; a ref that is not a release tag stops
// at the install with an error that says what to set.
func TestAction(t *testing.T) {
	r := snapshot(t)
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml runs %q, want composite", a.Runs.Using)
	}
	tag := "v" + r.version
	mux := http.NewServeMux()
	mux.Handle("/fargatekit/fargatekit/releases/download/"+tag+"/", http.StripPrefix("/fargatekit/fargatekit/releases/download/"+tag+"/", http.FileServer(http.Dir(r.dist))))
	server := httptest.NewServer(mux)
	defer server.Close()

	workspace := t.TempDir()
	for name, body := range map[string]string{
		"deploy/pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  hostNetwork: true\n  containers: [{name: web, image: nginx:1.27, resources: {requests: {cpu: 250m, memory: 256Mi}}}]\n",
		"clean/pod.yaml":  "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: nginx:1.27, resources: {requests: {cpu: 250m, memory: 256Mi}}}]\n",
		"clean/ci.yaml":   "on: push\n", // not a manifest: skipped
	} {
		writeFile(t, filepath.Join(workspace, name), body)
	}
	github := map[string]string{"action_ref": tag, "action_repository": "fargatekit/fargatekit"}

	t.Run("blocker", func(t *testing.T) {
		res := runAction(t, a, map[string]string{"paths": "deploy"}, github, workspace, server.URL)
		if res.failed != "Check the manifests" || res.outputs["exit-code"] != "1" || res.outputs["report"] != "fargatekit.sarif" {
			t.Fatalf("failed at %q, outputs %v; want the check to fail with exit code 1\n%s", res.failed, res.outputs, res.log)
		}
		if !strings.Contains(res.log, "fargatekit "+tag) || !strings.Contains(res.log, "FG006") {
			t.Errorf("the log shows no install of %s or no finding:\n%s", tag, res.log)
		}
		if len(res.uploads) != 1 || res.uploads[0] != "fargatekit.sarif" {
			t.Fatalf("uploads %q after a failed check; want fargatekit.sarif", res.uploads)
		}
		report, err := sarif.Open(filepath.Join(workspace, res.uploads[0]))
		if err != nil || len(report.Runs) != 1 || len(report.Runs[0].Results) == 0 {
			t.Fatalf("the SARIF upload: %v", err)
		}
		if id := report.Runs[0].Results[0].RuleID; id == nil || *id != "FG006" {
			t.Errorf("the SARIF's first result is %v, want FG006", id)
		}
	})
	t.Run("clean", func(t *testing.T) {
		res := runAction(t, a, map[string]string{"paths": "clean", "format": "text", "output": "report.txt"}, github, workspace, server.URL)
		if res.failed != "" || res.outputs["exit-code"] != "0" || len(res.uploads) != 0 {
			t.Fatalf("failed at %q, outputs %v, uploads %q; want a pass and no upload\n%s", res.failed, res.outputs, res.uploads, res.log)
		}
	})
	t.Run("not a tag", func(t *testing.T) {
		res := runAction(t, a, nil, map[string]string{"action_ref": "main"}, workspace, server.URL)
		if res.failed != "Install fargatekit" || !strings.Contains(res.log, "::error::fargatekit: the action is used at 'main'") {
			t.Fatalf("failed at %q; want the install to stop with an error\n%s", res.failed, res.log)
		}
	})
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
