package render

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// secret is what a file outside the checked repository holds: no error or
// document may carry it.
const secret = "RUNNER-SECRET-d41d8cd9"

// hostileRepo makes base/repo (a repository: it has .git) and
// base/outside/secret.yaml, and returns base.
func hostileRepo(t *testing.T) string {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(base, "repo", ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(base, "outside", "secret.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: "+secret+"}\n")
	write(t, filepath.Join(base, "outside", "base", "kustomization.yaml"), "resources: [cm.yaml]\n")
	write(t, filepath.Join(base, "outside", "base", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leaked}\ndata: {token: "+secret+"}\n")
	return base
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// expandDocs renders path as the loader would, with its root.
func expandDocs(t *testing.T, o *Options, path string) ([]Document, error) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	docs, handled, err := o.Expand(path, info, rootOf(t, path))
	if !handled {
		t.Fatalf("Expand(%s) did not handle it", path)
	}
	return docs, err
}

// leaks reports whether the error or a document carries the secret.
func leaks(docs []Document, err error) bool {
	if err != nil && strings.Contains(err.Error(), secret) {
		return true
	}
	for _, d := range docs {
		if strings.Contains(string(d.Data), secret) {
			return true
		}
	}
	return false
}

const chartYAML = "apiVersion: v2\nname: shop\nversion: 1.0.0\n"

// TestChartLinksConfined checks that a chart with a file or directory that
// links out of the repository is refused, naming the link and telling
// nothing of what it leads to, whatever the template would do with it; and
// that a link within the repository (a helper shared by the charts of a
// monorepo) renders.
func TestChartLinksConfined(t *testing.T) {
	printsFile := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shop}\ndata: {x: {{ .Files.Get \"files/x\" | quote }}}\n"
	failsWithFile := `{{ fail (.Files.Get "files/x") }}`
	tests := []struct {
		name     string
		template string
		link     func(t *testing.T, base, chart string)
		refused  string // the link the error names; "" when it renders
	}{{
		name:     "a file printed in an error",
		template: failsWithFile,
		link: func(t *testing.T, base, chart string) {
			symlink(t, filepath.Join(base, "outside", "secret.yaml"), filepath.Join(chart, "files", "x"))
		},
		refused: "files/x",
	}, {
		name:     "a file printed in a document, through a relative link",
		template: printsFile,
		link: func(t *testing.T, base, chart string) {
			symlink(t, "../../../../outside/secret.yaml", filepath.Join(chart, "files", "x"))
		},
		refused: "files/x",
	}, {
		name:     "a directory",
		template: printsFile,
		link: func(t *testing.T, base, chart string) {
			symlink(t, filepath.Join(base, "outside"), filepath.Join(chart, "files"))
		},
		refused: "files",
	}, {
		name:     "a template",
		template: printsFile,
		link: func(t *testing.T, base, chart string) {
			write(t, filepath.Join(chart, "files", "x"), "harmless")
			symlink(t, filepath.Join(base, "outside", "secret.yaml"), filepath.Join(chart, "templates", "leak.yaml"))
		},
		refused: "templates/leak.yaml",
	}, {
		name:     "a link through an inside directory link",
		template: printsFile,
		link: func(t *testing.T, base, chart string) {
			symlink(t, filepath.Join(base, "outside", "secret.yaml"), filepath.Join(base, "repo", "shared", "x"))
			symlink(t, "../../shared", filepath.Join(chart, "files"))
		},
		refused: "files/x",
	}, {
		name:     "near miss: a link within the repository",
		template: printsFile,
		link: func(t *testing.T, base, chart string) {
			write(t, filepath.Join(base, "repo", "shared", "x"), "shared")
			symlink(t, "../../../shared/x", filepath.Join(chart, "files", "x"))
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := hostileRepo(t)
			chart := filepath.Join(base, "repo", "charts", "shop")
			write(t, filepath.Join(chart, "Chart.yaml"), chartYAML)
			write(t, filepath.Join(chart, "templates", "cm.yaml"), tc.template)
			tc.link(t, base, chart)
			docs, err := expandDocs(t, &Options{}, chart)
			if leaks(docs, err) {
				t.Fatalf("the secret came out: %v %q", err, docs)
			}
			if tc.refused == "" {
				if err != nil || len(docs) != 1 || !strings.Contains(string(docs[0].Data), "shared") {
					t.Fatalf("a link within the repository: %v, %q", err, docs)
				}
				return
			}
			if err == nil {
				t.Fatalf("rendered %d documents, want the chart refused", len(docs))
			}
			want := filepath.Join(chart, filepath.FromSlash(tc.refused)) + " is a symbolic link"
			if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "outside/secret") {
				t.Errorf("error %q: want it to name %s and not where it leads", err, tc.refused)
			}
		})
	}
}

// TestKustomizationLinksConfined checks that a kustomization reads nothing
// out of the repository: not a resource linked out of it, not a base
// outside it; a base elsewhere in the repository builds.
func TestKustomizationLinksConfined(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, base, k string)
		ok    bool
	}{{
		name: "a resource linked out",
		setup: func(t *testing.T, base, k string) {
			write(t, filepath.Join(k, "kustomization.yaml"), "resources: [cm.yaml]\n")
			symlink(t, filepath.Join(base, "outside", "secret.yaml"), filepath.Join(k, "cm.yaml"))
		},
	}, {
		name: "a base outside the repository",
		setup: func(t *testing.T, base, k string) {
			write(t, filepath.Join(k, "kustomization.yaml"), "resources: [../../../outside/base]\n")
		},
	}, {
		name: "the kustomization file linked out",
		setup: func(t *testing.T, base, k string) {
			symlink(t, filepath.Join(base, "outside", "base", "kustomization.yaml"), filepath.Join(k, "kustomization.yaml"))
		},
	}, {
		name: "near miss: a base elsewhere in the repository",
		setup: func(t *testing.T, base, k string) {
			write(t, filepath.Join(base, "repo", "base", "kustomization.yaml"), "resources: [cm.yaml]\n")
			write(t, filepath.Join(base, "repo", "base", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n")
			write(t, filepath.Join(k, "kustomization.yaml"), "resources: [../../base]\n")
		},
		ok: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := hostileRepo(t)
			k := filepath.Join(base, "repo", "overlays", "prod")
			if err := os.MkdirAll(k, 0o755); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, base, k)
			docs, err := expandDocs(t, &Options{}, k)
			if leaks(docs, err) {
				t.Fatalf("the secret came out: %v %q", err, docs)
			}
			if tc.ok != (err == nil) {
				t.Fatalf("error %v (%d documents); want it built: %v", err, len(docs), tc.ok)
			}
		})
	}
}

// TestKustomizationRemote checks that a kustomization naming a resource by
// URL is refused before anything is fetched, and fetched with AllowRemote;
// a local base whose name looks like a host is no remote.
func TestKustomizationRemote(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "kustomization.yaml"), "resources: ["+srv.URL+"/cm.yaml]\n")

	_, err := expandDocs(t, &Options{}, dir)
	if err == nil || !strings.Contains(err.Error(), srv.URL+"/cm.yaml") || !strings.Contains(err.Error(), "--allow-remote") {
		t.Errorf("without --allow-remote: error %v, want the URL refused and the flag named", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("without --allow-remote: %d requests made", n)
	}
	docs, err := expandDocs(t, &Options{AllowRemote: true}, dir)
	if err != nil || len(docs) != 1 || !strings.Contains(string(docs[0].Data), "name: remote") {
		t.Errorf("with --allow-remote: %v, %q", err, docs)
	}
	if requests.Load() == 0 {
		t.Error("with --allow-remote: nothing fetched")
	}
}

