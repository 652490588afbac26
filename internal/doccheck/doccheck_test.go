package doccheck

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestDocumentBlocks runs every static shell block of README.md, docs/ and
// examples/ as written, from a workspace that looks like the repository's
// root, with fargatekit on the PATH, and compares the output a document shows. A failure names the
// document and the line. Emulator blocks run in the integration suite.
func TestDocumentBlocks(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if _, err := Build(bin); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1",
		"MAKEFLAGS=-s") // make's echo of its recipes is not what the documents show
	work, err := Workspace(t.TempDir(), root)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[Kind]int{}
	tests := testNames(t, root)
	for _, b := range blocks {
		counts[b.Kind]++
		if b.Kind == RunBy && !tests[b.Test] {
			t.Errorf("%s: the block names %s to run it, and there is no such test", b, b.Test)
		}
		if b.Kind != Static {
			continue
		}
		t.Run(b.String(), func(t *testing.T) {
			out, failed := Run([]Block{b}, work, env)
			for _, f := range failed {
				t.Errorf("%s\n%s", f, out)
			}
			if b.Output != "" {
				if missing, ok := ShowsOutput(b.Output, out); !ok {
					t.Errorf("%s: the output the document shows is not what the commands print; missing:\n  %s\ngot:\n%s", b, missing, out)
				}
			}
		})
	}
	t.Logf("blocks: %v", counts)
	if counts[Static] == 0 || counts[Emulator] == 0 {
		t.Errorf("blocks %v: the documents must have static and emulator blocks", counts)
	}
}

func TestShowsOutput(t *testing.T) {
	got := "a\nb\nc\nd\n"
	for want, ok := range map[string]bool{"a\n...\nd\n": true, "...\nb\nc\n": true, "b\nc\n": false, "...\nc\nb\n": false, "a\ne\n": false, "  ...\n  d\n": false} {
		if _, got := ShowsOutput(want, got); got != ok {
			t.Errorf("ShowsOutput(%q) = %v, want %v", want, got, ok)
		}
	}
	// "..." inside a line stands for any text of that line, not of the next.
	pods := "NODE                  PHASE\nfargate-ip-10-0-1-7   Running\nip-10-0-200-10        Running\n"
	for want, ok := range map[string]bool{
		"NODE...PHASE\nfargate-ip-...Running\n":          true,
		"...\nip-10-0-...   Running\n":                   true,
		"fargate-ip-...Running\n":                        false, // the output begins with NODE
		"...\nfargate-ip-...Pending\n":                   false,
		"NODE...\nfargate-ip-...\nfargate-ip-...\n":      false, // only one Fargate line
		"NODE...PHASE\nip-10-0-...Running\nfargate...\n": false, // out of order
	} {
		if _, got := ShowsOutput(want, pods); got != ok {
			t.Errorf("ShowsOutput(%q) = %v, want %v", want, got, ok)
		}
	}
}

// testNames are the names of the Test functions of the repository's tests.
func testNames(t *testing.T, root string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		for _, m := range decl.FindAllSubmatch(data, -1) {
			names[string(m[1])] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestArchitecturePackages holds docs/architecture.md to the module: it
// names every package `go list ./...` prints (in backquotes, as
// `internal/cluster`), and every package path it names exists.
func TestArchitecturePackages(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	for dir := range strings.FieldsSeq(string(out)) {
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		listed[filepath.ToSlash(rel)] = true
	}
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:cmd|internal|pkg|hack|deploy)(?:/[a-z0-9]+)*)/?`").FindAllStringSubmatch(string(doc), -1) {
		named[m[1]] = true
	}
	for _, p := range slices.Sorted(maps.Keys(listed)) {
		if !named[p] {
			t.Errorf("docs/architecture.md does not name the package %s", p)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(named)) {
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("docs/architecture.md names %s, which does not exist", p)
		}
	}
}

// TestBuildAsMake checks that Build and `make build` build with the same
// settings: were they to differ, every cold CI run would compile the module's
// dependencies once more.
func TestBuildAsMake(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not on the PATH")
	}
	out, err := exec.Command("make", "-s", "-n", "-C", filepath.Join("..", ".."), "build").Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	recipe := strings.ReplaceAll(string(out), "'", "")
	want := "CGO_ENABLED=0 go build " + strings.Join(BuildFlags, " ") + " -o bin/fargatekit ./cmd/fargatekit"
	if strings.TrimSpace(recipe) != want {
		t.Errorf("make build runs\n  %s\nnot\n  %s", strings.TrimSpace(recipe), want)
	}
}
