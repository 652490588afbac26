package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

type got struct {
	Objects []string // Kind/name@line
	Errors  []string // line: message prefix
}

func parse(t *testing.T, data string) got {
	t.Helper()
	var g got
	Parse("f.yaml", []byte(data), func(o *object.Object) {
		g.Objects = append(g.Objects, o.Ref.Kind+"/"+o.Ref.Name+"@"+itoa(o.Source.Line))
	}, func(e Error) {
		if e.File != "f.yaml" {
			t.Errorf("error names file %q", e.File)
		}
		g.Errors = append(g.Errors, itoa(e.Line)+": "+e.Message)
	})
	return g
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want got
	}{
		{"multi-document", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# comment\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n",
			got{Objects: []string{"ConfigMap/a@1", "Secret/b@7"}}},
		{"leading separator and document end", "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n...\n",
			got{Objects: []string{"ConfigMap/a@2"}}},
		{"flow style", "{apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}\n",
			got{Objects: []string{"Pod/p@1"}}},
		{"json", `{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}`,
			got{Objects: []string{"Pod/p@1"}}},
		{"list", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
			got{Objects: []string{"ConfigMap/a@4", "ConfigMap/b@7"}}},
		{"typed list", "apiVersion: v1\nkind: ConfigMapList\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n",
			got{Objects: []string{"ConfigMap/a@4"}}},
		{"custom resource passes through", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {anything: [1, 2]}\n",
			got{Objects: []string{"Widget/w@1"}}},
		{"empty file", "", got{}},
		{"only comments", "# nothing\n---\n# here\n", got{}},
		{"malformed document keeps the others", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkey: [unclosed\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			got{Objects: []string{"ConfigMap/a@1", "ConfigMap/c@7"}, Errors: []string{"5: invalid YAML: did not find expected ',' or ']'"}}},
		{"error line inside a later document", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n   bad: indent\n",
			got{Objects: []string{"ConfigMap/a@1"}, Errors: []string{"9: invalid YAML: mapping values are not allowed in this context"}}},
		{"not an object: list", "- a\n- b\n", got{Errors: []string{"1: document is not an object (found a list)"}}},
		{"not an object: scalar", "hello\n", got{Errors: []string{`1: document is not an object (found the scalar "hello")`}}},
		{"no kind", "apiVersion: v1\nmetadata: {name: a}\n", got{Errors: []string{"1: object has no kind"}}},
		{"no apiVersion and kind", "metadata: {name: a}\n", got{Errors: []string{"1: object has no apiVersion and kind"}}},
		{"wrong field type names the field's line", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: many\n  template: {}\n",
			got{Objects: []string{"Deployment/d@1"}, Errors: []string{"5: Deployment/d: field spec.replicas: cannot use a JSON string as int32"}}},
		{"label that is a number", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels:\n    version: 1.0\n",
			got{Errors: []string{"6: field metadata.labels.version: cannot use a JSON number as string"}}},
		{"case matters as in Kubernetes", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  HostNetwork: true\n  containers: [{name: c}]\n",
			got{Objects: []string{"Pod/p@1"}}},
		{"duplicate key in a later document names file lines", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  k: 1\n  k: 2\n",
			got{Objects: []string{"ConfigMap/a@1"}, Errors: []string{`10: invalid YAML: mapping key "k" already defined at line 9`}}},
		{"a bad quantity names its field and line", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests: {memory: 1Gi, cpu: lots}\n",
			got{Objects: []string{"Pod/p@1"}, Errors: []string{"8: Pod/p: field spec.containers[0].resources.requests.cpu: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"}}},
		{"a number out of range names its value", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 3000000000\n",
			got{Objects: []string{"Deployment/d@1"}, Errors: []string{"5: Deployment/d: field spec.replicas: cannot use a JSON number 3000000000 as int32"}}},
		{"a quantity whose exponent would take minutes is refused", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests: {cpu: \"1E-777777771\"}\n",
			got{Objects: []string{"Pod/p@1"}, Errors: []string{`8: Pod/p: field spec.containers[0].resources.requests.cpu: quantity "1E-777777771": its exponent is out of range`}}},
		{"a quantity of an extreme exponent and a space is refused", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests: {cpu: \"1E-777777771 \"}\n",
			got{Objects: []string{"Pod/p@1"}, Errors: []string{`8: Pod/p: field spec.containers[0].resources.requests.cpu: quantity "1E-777777771 ": its exponent is out of range`}}},
		{"a quantity of an extreme exponent in a literal block is refused", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests:\n          cpu: |-\n            1E-777777771\n",
			got{Objects: []string{"Pod/p@1"}, Errors: []string{`9: Pod/p: field spec.containers[0].resources.requests.cpu: quantity "1E-777777771": its exponent is out of range`}}},
		{"near miss: a quantity of three exponent digits", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n    - name: c\n      resources:\n        requests: {cpu: \"1E-100\", memory: 1Ei}\n",
			got{Objects: []string{"Pod/p@1"}}},
		{"base64 on several lines, as the API server reads it", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nbinaryData:\n  k: |\n    AAAA\n    BBBB\n",
			got{Objects: []string{"ConfigMap/c@1"}}},
		{"alias bomb is refused", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nkind: X\n",
			got{Errors: []string{"1: invalid YAML: document contains excessive aliasing"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := parse(t, tc.in)
			if diff := cmp.Diff(tc.want, g, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestHostNetworkCaseSensitive(t *testing.T) {
	var pod *object.Object
	Parse("f.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  HostNetwork: true\n  containers: [{name: c}]\n"),
		func(o *object.Object) { pod = o }, func(e Error) { t.Fatal(e) })
	if pod.Pod.Template.Spec.HostNetwork {
		t.Error("HostNetwork (capital H) must not set hostNetwork: the API server decodes case-sensitively")
	}
}

func TestBadBytes(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"binary", "apiVersion: v1\x00\x01\x02", "0: binary file (contains a NUL byte), not YAML or JSON"},
		{"latin-1", "apiVersion: v1\nkind: ConfigMap\ndata: {a: caf\xe9}\n", "3: not valid UTF-8 text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := parse(t, tc.in)
			if diff := cmp.Diff([]string{tc.want}, g.Errors); diff != "" || len(g.Objects) > 0 {
				t.Errorf("(-want +got):\n%s objects %v", diff, g.Objects)
			}
		})
	}
}

func TestFieldLines(t *testing.T) {
	const doc = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
spec:
  template:
    metadata:
      annotations:
        eks.amazonaws.com/compute-type: ec2
    spec:
      containers:
        - name: a
          image: x
        - name: b
          securityContext:
            privileged: true
`
	var o *object.Object
	Parse("f.yaml", []byte(doc), func(obj *object.Object) { o = obj }, func(e Error) { t.Fatal(e) })
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
		t.Fatal(err)
	}
	lib := newLineIndex(root.Content[0], 0) // yaml.v3's path, for what the fast parser declines
	for path, want := range map[string]int{
		"":     1,
		"kind": 2,
		"spec.template.spec.containers[1].securityContext.privileged":        16,
		"spec.template.spec.containers[0]":                                   12,
		"spec.template.metadata.annotations[eks.amazonaws.com/compute-type]": 9,
		"spec.template.spec.containers[7]":                                   11, // missing: nearest ancestor
		"spec.template.spec.hostNetwork":                                     10,
		"spec.template.metadata.annotations[eks.amazonaws.com":               8,  // no ']': the rest is one key, not found
		"spec.template.spec.containers[1]securityContext":                    15, // a key right after an index
	} {
		if got := o.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
		if got := lib.Line(path); got != want {
			t.Errorf("yaml.v3's index: Line(%q) = %d, want %d", path, got, want)
		}
	}
}

// TestLineIndexKeysBound: the keys an index holds are bounded, as its nodes
// are; a mapping whose keys would pass the bound is not indexed, and paths
// into it resolve to its line.
func TestLineIndexKeysBound(t *testing.T) {
	key := func(n int) *yaml.Node {
		return &yaml.Node{Kind: yaml.ScalarNode, Value: strings.Repeat("k", n), Line: 3}
	}
	for _, tc := range []struct {
		name    string
		keySize int
		want    int
	}{
		{"keys within the bound", maxLineKeys - 1, 3},
		{"keys past the bound", maxLineKeys + 1, 2},
	} {
		inner := &yaml.Node{Kind: yaml.MappingNode, Line: 3, Content: []*yaml.Node{key(tc.keySize), {Kind: yaml.ScalarNode, Value: "v", Line: 3}}}
		root := &yaml.Node{Kind: yaml.MappingNode, Line: 1, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: "m", Line: 2}, inner}}
		if got := newLineIndex(root, 0).Line("m." + strings.Repeat("k", tc.keySize)); got != tc.want {
			t.Errorf("%s: line %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, filepath.Join(dir, name), data) }
	write("a.yaml", configMap("a"))
	write("sub/b.yml", configMap("b"))
	write("sub/c.json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`)
	write("sub/readme.md", "not read")
	write(".hidden/d.yaml", configMap("d"))
	write(".fargatekit.yaml", "disable: [FG001]\n")
	write("vendor/e.yaml", configMap("e"))
	write("big.yaml", configMap("big")+strings.Repeat("# padding\n", 200))

	var names, errs []string
	l := &Loader{
		MaxFileSize: 1000,
		Stdin:       strings.NewReader(configMap("stdin")),
		Skip:        func(p string) bool { return strings.Contains(filepath.ToSlash(p), "/vendor/") },
	}
	l.Load([]string{dir, "-", filepath.Join(dir, "missing.yaml")}, func(o *object.Object) {
		names = append(names, o.Ref.Name+"@"+filepath.Base(o.Source.File))
	}, func(e Error) { errs = append(errs, filepath.Base(e.File)+": "+e.Message) })

	if diff := cmp.Diff([]string{"a@a.yaml", "b@b.yml", "c@c.json", "stdin@<stdin>"}, names); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	wantErrs := []string{
		"big.yaml: file is too large (2053 bytes; the limit is 1000, see --max-file-size)",
		"missing.yaml: no such file or directory",
	}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLoadSymlinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "a.yaml"), []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	var files []string
	(&Loader{}).Load([]string{link}, func(o *object.Object) { files = append(files, o.Source.File) }, func(e Error) { t.Error(e) })
	if diff := cmp.Diff([]string{filepath.Join(link, "a.yaml")}, files); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStdinTooLarge(t *testing.T) {
	var errs []string
	l := &Loader{MaxFileSize: 10, Stdin: bytes.NewReader(make([]byte, 11))}
	l.Load([]string{"-"}, func(*object.Object) {}, func(e Error) { errs = append(errs, e.Error()) })
	if diff := cmp.Diff([]string{"<stdin>: input is too large (more than 10 bytes, see --max-file-size)"}, errs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n"))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: p}}]\n"))
	f.Add([]byte("---\n---\n- a\n---\n{\"kind\": 1}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Parse("f.yaml", data, func(o *object.Object) {
			if o.Ref.Kind == "" || o.Ref.APIVersion == "" {
				t.Fatalf("object without kind or apiVersion: %+v", o.Ref)
			}
			_ = o.Line("spec.template.spec.containers[0].image")
		}, func(e Error) {
			if e.File != "f.yaml" || e.Message == "" {
				t.Fatalf("error without file or message: %+v", e)
			}
		})
	})
}

// TestLoadExpand checks the Expand hook: asked about the paths given and
// every directory and file met (not about hidden or skipped ones), a handled
// directory not descended into, its documents parsed under their own names
// in input order, an error reported at the path with the other inputs still
// read.
func TestLoadExpand(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, filepath.Join(dir, name), data) }
	write("a.yaml", configMap("a"))
	write("chart/Chart.yaml", "name: chart\n")
	write("chart/templates/cm.yaml", "{{ not YAML }}: [\n")
	write("m/broken/Chart.yaml", "name: broken\n")
	write("m/pkg.tgz", "packaged")
	write("m/z.yaml", configMap("z"))
	write("skipped/c.yaml", configMap("c"))
	write(".hidden/Chart.yaml", "name: hidden\n")

	rel := func(p string) string {
		r, err := filepath.Rel(dir, p)
		if err != nil {
			return p
		}
		return filepath.ToSlash(r)
	}
	var asked, roots []string
	l := &Loader{
		Workers: 2,
		Skip:    func(p string) bool { return strings.HasSuffix(p, "skipped") },
		Expand: func(path string, info fs.FileInfo, root string) ([]Document, bool, error) {
			asked = append(asked, rel(path))
			roots = append(roots, root)
			switch filepath.Base(path) {
			case "chart":
				if !info.IsDir() {
					t.Errorf("Expand(%s): info is not the directory's", path)
				}
				return []Document{
					{File: filepath.Join(path, "templates", "cm.yaml"), Data: []byte(configMap("from-chart"))},
					{File: filepath.Join(path, "templates", "bad.yaml"), Data: []byte("---\nkind: [\n")},
				}, true, nil
			case "pkg.tgz":
				return []Document{{File: path + ":pkg/templates/cm.yaml", Data: []byte("# rendered\n" + configMap("from-archive"))}}, true, nil
			case "broken":
				return nil, true, errors.New("rendering chart broken: template failed")
			case "skipped":
				t.Errorf("Expand asked about the skipped directory %s", path)
				return nil, true, nil
			}
			return nil, false, nil
		},
	}
	var objects, errs, onFile []string
	l.OnFile = func(p string) { onFile = append(onFile, rel(p)) }
	l.Load([]string{dir, filepath.Join(dir, "chart")}, func(o *object.Object) {
		objects = append(objects, o.Ref.Name+"@"+rel(o.Source.File)+":"+itoa(o.Source.Line))
	}, func(e Error) { errs = append(errs, rel(e.File)+":"+itoa(e.Line)+": "+e.Message) })

	want := []string{".", "a.yaml", "chart", "m", "m/broken", "m/pkg.tgz", "m/z.yaml", "skipped/c.yaml", "chart"}
	if diff := cmp.Diff(want, asked); diff != "" {
		t.Errorf("paths Expand was asked about (-want +got):\n%s", diff)
	}
	// Each input is its own root, as no repository holds them.
	resolved, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	wantRoots := slices.Repeat([]string{resolved}, len(want)-1)
	wantRoots = append(wantRoots, filepath.Join(resolved, "chart"))
	if diff := cmp.Diff(wantRoots, roots); diff != "" {
		t.Errorf("the roots Expand was given (-want +got):\n%s", diff)
	}
	wantObjects := []string{
		"a@a.yaml:1",
		"from-chart@chart/templates/cm.yaml:1",
		"from-archive@m/pkg.tgz:pkg/templates/cm.yaml:2",
		"z@m/z.yaml:1",
		"c@skipped/c.yaml:1",
		"from-chart@chart/templates/cm.yaml:1",
	}
	if diff := cmp.Diff(wantObjects, objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	wantErrs := []string{
		"chart/templates/bad.yaml:2: invalid YAML: did not find expected node content",
		"m/broken:0: rendering chart broken: template failed",
		"chart/templates/bad.yaml:2: invalid YAML: did not find expected node content",
	}
	if diff := cmp.Diff(wantErrs, errs); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	wantFiles := []string{"a.yaml", "chart", "m/broken", "m/pkg.tgz", "m/z.yaml", "skipped/c.yaml", "chart"}
	if diff := cmp.Diff(wantFiles, onFile); diff != "" {
		t.Errorf("OnFile (-want +got):\n%s", diff)
	}
}