// TestKustomizationRemoteCap: with --allow-remote, a fetched file larger
// than the output cap is refused naming its URL, though what it renders
// would fit; one within the cap is built.
func TestKustomizationRemoteCap(t *testing.T) {
	small := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"
	big := small + strings.Repeat("# padding that renders to nothing\n", 200)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big.yaml" {
			_, _ = w.Write([]byte(big))
			return
		}
		_, _ = w.Write([]byte(small))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		file    string
		wantErr string
	}{
		{"small.yaml", ""},
		{"big.yaml", "fetching " + srv.URL + "/big.yaml: more than 1000 bytes"},
	} {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "kustomization.yaml"), "resources: ["+srv.URL+"/"+tc.file+"]\n")
		docs, err := expandDocs(t, &Options{AllowRemote: true, MaxOutput: 1000}, dir)
		switch {
		case tc.wantErr == "" && (err != nil || len(docs) != 1):
			t.Errorf("%s: %v, %d documents; want it built", tc.file, err, len(docs))
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.file, err, tc.wantErr)
		}
	}
}

// TestRemoteEntries checks which entries kustomize would fetch.
func TestRemoteEntries(t *testing.T) {
	for _, tc := range []struct {
		entry string
		git   bool
	}{
		{"github.com/org/repo//deploy?ref=v1", true},
		{"GitHub.com:org/repo", true},
		{"git::https://example.com/org/repo.git", true},
		{"git@gitlab.example.com:org/repo.git", true},
		{"ssh://git@example.com/org/repo", true},
		{"file:///srv/repos/app", true},
		{"https://example.com/org/repo", true},
		{"../base", false},
		{"base", false},
		{"example.com/base", false}, // kustomize finds no scheme nor user: a directory
		{"/abs/path", false},
	} {
		if got := isGitRepo(tc.entry); got != tc.git {
			t.Errorf("isGitRepo(%q) = %v, want %v", tc.entry, got, tc.git)
		}
	}
}

