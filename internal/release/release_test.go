package release

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/cli/versioncmd"
	"github.com/fargatekit/fargatekit/internal/doccheck"
)

const modulePath = "github.com/fargatekit/fargatekit"

// root is the repository's root.
var root = func() string {
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return r
}()

// work holds what the tests share (the copy of the repository, the snapshot
// release); TestMain removes it.
var work string

func TestMain(m *testing.M) {
	var err error
	if work, err = os.MkdirTemp("", "fargatekit-release-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(work)
	os.Exit(code)
}

// need returns the path of a tool on the PATH, and skips the test without
// it (fails it when the tools are required: make test and CI).
func need(t testing.TB, tool string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the release tests run on Linux")
	}
	path, err := exec.LookPath(tool)
	if err != nil {
		unavailable(t, fmt.Sprintf("%s is not on the PATH: export PATH=\"$(hack/tools.sh release):$PATH\" (and hack/tools.sh pre-commit), or run make test", tool))
	}
	return path
}

// unavailable skips a test whose tools are missing, saying how to get them,
// and fails it when they are required (make test and CI).
func unavailable(t testing.TB, how string) {
	t.Helper()
	if os.Getenv("FARGATEKIT_INTEGRATION") == "required" {
		t.Fatal(how)
	}
	t.Skip(how)
}

// run runs a command in dir with env added to this process's environment,
// and returns its output and exit code; it fails the test when the command
// cannot start.
func run(t testing.TB, dir string, env []string, name string, args ...string) (string, int) {
	t.Helper()
	c := exec.Command(name, args...)
	c.Dir, c.Env = dir, append(os.Environ(), env...)
	out, err := c.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	}
	t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	return "", 0
}

// must runs a command that must succeed, and returns its output.
func must(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, code := run(t, dir, env, name, args...)
	if code != 0 {
		t.Fatalf("%s %s: exit %d\n%s", name, strings.Join(args, " "), code, out)
	}
	return out
}

// versionOf runs `fargatekit version -o json` with the binary at path.
func versionOf(t testing.TB, path string) versioncmd.Info {
	t.Helper()
	var info versioncmd.Info
	out := must(t, "", nil, path, "version", "-o", "json")
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("%s version -o json: %v\n%s", path, err, out)
	}
	return info
}

// withoutGoPlugins fails unless the binary at path was built with the tag
// that leaves kustomize's loader of Go plugins out (see the Makefile): the
// release's binaries are 50 MB smaller with it.
func withoutGoPlugins(t testing.TB, path string) {
	t.Helper()
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatalf("the build information of %s: %v", path, err)
	}
	for _, s := range info.Settings {
		if s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "kustomize_disable_go_plugin_support") {
			return
		}
	}
	t.Errorf("%s was built without the tag kustomize_disable_go_plugin_support: %v", path, info.Settings)
}

// sourceCopy makes, once, a copy of the working tree (its tracked and
// untracked files, not the ignored ones), committed as the only commit of a
// repository of its own: what a release is made from, and what the tests may
// write into.
var sourceCopy = sync.OnceValues(func() (string, error) { return copyRepository(filepath.Join(work, "src")) })

func source(t testing.TB) string {
	t.Helper()
	dir, err := sourceCopy()
	if err != nil {
		t.Fatalf("copying the repository: %v", err)
	}
	return dir
}

func copyRepository(dst string) (string, error) {
	list, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return "", fmt.Errorf("listing the files of %s: %w", root, err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		if err := copyFile(filepath.Join(root, name), filepath.Join(dst, name)); err != nil {
			return "", err
		}
	}
	git := func(args ...string) error {
		c := exec.Command("git", append([]string{"-c", "user.name=fargatekit", "-c", "user.email=release-test@fargatekit.invalid", "-c", "commit.gpgsign=false"}, args...)...)
		c.Dir = dst
		if out, err := c.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "release test"},
		{"remote", "add", "origin", "https://github.com/fargatekit/fargatekit.git"}} {
		if err := git(args...); err != nil {
			return "", err
		}
	}
	return dst, nil
}

func copyFile(src, dst string) error {
	info, err := os.Lstat(src)
	if errors.Is(err, os.ErrNotExist) {
		return nil // deleted in the working tree
	}
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if info.Mode()&os.ModeSymlink != 0 {
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, data, info.Mode().Perm())
}

// snapshotRelease is GoReleaser's snapshot release of the repository, for
// this machine's platform only.
type snapshotRelease struct {
	dist    string
	version string // GoReleaser's, without the v
	commit  string // the repository's, which the binary must name
}

