package release

import (
	"bytes"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/doccheck"
)

// blocker is a manifest with a blocker: Fargate refuses host networking.
const blocker = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  hostNetwork: true\n  containers: [{name: web, image: nginx:1.27}]\n"

// kubectl returns the control plane's kubectl, and skips the test without it
// (fails it when the control plane is required).
func kubectl(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FARGATEKIT_CONTROLPLANE")
	if dir == "" {
		unavailable(t, "FARGATEKIT_CONTROLPLANE is not set: the test runs the kubectl built with the control plane (make controlplane), or run make test")
	}
	return filepath.Join(dir, "kubectl")
}

// TestKubectlPlugin runs the README's kubectl block as written (a link named
// kubectl-fargatekit next to fargatekit), then kubectl's own ways in: the
// plugin list, `kubectl fargatekit` with help that names itself so, a check
// whose blocker gives exit code 1, and the completion of its arguments
// through kubectl_complete-fargatekit.
func TestKubectlPlugin(t *testing.T) {
	kc := kubectl(t)
	blocks, err := doccheck.BlocksRunBy(root, "TestKubectlPlugin")
	if err != nil || len(blocks) == 0 {
		t.Fatalf("the README's kubectl block: %d blocks, %v", len(blocks), err)
	}
	bin := t.TempDir()
	if _, err := doccheck.Build(bin); err != nil {
		t.Fatal(err)
	}
	pathEnv := "PATH=" + bin + string(os.PathListSeparator) + filepath.Dir(kc) + string(os.PathListSeparator) + os.Getenv("PATH")
	work := t.TempDir()
	env := []string{pathEnv, "KUBECONFIG=" + filepath.Join(work, "no-kubeconfig")}
	out, failed := doccheck.Run(blocks, work, append(os.Environ(), env...))
	for _, f := range failed {
		t.Errorf("%s\n%s", f, out)
	}
	for _, b := range blocks {
		if missing, ok := doccheck.ShowsOutput(b.Output, out); b.Output != "" && !ok {
			t.Errorf("%s: the output shown is not what ran; missing %q\n%s", b, missing, out)
		}
	}

	if out := must(t, work, env, kc, "plugin", "list"); !strings.Contains(out, filepath.Join(bin, "kubectl-fargatekit")) {
		t.Errorf("kubectl plugin list does not list kubectl-fargatekit:\n%s", out)
	}
	help := must(t, work, env, kc, "fargatekit", "--help")
	for _, want := range []string{"Use \"kubectl fargatekit [command] --help\"", "  kubectl fargatekit check --profiles cluster.yaml deploy/"} {
		if !strings.Contains(help, want) {
			t.Errorf("kubectl fargatekit --help does not say %q:\n%s", want, help)
		}
	}
	if out := must(t, work, env, kc, "fargatekit", "scan", "--help"); !strings.Contains(out, "kubectl fargatekit scan [flags]") {
		t.Errorf("kubectl fargatekit scan --help names itself otherwise:\n%s", out)
	}
	writeFile(t, filepath.Join(work, "pod.yaml"), blocker)
	if out, code := run(t, work, env, kc, "fargatekit", "check", "pod.yaml"); code != 1 || !strings.Contains(out, "FG006") {
		t.Errorf("kubectl fargatekit check of a blocker: exit %d, want 1 and FG006\n%s", code, out)
	}
	if err := os.Symlink(filepath.Join(bin, "fargatekit"), filepath.Join(bin, "kubectl_complete-fargatekit")); err != nil {
		t.Fatal(err)
	}
	if out := must(t, work, env, kc, "__complete", "fargatekit", "sc"); !strings.Contains(out, "scan\t") {
		t.Errorf("kubectl's completion of `kubectl fargatekit sc` has no scan:\n%s", out)
	}
}