// writeFile writes data to path, making its directories.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// configMap is a minimal object named name.
func configMap(name string) string {
	return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " + name + "}\n"
}

// TestSkipNonManifests checks that SkipNonManifests drops the files that hold
// no Kubernetes object and nothing else: a manifest's own problems stay, in a
// file with objects or alone, and so do they without the option; an input
// with no file at all is still an error.
func TestSkipNonManifests(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ci.yaml":     "on: push\njobs: {}\n", // no apiVersion and kind
		"hooks.yaml":  "- id: a\n",            // a list
		"mixed.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nfoo: bar\n",
		"broken.yaml": "kind: Pod\nmetadata: {name: b}\n",                      // a manifest without apiVersion
		"bad.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n", // not YAML
	}
	var paths []string
	for name, data := range files {
		writeFile(t, filepath.Join(dir, name), data)
	}
	for _, name := range []string{"bad.yaml", "broken.yaml", "ci.yaml", "hooks.yaml", "mixed.yaml"} {
		paths = append(paths, filepath.Join(dir, name))
	}
	load := func(skip bool, paths []string) (objects int, errs []string) {
		(&Loader{SkipNonManifests: skip}).Load(paths, func(*object.Object) { objects++ }, func(e Error) {
			errs = append(errs, strings.TrimPrefix(e.Error(), dir+string(filepath.Separator)))
		})
		return objects, errs
	}
	objects, errs := load(true, paths)
	want := []string{"bad.yaml:3: invalid YAML: did not find expected node content", "broken.yaml:1: object has no apiVersion", "mixed.yaml:5: object has no apiVersion and kind"}
	if diff := cmp.Diff(want, errs); objects != 1 || diff != "" {
		t.Errorf("skipping: %d objects, errors (-want +got):\n%s", objects, diff)
	}
	if _, errs := load(false, paths); len(errs) != 5 {
		t.Errorf("without skipping, every file has its error: %q", errs)
	}
	if objects, errs := load(true, paths[2:4]); objects != 0 || len(errs) != 0 {
		t.Errorf("only files without objects: %d objects, errors %q; want none", objects, errs)
	}
	// The wrong directory is still an error: nothing was read.
	if _, errs := load(true, []string{t.TempDir()}); len(errs) != 1 || !strings.Contains(errs[0], "no Kubernetes objects found") {
		t.Errorf("an empty directory: errors %q; want that no object was found", errs)
	}
}