// snapshotBuild makes the snapshot release once, for the tests that need it.
var snapshotBuild = sync.OnceValues(func() (snapshotRelease, error) {
	src, err := sourceCopy()
	if err != nil {
		return snapshotRelease{}, fmt.Errorf("copying the repository: %w", err)
	}
	return buildSnapshot(src)
})

func snapshot(t testing.TB) snapshotRelease {
	t.Helper()
	need(t, "goreleaser")
	need(t, "cyclonedx-gomod")
	r, err := snapshotBuild()
	if err != nil {
		t.Fatalf("the snapshot release: %v", err)
	}
	return r
}

// buildSnapshot runs `goreleaser release --snapshot` with the repository's
// configuration, its targets narrowed to this machine's platform (a build of
// all six would take most of CI's time).
func buildSnapshot(src string) (snapshotRelease, error) {
	data, err := os.ReadFile(filepath.Join(src, ".goreleaser.yaml"))
	if err != nil {
		return snapshotRelease{}, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return snapshotRelease{}, fmt.Errorf(".goreleaser.yaml: %w", err)
	}
	builds, _ := cfg["builds"].([]any)
	if len(builds) != 1 {
		return snapshotRelease{}, fmt.Errorf(".goreleaser.yaml: %d builds, the test knows one", len(builds))
	}
	build := builds[0].(map[string]any)
	build["goos"], build["goarch"] = []string{"linux"}, []string{runtime.GOARCH}
	dist := filepath.Join(src, "dist") // where the SBOM's command, run in dist, finds the module
	if data, err = yaml.Marshal(cfg); err != nil {
		return snapshotRelease{}, err
	}
	if err := os.WriteFile(filepath.Join(src, ".goreleaser.test.yaml"), data, 0o644); err != nil {
		return snapshotRelease{}, err
	}
	c := exec.Command("goreleaser", "release", "--snapshot", "--clean", "--config", ".goreleaser.test.yaml")
	c.Dir = src
	if out, err := c.CombinedOutput(); err != nil {
		return snapshotRelease{}, fmt.Errorf("goreleaser release --snapshot: %w\n%s", err, out)
	}
	var meta struct{ Version string }
	data, err = os.ReadFile(filepath.Join(dist, "metadata.json"))
	if err == nil {
		err = json.Unmarshal(data, &meta)
	}
	if err != nil {
		return snapshotRelease{}, fmt.Errorf("reading dist/metadata.json: %w", err)
	}
	if meta.Version == "" {
		return snapshotRelease{}, fmt.Errorf("dist/metadata.json has no version: %s", data)
	}
	head, err := exec.Command("git", "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		return snapshotRelease{}, fmt.Errorf("git rev-parse HEAD: %w", err)
	}
	return snapshotRelease{dist: dist, version: meta.Version, commit: strings.TrimSpace(string(head))}, nil
}

// archiveName is the name of the release archive for a platform, as
// .goreleaser.yaml names it.
func archiveName(goos, goarch string) string {
	if goos == "windows" {
		return fmt.Sprintf("fargatekit_%s_%s.zip", goos, goarch)
	}
	return fmt.Sprintf("fargatekit_%s_%s.tar.gz", goos, goarch)
}

// untar reads a tar (gzipped when gz) and returns the contents of its
// regular files by name, without a leading "/".
func untar(t testing.TB, path string, gz bool) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var r io.Reader = f
	if gz {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		r = zr
	}
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			files[strings.TrimPrefix(h.Name, "/")] = data
		}
	}
}