// TestKrew renders the krew manifest template .krew.yaml as krew-release-bot
// does (addURIAndSha gives each archive's address and SHA-256), for the
// snapshot release, and installs it with krew from the archive GoReleaser
// made: krew accepts the manifest and its checksum, and the plugin it links
// runs as `kubectl fargatekit`.
func TestKrew(t *testing.T) {
	krew := need(t, "krew")
	r := snapshot(t)
	tag := "v" + r.version
	tmpl, err := template.New(".krew.yaml").Funcs(template.FuncMap{
		// krew-release-bot's: the address (itself a template of the tag), and
		// the SHA-256 of what is there; here, the archives in dist.
		"addURIAndSha": func(url, tag string) (string, error) {
			var u strings.Builder
			if err := template.Must(template.New("uri").Parse(url)).Execute(&u, map[string]string{"TagName": tag}); err != nil {
				return "", err
			}
			sum := strings.Repeat("f", 64) // a platform the snapshot did not build
			if data, err := os.ReadFile(filepath.Join(r.dist, path.Base(u.String()))); err == nil {
				sum = sha256Hex(data)
			}
			return "uri: " + u.String() + "\n    sha256: " + sum, nil
		},
	}).ParseFiles(filepath.Join(root, ".krew.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest bytes.Buffer
	if err := tmpl.Execute(&manifest, map[string]string{"TagName": tag}); err != nil {
		t.Fatalf("rendering .krew.yaml: %v", err)
	}
	var plugin struct {
		Spec struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string }
				URI, Bin string
			}
		}
	}
	if err := yaml.Unmarshal(manifest.Bytes(), &plugin); err != nil {
		t.Fatalf("the rendered manifest: %v\n%s", err, manifest.String())
	}
	var got, want []string
	for _, p := range plugin.Spec.Platforms {
		os, arch := p.Selector.MatchLabels["os"], p.Selector.MatchLabels["arch"]
		got = append(got, os+"/"+arch+" "+path.Base(p.URI)+" "+p.Bin)
	}
	for _, os := range []string{"linux", "darwin", "windows"} {
		for _, arch := range []string{"amd64", "arm64"} {
			bin := "fargatekit"
			if os == "windows" {
				bin += ".exe"
			}
			want = append(want, os+"/"+arch+" "+archiveName(os, arch)+" "+bin)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" || plugin.Spec.Version != tag {
		t.Errorf("the manifest's version %q (want %s), platforms (-want +got):\n%s", plugin.Spec.Version, tag, diff)
	}

	file := filepath.Join(t.TempDir(), "fargatekit.yaml")
	if err := os.WriteFile(file, manifest.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	krewRoot := t.TempDir()
	env := []string{"KREW_ROOT=" + krewRoot}
	must(t, "", env, krew, "install", "--manifest="+file, "--archive="+filepath.Join(r.dist, archiveName("linux", runtime.GOARCH)))
	plug := filepath.Join(krewRoot, "bin", "kubectl-fargatekit")
	if info := versionOf(t, plug); info.Version != tag {
		t.Errorf("krew's plugin says %+v, want %s", info, tag)
	}
	if out := must(t, "", nil, plug, "--help"); !strings.Contains(out, "kubectl fargatekit [command]") {
		t.Errorf("krew's plugin's help does not name it kubectl fargatekit:\n%s", out)
	}
}

// TestPreCommit runs the hook of .pre-commit-hooks.yaml with pre-commit
// try-repo on a repository of manifests, as pre-commit builds and runs it
// for a user (language golang: go install of the hook's repository): a
// blocker fails it; a clean manifest and a file that is not one pass.
func TestPreCommit(t *testing.T) {
	preCommit := need(t, "pre-commit")
	src := source(t)
	repo := t.TempDir()
	writeFile(t, filepath.Join(repo, "bad.yaml"), blocker)
	writeFile(t, filepath.Join(repo, "good.yaml"), strings.Replace(blocker, "  hostNetwork: true\n", "", 1))
	writeFile(t, filepath.Join(repo, ".github", "workflows", "ci.yml"), "on: push\njobs: {}\n")
	must(t, repo, nil, "git", "init", "-q")
	must(t, repo, nil, "git", "add", "-A")
	gomodcache := strings.TrimSpace(must(t, "", nil, "go", "env", "GOMODCACHE"))
	// The modules and the build cache entries the tests already have (the
	// release's build settings).
	env := append([]string{"PRE_COMMIT_HOME=" + t.TempDir(), "GOMODCACHE=" + gomodcache}, doccheck.BuildEnv()...)
	out, code := run(t, repo, env, preCommit, "try-repo", src, "fargatekit-check", "--files", "good.yaml", ".github/workflows/ci.yml")
	if code != 0 || !strings.Contains(out, "Passed") {
		t.Errorf("the hook on a clean manifest and a CI file: exit %d, want 0\n%s", code, out)
	}
	out, code = run(t, repo, env, preCommit, "try-repo", src, "fargatekit-check", "--files", "bad.yaml")
	if code != 1 || !strings.Contains(out, "Failed") || !strings.Contains(out, "FG006") {
		t.Errorf("the hook on a blocker: exit %d, want 1 with FG006\n%s", code, out)
	}
}
