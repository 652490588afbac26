package manifest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// TestLoadConfinesLinks checks that a symbolic link that leads out of its
// input's root is reported and not read, whether found in a directory or
// named as input (as a shell glob names it), and that nothing of the file it
// leads to comes out; links inside the root, and a directory named as input
// through a link, are read.
func TestLoadConfinesLinks(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	secret := "SECRET-" + strings.Repeat("x", 8)
	writeFile(t, filepath.Join(base, "outside", "leak.yaml"), configMap("leak")+"data: {token: "+secret+"}\n")
	writeFile(t, filepath.Join(base, "outside", "dir", "more.yaml"), configMap("more"))
	writeFile(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(repo, "shared", "common.yaml"), configMap("common"))
	writeFile(t, filepath.Join(repo, "k8s", "a.yaml"), configMap("a"))
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(repo, "k8s", name)); err != nil {
			t.Fatal(err)
		}
	}
	link("../shared/common.yaml", "common.yaml")                   // inside the repository
	link(filepath.Join(base, "outside", "leak.yaml"), "leak.yaml") // outside, absolute
	link("../../outside/leak.yaml", "rel.yaml")                    // outside, relative
	link("../../outside/dir", "dir.yaml")                          // a directory outside
	link("missing.yaml", "dangling.yaml")                          // leads nowhere
	if err := os.Symlink(filepath.Join(base, "outside"), filepath.Join(base, "named")); err != nil {
		t.Fatal(err)
	}

	rel := func(p string) string {
		if r, err := filepath.Rel(base, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	load := func(paths ...string) (objects, errs []string) {
		l := &Loader{Workers: 2}
		l.Load(paths, func(o *object.Object) {
			objects = append(objects, o.Ref.Name+"@"+rel(o.Source.File))
		}, func(e Error) { errs = append(errs, rel(e.File)+": "+e.Message) })
		return objects, errs
	}
	root, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	outside := func(p string) string {
		return "repo/k8s/" + p + ": " + filepath.Join(repo, "k8s", p) + " is a symbolic link, or is reached through one, to a path outside " + root + ": not read"
	}
	tests := []struct {
		name    string
		paths   []string
		objects []string
		errs    []string
	}{{
		name:    "a directory",
		paths:   []string{filepath.Join(repo, "k8s")},
		objects: []string{"a@repo/k8s/a.yaml", "common@repo/k8s/common.yaml"},
		errs: []string{
			"repo/k8s/dangling.yaml: " + filepath.Join(repo, "k8s", "dangling.yaml") + " cannot be resolved: no such file or directory",
			outside("dir.yaml"), outside("leak.yaml"), outside("rel.yaml"),
		},
	}, {
		name:    "files named as a glob names them",
		paths:   []string{filepath.Join(repo, "k8s", "common.yaml"), filepath.Join(repo, "k8s", "leak.yaml")},
		objects: []string{"common@repo/k8s/common.yaml"},
		errs:    []string{outside("leak.yaml")},
	}, {
		name:    "a directory named through a link",
		paths:   []string{filepath.Join(base, "named")},
		objects: []string{"more@named/dir/more.yaml", "leak@named/leak.yaml"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objects, errs := load(tc.paths...)
			if diff := cmp.Diff(tc.objects, objects); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.errs, errs); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if tc.name != "a directory named through a link" {
				for _, e := range errs {
					if strings.Contains(e, secret) || strings.Contains(e, "outside/leak") {
						t.Errorf("an error tells what is outside: %s", e)
					}
				}
			}
		})
	}
}

// TestRoot checks where an input's root is: the repository above it, else
// the directory itself, else the directory a file is named in.
func TestRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(base, "repo", ".git"), "gitdir: ../main/.git/worktrees/repo\n") // a worktree's file
	writeFile(t, filepath.Join(base, "repo", "charts", "shop", "Chart.yaml"), "name: shop\n")
	writeFile(t, filepath.Join(base, "plain", "a.yaml"), configMap("a"))
	for _, tc := range []struct{ input, want string }{
		{"repo/charts/shop", "repo"},
		{"repo/charts/shop/Chart.yaml", "repo"},
		{"plain", "plain"},
		{"plain/a.yaml", "plain"},
	} {
		got, err := Root(filepath.Join(base, tc.input))
		if err != nil || got != filepath.Join(base, tc.want) {
			t.Errorf("Root(%s) = %s, %v; want %s", tc.input, got, err, filepath.Join(base, tc.want))
		}
	}
	if _, err := Root(filepath.Join(base, "missing")); err == nil {
		t.Error("Root of a missing path: no error")
	}
}
