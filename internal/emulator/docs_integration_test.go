package emulator_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fargatekit/fargatekit/internal/doccheck"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
)

// TestIntegrationDocuments runs, as written and in document order, every
// document whose shell blocks start an emulator (README.md, docs/emulator.md,
// examples/emulator/README.md): one shell per document, from a workspace
// that looks like the repository, with the control plane's kubectl and the
// AWS CLI on the PATH (its EKS waiters polling every second: QuickWaiters).
// A failure names the document and the line. The output the documents show
// is compared by doccheck's unit test, block by block. The documents start
// their emulators on the default ports: they run one at a time, beside the
// other tests, which choose free ports.
func TestIntegrationDocuments(t *testing.T) {
	t.Parallel()
	long(t)
	bin := controlPlane(t)
	slot(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := doccheck.Blocks(root)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	byDoc := map[string][]doccheck.Block{}
	for _, b := range blocks {
		if b.Kind == doccheck.Emulator && !slices.Contains(docs, b.File) {
			docs = append(docs, b.File)
		}
		if b.Kind == doccheck.Static || b.Kind == doccheck.Emulator { // not the blocks of other tests
			byDoc[b.File] = append(byDoc[b.File], b)
		}
	}
	if len(docs) < 3 {
		t.Fatalf("documents with emulator blocks: %v", docs)
	}
	waiters := awscli.QuickWaiters(t) // the documents' `aws eks wait` lines
	for _, doc := range docs {
		t.Run(doc, func(t *testing.T) {
			work, err := doccheck.Workspace(t.TempDir(), root)
			if err != nil {
				t.Fatal(err)
			}
			state := t.TempDir()
			env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
				"XDG_STATE_HOME="+state, "FARGATEKIT_CONTROLPLANE="+bin, "MAKEFLAGS=-s", "NO_COLOR=1")
			if waiters != "" {
				env = append(env, "AWS_DATA_PATH="+waiters)
			}
			t.Cleanup(func() { // whatever a failed walkthrough left running
				dirs, _ := emulator.Find(filepath.Join(state, "fargatekit", "emulator"))
				others, _ := emulator.Find("/tmp") // the documents name /tmp/fk-* state directories
				for _, d := range others {
					if strings.HasPrefix(d, "/tmp/fk-") {
						dirs = append(dirs, d)
					}
				}
				for _, d := range dirs {
					fk(t, state, "delete", "--state-dir", d)
				}
			})
			began := time.Now()
			out, failed := doccheck.Run(byDoc[doc], work, env)
			for _, f := range failed {
				t.Errorf("%s", f)
			}
			// The output a document shows after a block of the walkthrough is
			// in what the walkthrough printed, line after line ("..." elides).
			for _, b := range byDoc[doc] {
				if b.Kind != doccheck.Emulator || b.Output == "" {
					continue
				}
				if missing, ok := doccheck.ShowsOutput("...\n"+b.Output, out); !ok {
					t.Errorf("%s: the output shown is not what ran; first line missing:\n%s", b, missing)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
			t.Logf("%s ran in %s", doc, time.Since(began).Round(time.Second))
		})
	}
}