// TestLoadInParts: a file larger than a part is parsed in parts on several
// goroutines, its objects emitted while later parts are still to come, and
// objects and errors come as Parse gives them, at the same lines.
func TestLoadInParts(t *testing.T) {
	var b strings.Builder
	const docs = 4000
	for i := range docs {
		if i%1000 == 999 {
			b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: [\n---\n") // not YAML
			continue
		}
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c%d\ndata:\n  padding: %q\n---\n", i, strings.Repeat("x", 1000))
	}
	data := b.String()
	if len(data) < 10*partBytes {
		t.Fatalf("%d bytes: not the case meant", len(data))
	}
	want := parse(t, data)
	path := filepath.Join(t.TempDir(), "f.yaml")
	writeFile(t, path, data)

	for _, input := range []string{path, "-"} {
		var g got
		var prepared, atFirst atomic.Int64
		l := &Loader{Workers: 2, Stdin: strings.NewReader(data), Prepare: func(*object.Object) { prepared.Add(1) }}
		l.Load([]string{input}, func(o *object.Object) {
			if g.Objects == nil {
				atFirst.Store(prepared.Load())
			}
			g.Objects = append(g.Objects, o.Ref.Kind+"/"+o.Ref.Name+"@"+itoa(o.Source.Line))
		}, func(e Error) { g.Errors = append(g.Errors, itoa(e.Line)+": "+e.Message) })
		if diff := cmp.Diff(want, g); diff != "" {
			t.Errorf("%s: (-Parse +Load):\n%s", input, diff)
		}
		if n := atFirst.Load(); n >= docs/2 {
			t.Errorf("%s: %d objects parsed before the first was emitted: not in parts", input, n)
		}
	}

	// A chart whose rendered files are small but many: parts too.
	var rendered []Document
	var wantNames []string
	for i := range docs {
		name := fmt.Sprintf("c%d", i)
		rendered = append(rendered, Document{File: fmt.Sprintf("t%d.yaml", i), Data: []byte(configMap(name) + "data: {padding: " + strings.Repeat("x", 1000) + "}\n")})
		wantNames = append(wantNames, name)
	}
	var names []string
	var prepared, atFirst atomic.Int64
	l := &Loader{Workers: 2, Prepare: func(*object.Object) { prepared.Add(1) },
		Expand: func(string, fs.FileInfo, string) ([]Document, bool, error) { return rendered, true, nil }}
	l.Load([]string{path}, func(o *object.Object) {
		if names == nil {
			atFirst.Store(prepared.Load())
		}
		names = append(names, o.Ref.Name)
	}, func(e Error) { t.Error(e) })
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("a large chart's objects (-want +got):\n%s", diff)
	}
	if n := atFirst.Load(); n >= docs/2 {
		t.Errorf("a large chart: %d objects parsed before the first was emitted: not in parts", n)
	}

	// A large file without any object is skipped whole.
	other := filepath.Join(t.TempDir(), "values.yaml")
	writeFile(t, other, strings.Repeat("foo: "+strings.Repeat("x", 1000)+"\n---\n", 2000))
	var errs []Error
	(&Loader{Workers: 2, SkipNonManifests: true}).Load([]string{other, path}, func(*object.Object) {}, func(e Error) { errs = append(errs, e) })
	if len(errs) != len(want.Errors) {
		t.Errorf("skipping a large file of no object: %d errors, want %d (those of f.yaml)", len(errs), len(want.Errors))
	}
}