// writeExecutable writes a binary taken out of an archive or an image.
func writeExecutable(t testing.TB, data []byte) string {
	t.Helper()
	if len(data) == 0 {
		t.Fatal("no binary to run")
	}
	path := filepath.Join(t.TempDir(), "fargatekit")
	if err := os.WriteFile(path, data, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// TestGoReleaser checks .goreleaser.yaml with `goreleaser check`, then makes
// a snapshot release of it for this platform and looks inside: the archive
// holds the binary, the README, the completions and every man page; the
// checksums and the SBOM are of it; and the binary prints the version,
// commit and date GoReleaser injected.
func TestGoReleaser(t *testing.T) {
	goreleaser := need(t, "goreleaser")
	must(t, root, nil, goreleaser, "check")
	data, err := os.ReadFile(filepath.Join(root, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Builds []struct{ Goos, Goarch []string }
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil || len(cfg.Builds) != 1 {
		t.Fatalf(".goreleaser.yaml: %v, %d builds", err, len(cfg.Builds))
	}
	if diff := cmp.Diff([][]string{{"linux", "darwin", "windows"}, {"amd64", "arm64"}}, [][]string{cfg.Builds[0].Goos, cfg.Builds[0].Goarch}); diff != "" {
		t.Errorf("the release's platforms (-want +got):\n%s", diff)
	}

	r := snapshot(t)
	name := archiveName("linux", runtime.GOARCH)
	archive, err := os.ReadFile(filepath.Join(r.dist, name))
	if err != nil {
		t.Fatal(err)
	}
	files := untar(t, filepath.Join(r.dist, name), true)
	want := []string{"fargatekit", "README.md", "completions/fargatekit.bash", "completions/fargatekit.fish", "completions/fargatekit.ps1", "completions/fargatekit.zsh"}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "man", "*.1"))
	if err != nil || len(pages) < 10 {
		t.Fatalf("docs/man: %d pages, %v", len(pages), err)
	}
	for _, p := range pages {
		want = append(want, "docs/man/"+filepath.Base(p))
	}
	for _, f := range want {
		if _, ok := files[f]; !ok {
			t.Errorf("%s has no %s", name, f)
		}
	}

	sums, err := os.ReadFile(filepath.Join(r.dist, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if line := sha256Hex(archive) + "  " + name; !strings.Contains(string(sums), line+"\n") {
		t.Errorf("checksums.txt has no line %q:\n%s", line, sums)
	}

	var sbom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string }
		}
		Components []struct{ Name, Version string }
	}
	data, err = os.ReadFile(filepath.Join(r.dist, name+".cdx.json"))
	if err == nil {
		err = json.Unmarshal(data, &sbom)
	}
	if err != nil {
		t.Fatalf("the SBOM of %s: %v", name, err)
	}
	modules := map[string]bool{}
	for _, c := range sbom.Components {
		modules[c.Name] = true
	}
	if sbom.BOMFormat != "CycloneDX" || sbom.Metadata.Component.Name != modulePath || !modules["k8s.io/client-go"] || !modules["github.com/aws/aws-sdk-go-v2"] {
		t.Errorf("the SBOM: format %q, of %q, %d modules (client-go %v, aws-sdk-go-v2 %v)", sbom.BOMFormat, sbom.Metadata.Component.Name,
			len(sbom.Components), modules["k8s.io/client-go"], modules["github.com/aws/aws-sdk-go-v2"])
	}

	binary := writeExecutable(t, files["fargatekit"])
	withoutGoPlugins(t, binary)
	info := versionOf(t, binary)
	if info.Version != "v"+r.version || info.Commit != r.commit || info.BuildDate == "" || info.Platform != "linux/"+runtime.GOARCH {
		t.Errorf("the archive's binary says %+v; GoReleaser built v%s of %s", info, r.version, r.commit)
	}
}

// TestGoInstall runs the README's `go install ...@latest` as written, from a
// module proxy that serves the repository as a release: the module zip is
// made from the repository's commit as the public proxy makes it, so a
// replace directive or a file missing from the repository fails here.
func TestGoInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("it builds fargatekit from a module proxy")
	}
	blocks, err := doccheck.BlocksRunBy(root, "TestGoInstall")
	if err != nil || len(blocks) == 0 {
		t.Fatalf("the README's go install block: %d blocks, %v", len(blocks), err)
	}
	src := source(t)
	const version = "v0.1.0"
	proxy := t.TempDir()
	dir := filepath.Join(proxy, filepath.FromSlash(modulePath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := modzip.CreateFromVCS(zf, module.Version{Path: modulePath, Version: version}, src, "HEAD", ""); err != nil {
		t.Fatalf("making the module zip: %v", err)
	}
	if err := zf.Close(); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	for name, data := range map[string]string{"list": version + "\n", version + ".info": info, version + ".mod": string(gomod)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	upstream := strings.TrimSpace(must(t, "", nil, "go", "env", "GOPROXY"))
	bin := t.TempDir()
	// The release's build settings: the build cache holds the dependencies
	// compiled with them, and a user's settings do not change what is tested.
	env := append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy)+","+upstream, "GONOSUMDB="+modulePath,
		"GOBIN="+bin, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	env = append(env, doccheck.BuildEnv()...)
	out, failed := doccheck.Run(blocks, t.TempDir(), env)
	for _, f := range failed {
		t.Errorf("%s\n%s", f, out)
	}
	if got := versionOf(t, filepath.Join(bin, "fargatekit")); got.Version != version {
		t.Errorf("go install ...@latest installed %+v, want %s", got, version)
	}
}

// freePort returns a free loopback port.
func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}
