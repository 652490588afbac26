package doccheck

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// runElsewhere are commands of the documents that another part of CI runs:
// running them here would run CI inside CI.
var runElsewhere = map[string]string{
	"make test":         ".ci/run runs it",
	"make controlplane": "hack/test.sh builds the control plane before the tests",
}

// Run runs a block as a user would, in dir, with bash: every command as
// written, except those of runElsewhere. It returns the output and the
// commands that failed: any non-zero exit, but exit code 1 of fargatekit
// (findings, which the documents show on purpose).
func Run(t testing.TB, b Block, dir string, env []string) (output string, failed []string) {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -o pipefail\nshopt -s expand_aliases\n")
	script.WriteString(`trap 'echo "FAILED $? at line $LINENO: $BASH_COMMAND" >&2' ERR` + "\n")
	for _, l := range strings.Split(b.Text, "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		if why, ok := runElsewhere[strings.TrimSpace(cmd)]; ok {
			l = ": " + strings.TrimSpace(cmd) + " — " + why
		}
		script.WriteString(l + "\n")
	}
	c := exec.Command("bash", "-c", script.String())
	c.Dir, c.Env = dir, env
	var out, errOut bytes.Buffer
	c.Stdout, c.Stderr = &out, &errOut
	_ = c.Run()
	for _, l := range strings.Split(errOut.String(), "\n") {
		m := failedLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if m[1] == "1" && fargatekitCommand.MatchString(m[3]) {
			continue
		}
		failed = append(failed, l)
	}
	return out.String() + errOut.String(), failed
}

var (
	failedLine        = regexp.MustCompile(`^FAILED (\d+) at line (\d+): (.*)$`)
	fargatekitCommand = regexp.MustCompile(`^(bin/)?fargatekit (check|plan) `)
)

// Workspace returns a directory that looks like the repository's root to the
// commands of the documents (a link to each of its entries, but bin/), so
// that what they write lands there and not in the repository.
func Workspace(t testing.TB, root string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "bin" || e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

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
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "fargatekit"), "github.com/fargatekit/fargatekit/cmd/fargatekit").CombinedOutput(); err != nil {
		t.Fatalf("building fargatekit: %v\n%s", err, out)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1",
		"MAKEFLAGS=-s") // make's echo of its recipes is not what the documents show
	work := Workspace(t, root)
	counts := map[Kind]int{}
	for _, b := range blocks {
		counts[b.Kind]++
		if b.Kind != Static {
			continue
		}
		t.Run(b.String(), func(t *testing.T) {
			out, failed := Run(t, b, work, env)
			for _, f := range failed {
				t.Errorf("%s: %s\n%s", b, f, out)
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
}