// TestExpandLeavesLinksAlone checks that Expand renders no chart reached
// through a link given as found (its Lstat): the loader refuses such a link
// when it leads out, and does not descend into it otherwise.
func TestExpandLeavesLinksAlone(t *testing.T) {
	base := hostileRepo(t)
	link := filepath.Join(base, "repo", "chart")
	symlink(t, filepath.Join(base, "outside"), link)
	info, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("not a link")
	}
	if docs, handled, err := (&Options{}).Expand(link, info, rootOf(t, link)); handled || err != nil || len(docs) > 0 {
		t.Errorf("Expand of a link: %d documents, handled %v, %v", len(docs), handled, err)
	}
}

// FuzzExpandLinks renders charts and kustomizations made of links, among
// them links out of the repository, to themselves, and in cycles: Expand
// never panics nor hangs, and nothing of the file outside comes out.
//
// Each pair of bytes makes one entry: the first picks the entry's name, the
// second what it is (a file, a directory, or a link and its target).
func FuzzExpandLinks(f *testing.F) {
	f.Add(byte(0), []byte{2, 0x40, 3, 0x41})                   // a chart, files/x -> outside
	f.Add(byte(1), []byte{4, 0x42, 5, 0x43})                   // a kustomization, a loop
	f.Add(byte(0), []byte{6, 0x44, 7, 0x45, 2, 0x46, 1, 0x10}) // a cycle through directories
	f.Fuzz(func(t *testing.T, kind byte, plan []byte) {
		if len(plan) > 32 {
			return
		}
		base := hostileRepo(t)
		dir := filepath.Join(base, "repo", "in")
		names := []string{"files", "files/x", "templates/t.yaml", "cm.yaml", "a", "a/b", "b", "c"}
		targets := []string{
			filepath.Join(base, "outside", "secret.yaml"), "../../outside", "../../../outside/secret.yaml",
			".", "..", "a", "b", "c", "files", "x", "../in", filepath.Join(base, "outside"),
			filepath.Join(base, "outside", "base"), "cm.yaml", "b/../a", "missing",
		}
		if kind%2 == 0 {
			write(t, filepath.Join(dir, "Chart.yaml"), chartYAML)
			write(t, filepath.Join(dir, "templates", "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {x: {{ .Files.Get \"files/x\" | quote }}}\n")
		} else {
			write(t, filepath.Join(dir, "kustomization.yaml"), "resources: [cm.yaml, a, b]\n")
		}
		for i := 0; i+1 < len(plan); i += 2 {
			name := filepath.Join(dir, filepath.FromSlash(names[int(plan[i])%len(names)]))
			if _, err := os.Lstat(name); err == nil {
				continue
			}
			if os.MkdirAll(filepath.Dir(name), 0o755) != nil {
				continue // a parent is a file or a link
			}
			switch op := plan[i+1]; {
			case op < 0x10:
				_ = os.WriteFile(name, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f}\n"), 0o644)
			case op < 0x40:
				_ = os.Mkdir(name, 0o755)
			default:
				_ = os.Symlink(targets[int(op)%len(targets)], name)
			}
		}
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		docs, _, err := (&Options{}).Expand(dir, info, rootOf(t, dir))
		if leaks(docs, err) {
			t.Fatalf("the secret came out: %v %q", err, docs)
		}
	})
}

// TestRenderLimits checks that a chart that renders too long is abandoned
// and one that renders too much refused, each naming its flag; a bad
// --render-timeout is an error, and the near miss renders.
func TestRenderLimits(t *testing.T) {
	chart := func(t *testing.T, template string) string {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "Chart.yaml"), chartYAML)
		write(t, filepath.Join(dir, "templates", "cm.yaml"), template)
		return dir
	}
	// About ten million steps of the template engine: seconds, not 20ms.
	slow := chart(t, "{{ range until 3200 }}{{ range until 3200 }}{{ end }}{{ end }}apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	big := chart(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {x: {{ repeat 2000 \"a\" | quote }}}\n")
	tests := []struct {
		name string
		dir  string
		opts Options
		want string // in the error; "" for none
	}{
		{"too long", slow, Options{Timeout: 20 * time.Millisecond}, "took longer than 20ms (see --render-timeout)"},
		{"too much", big, Options{MaxOutput: 1000}, "more than the limit of 1000 (see --max-file-size)"},
		{"near miss", big, Options{MaxOutput: 4000, Timeout: time.Minute}, ""},
		{"a negative timeout", big, Options{Timeout: -time.Second}, "--render-timeout -1s: not a duration above zero"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			docs, err := expandDocs(t, &tc.opts, tc.dir)
			switch {
			case tc.want == "" && (err != nil || len(docs) != 1):
				t.Errorf("%d documents, %v; want one", len(docs), err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if d := time.Since(began); tc.opts.Timeout > 0 && tc.opts.Timeout < time.Second && d > 10*time.Second {
				t.Errorf("Expand returned after %s with a timeout of %s", d, tc.opts.Timeout)
			}
		})
	}
}