// TestLoadOrderManyFiles: files large enough to be parsed in parts, among
// small ones and more of them than the workers parse ahead, come out whole
// and in input order, and the workers are gone once Load returns. (Workers
// that wait on each other for ever fail it at go test's -timeout.)
func TestLoadOrderManyFiles(t *testing.T) {
	dir := t.TempDir()
	var paths, want []string
	for i := range 3 * aheadPerWorker * 2 {
		docs := 1
		if i%3 != 2 {
			docs = partBytes/1000 + 50 // over a part of 1 KB documents
		}
		var b strings.Builder
		for j := range docs {
			name := fmt.Sprintf("f%d-c%d", i, j)
			b.WriteString(configMap(name) + "data: {padding: " + strings.Repeat("x", 1000) + "}\n---\n")
			want = append(want, name)
		}
		path := filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i))
		writeFile(t, path, b.String())
		paths = append(paths, path)
	}
	before := runtime.NumGoroutine()
	var got []string
	call := oneAtATime(t, &got)
	(&Loader{Workers: 2}).Load(paths, func(o *object.Object) { call(o.Ref.Name) }, func(e Error) { t.Error(e) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	// The workers end once the last unit is taken: soon after Load returns.
	for wait := time.Millisecond; runtime.NumGoroutine() > before; wait *= 2 {
		if wait > 5*time.Second {
			t.Fatalf("%d goroutines before Load, %d after it returned", before, runtime.NumGoroutine())
		}
		time.Sleep(wait)
	}
}

// TestLoadOrderSmallFiles holds every worker count to the same calls, in
// input order and one at a time: many small files, some with a broken
// document after an object, some holding no object, each told to OnFile
// before its objects and its objects before its errors.
func TestLoadOrderSmallFiles(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 60 {
		path := filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i))
		want = append(want, "file "+path)
		var b strings.Builder
		if i%7 != 3 { // f03, f10, ... hold no object
			for j := range i % 3 {
				name := fmt.Sprintf("f%02d-c%d", i, j)
				b.WriteString(configMap(name) + "---\n")
				want = append(want, "object "+name)
			}
		}
		if i%5 == 0 || i%7 == 3 {
			b.WriteString("a: [\n")
			want = append(want, "error "+path)
		}
		writeFile(t, path, b.String())
	}
	for workers := 1; workers <= 4; workers++ {
		t.Run(fmt.Sprint("workers=", workers), func(t *testing.T) {
			var got []string
			call := oneAtATime(t, &got)
			l := &Loader{Workers: workers, OnFile: func(path string) { call("file " + path) }}
			l.Load([]string{dir}, func(o *object.Object) { call("object " + o.Ref.Name) }, func(e Error) { call("error " + e.File) })
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// oneAtATime returns a recorder of the loader's calls into got. The workers
// call it, one at a time: a call that starts while another runs fails the
// test (and the race detector sees got written at once).
func oneAtATime(t *testing.T, got *[]string) func(string) {
	var calling atomic.Int32
	return func(s string) {
		if calling.Add(1) != 1 {
			t.Errorf("%s while another call ran", s)
		}
		*got = append(*got, s)
		calling.Add(-1)
	}
}
