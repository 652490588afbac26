package manifest

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// sameIndex describes the first difference between two line indexes: the
// key, line and kind of every node, whatever their order in the array.
func sameIndex(fast, lib *lineIndex, fi, li int32, path string) error {
	f, l := &fast.nodes[fi], &lib.nodes[li]
	if fast.key(fi) != lib.key(li) || f.line != l.line || f.seq != l.seq || f.count != l.count {
		return fmt.Errorf("lines at %s: fast %q %+v, yaml.v3 %q %+v", path, fast.key(fi), *f, lib.key(li), *l)
	}
	for i := range f.count {
		if err := sameIndex(fast, lib, f.first+i, l.first+i, fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// extremeValue reports whether a scalar under n, not a key, would be read
// as a quantity of an object.ExtremeExponent.
func extremeValue(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return object.ExtremeExponent(strings.TrimSpace(n.Value))
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			if extremeValue(n.Content[i]) {
				return true
			}
		}
	case yaml.SequenceNode:
		return slices.ContainsFunc(n.Content, extremeValue)
	}
	return false
}

// differ parses data with the fast parser and with yaml.v3, toJSON's direct
// path and newLineIndex, and describes how they differ: JSON, lines, the
// root's kind and line, apiVersion and kind, whether a value is a quantity
// of an extreme exponent; "" when they agree or the fast
// parser declines.
func differ(data string) (accepted bool, diff string) {
	fast, ok := new(fastParser).parse([]byte(data))
	if !ok {
		return false, ""
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(data), &root); err != nil {
		return true, fmt.Sprintf("fast parser accepted what yaml.v3 refuses: %v", err)
	}
	if len(root.Content) == 0 {
		if fast.root.kind != 0 {
			return true, "fast parser found a node in an empty document"
		}
		return true, ""
	}
	n := root.Content[0]
	if yaml.Kind(fast.root.kind) != n.Kind || int(fast.root.line) != n.Line {
		return true, fmt.Sprintf("root: fast kind %d line %d, yaml.v3 kind %d line %d", fast.root.kind, fast.root.line, n.Kind, n.Line)
	}
	want, err := appendJSON(nil, n)
	if err != nil {
		return true, fmt.Sprintf("fast parser accepted what toJSON leaves to the library: %v", err)
	}
	if !bytes.Equal(fast.json, want) {
		return true, fmt.Sprintf("JSON:\nfast    %s\nyaml.v3 %s", fast.json, want)
	}
	lines := newLineIndex(n, 0)
	if err := sameIndex(fast.lines, lines, 0, 0, ""); err != nil {
		return true, err.Error()
	}
	if want := extremeValue(n); fast.extreme != want {
		return true, fmt.Sprintf("fast parser noted a quantity of an extreme exponent: %v, yaml.v3's tree has one: %v", fast.extreme, want)
	}
	if fast.apiVersion != scalar(n, "apiVersion") || fast.kind != scalar(n, "kind") {
		return true, fmt.Sprintf("fast apiVersion %q kind %q, yaml.v3 %q %q", fast.apiVersion, fast.kind, scalar(n, "apiVersion"), scalar(n, "kind"))
	}
	return true, ""
}

// fastYAMLSeeds are documents of the subset, and near it.
var fastYAMLSeeds = []string{
	deployment,
	"a: 1\nb: [x, 2.5, true, null, '3']\nc: {d: \"e\\n\\\"q\\\"\"}\n",
	"n: -0\nf: 1e3\ng: .5\nh: 0x1F\ni: 007\nj: 1_000\nk: 08\nl: +12\nm: 1e999\n",
	"a:\n- x\n- y:\n    z: 1\n  w: 2\n-\n- - q\nb: ~\nc:\n",
	"k: |\n  multi\n\n  line\n   more\n\nl: |-\n  x\n\n\nm: |+\n  y\n\n",
	"k: |\n\n  x\n  \n    \nn: |  # c\n  a\n",
	"# c\na: 'it''s' # c\nb: \"\\x41\\u00e9\\U0001F600\\t\"\n\n",
	"a: {b: [1, 2], c: {}}\nd: []\ne: [\n  1,\n  2]\n",
	"a: 2001-12-14\nb: <<\nc: &x 1\nd: *x\ne: !t x\n",
	"'a': 1\n\"b\": 2\nc:d: 3\n? x\n: y\n",
	"a: b: c\n", "a: - b\n", "- a\nb: 1\n", "a:\n  b\n  c\n", "a: [1, 2,]\n", "a: {b}\n",
	"a: x # c\n  y\n", "a:\n    b: 1\n  c: 2\n", "a: |\n  x", "a:\n  - b\n  c: 1\n",
	"  a: 1\n", "a: 'x\n  y'\n", "a: \"x\ny\"\n", "%YAML 1.2\n---\na: 1\n", "a: 1\n...\n",
	"a: [b, c]x\n", "a: \"x\"y\n", "a: {b: c} # c\n", "- {a: b}\n- [c]\n", "a: -x\nb: -1\nc: - \n",
	strings.Repeat("k", 1100) + ": v\n", "'" + strings.Repeat("k", 1100) + "': v\n", "a: [" + strings.Repeat("k", 1100) + "]\n",
	"{a: 1}: b\n", "a: [b: c]\n", "a: [nginx:1.27, {image: x:1}, 'q':, c?d, e:]\n", "a: [b, c:d]\nb: {c:d}\n", "a: {\"b\":c}\n", "a: {b : c}\n", "a: 0b101\nb: 0o17\nc: -0x1F\nd: 1_0.5\n",
	"cpu: \"1E-777777771\"\nm: {a: ' 2e1000 '}\nl: |-\n  e99999\nk: [1e0003, 1E-999]\n'1e99999': x\n", "k: [a, '1e1000']\n", "k: 1e0003\n",
	"'1e99999': x\n", "{'1e99999': x}\n", "k: [1e-7777]\n",
}

// TestFastYAML: the fast parser gives yaml.v3's JSON and lines for every
// seed it accepts, and accepts the manifests' subset.
func TestFastYAML(t *testing.T) {
	for _, seed := range fastYAMLSeeds {
		if _, diff := differ(seed); diff != "" {
			t.Errorf("%s\n%s", diff, seed)
		}
	}
	for doc, extreme := range map[string]bool{
		deployment: false, "a:\n- x\n- y:\n    z: 1\n  w: 2\n": false, "k: |\n  x\n": false,
		"cpu: '1E-777777771'\n": true, "k: {a: [\" 2e1000\"]}\n": true, "l: |-\n  e99999\n": true,
		"'1e99999': x\n": false, "k: [1e0003, 1E-999, 8080]\n": false,
	} {
		d, ok := new(fastParser).parse([]byte(doc))
		if !ok {
			t.Errorf("fast parser declined:\n%s", doc)
		}
		if d.extreme != extreme {
			t.Errorf("a quantity of an extreme exponent: %v, want %v:\n%s", d.extreme, extreme, doc)
		}
	}
	for _, doc := range []string{"a: &x 1\n", "a: !t x\n", "a: 2001-12-14\n", "<<: {a: 1}\n", "a: >\n  x\n", "a: x\n  y\n",
		"a: 1\na: 2\n", "a: {b: 1, b: 2}\n", "1: a\n", "{true: a}\n", "a: 0x1F\n", "a: .inf\n"} {
		if _, ok := new(fastParser).parse([]byte(doc)); ok {
			t.Errorf("fast parser accepted:\n%s", doc)
		}
	}
}

// TestParserReuse: one parser parsing document after document (the seeds,
// some of them declined half way, and the examples) gives for each what a
// new parser does: nothing of the document before shows through.
func TestParserReuse(t *testing.T) {
	docs := slices.Clone(fastYAMLSeeds)
	err := filepath.WalkDir("../../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !hasExtension(path) {
			return err
		}
		data, err := os.ReadFile(path)
		for _, doc := range splitDocuments(data) {
			docs = append(docs, string(doc.data))
		}
		return err
	})
	if err != nil || len(docs) < 50 {
		t.Fatalf("%d documents: %v", len(docs), err)
	}
	reused := new(fastParser)
	for _, doc := range append(docs, docs...) {
		got, gotOK := reused.parse([]byte(doc))
		want, wantOK := new(fastParser).parse([]byte(doc))
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Errorf("the reused parser's result differs from a new one's (accepted %v, %v):\n%s", gotOK, wantOK, doc)
		}
	}
}

// TestParseKeepsNoInput: the fast parser reads a document in place, not a
// copy of it, and nothing Parse returns (an object's index of lines above
// all, or an error) refers to the bytes parsed, whichever parser read them:
// the Loader reads the next file into the same buffer (release).
// Overwritten once parsed, the examples, and documents left to yaml.v3, give
// the objects and errors of the bytes left alone.
func TestParseKeepsNoInput(t *testing.T) {
	inputs := map[string][]byte{
		"anchors.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a, labels: {app: a}}\ndata: {k: v}\n---\n" +
			"apiVersion: v1\nkind: Pod\nmetadata: *m\nspec: {containers: [{name: c, image: \"x:1\"}], hostNetwork: true}\n"),
		"list.yaml":   []byte("apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Service, metadata: {name: s}, spec: {selector: {app: a}}}\n"),
		"broken.yaml": []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: many}\n---\nkey: [unclosed\n"),
	}
	err := filepath.WalkDir("../../examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !hasExtension(path) {
			return err
		}
		inputs[path], err = os.ReadFile(path)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	objects, errs := 0, 0
	for path, data := range inputs {
		parse := func(data []byte) (out []*object.Object, errs []Error) {
			Parse(path, data, func(o *object.Object) { out = append(out, o) }, func(e Error) { errs = append(errs, e) })
			return out, errs
		}
		buf := slices.Clone(data)
		got, gotErrs := parse(buf)
		for i := range buf {
			buf[i] = 'x'
		}
		want, wantErrs := parse(data)
		objects, errs = objects+len(want), errs+len(wantErrs)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotErrs, wantErrs) {
			t.Errorf("%s: the objects or errors changed with the bytes they were parsed from", path)
		}
	}
	if objects < 40 || errs < 2 { // 52 objects, 5 errors on 2026-11-26
		t.Fatalf("%d objects, %d errors", objects, errs)
	}
}

// TestFastDocKeepsNoInput: nothing of what the fast parser returns refers
// to the bytes it parsed, which the Loader reuses for the next file: the
// document overwritten once parsed, the result is that of a copy left
// alone.
func TestFastDocKeepsNoInput(t *testing.T) {
	accepted := 0
	for _, doc := range append(slices.Clone(fastYAMLSeeds), "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n", "just a scalar\n") {
		buf := []byte(doc)
		got, ok := new(fastParser).parse(buf)
		if !ok {
			continue
		}
		accepted++
		for i := range buf {
			buf[i] = 'x'
		}
		want, _ := new(fastParser).parse([]byte(doc))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the result changed with the bytes it was parsed from:\n%s", doc)
		}
	}
	if accepted < 2 {
		t.Fatalf("%d documents accepted", accepted)
	}
}

// FuzzFastYAML: on every document the fast parser accepts, its JSON and
// lines are those of yaml.v3's tree.
func FuzzFastYAML(f *testing.F) {
	for _, seed := range fastYAMLSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		if _, diff := differ(data); diff != "" {
			t.Fatalf("%s\n%s", diff, strings.ReplaceAll(data, "\n", "⏎\n"))
		}
	})
}

// TestFastYAMLFiles: on every document of the repository's YAML files
// (examples, fixtures, charts, workflows) and of the directories listed in
// FARGATEKIT_YAML_CORPUS (by hand: a corpus of real-world manifests), the
// fast parser gives the JSON and lines of yaml.v3's tree or declines; it accepts most of the
// manifests of examples/, so that check's speed is the fast parser's.
func TestFastYAMLFiles(t *testing.T) {
	roots := []string{"../.."}
	if extra := os.Getenv("FARGATEKIT_YAML_CORPUS"); extra != "" {
		roots = append(roots, filepath.SplitList(extra)...)
	}
	accepted, documents := map[bool]int{}, map[bool]int{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "fuzz") {
				return cmp.Or(err, filepath.SkipDir)
			}
			if d.IsDir() || !hasExtension(path) {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			example := strings.Contains(filepath.ToSlash(path), "/examples/")
			for _, doc := range splitDocuments(data) {
				ok, diff := differ(string(doc.data))
				if diff != "" {
					t.Errorf("%s:%d: %s", path, doc.first, diff)
				}
				documents[example]++
				if ok {
					accepted[example]++
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("fast parser accepted %d of %d documents of examples/, %d of %d others", accepted[true], documents[true], accepted[false], documents[false])
	if documents[true] == 0 || accepted[true]*10 < documents[true]*9 {
		t.Errorf("fast parser accepted %d of %d documents of examples/, want 90%%", accepted[true], documents[true])
	}
}

// TestPrintable compares printable, which reads eight bytes at a time, with
// a byte at a time: every byte value at every place of a word and of the
// bytes after the last word, and every pair of values side by side across
// bytes of one word.
func TestPrintable(t *testing.T) {
	want := func(data []byte) bool {
		for _, c := range data {
			if c != '\n' && (c < ' ' || c > '~') {
				return false
			}
		}
		return true
	}
	data := bytes.Repeat([]byte("a"), 19)
	for i := range data {
		for c := range 256 {
			data[i] = byte(c)
			if got := printable(data); got != want(data) {
				t.Fatalf("printable with %#x at %d = %v", c, i, got)
			}
		}
		data[i] = 'a'
	}
	for c := range 256 {
		for d := range 256 {
			data[3], data[4] = byte(c), byte(d)
			if got := printable(data); got != want(data) {
				t.Fatalf("printable with %#x, %#x at 3 = %v", c, d, got)
			}
		}
	}
}

// TestRegisterSized holds the parser's structs to what the compiler keeps
// in registers (cmd/compile's ssa.CanSSA): four fields at most, each a
// struct of four at most itself, in four words at most. A larger struct is
// copied through memory wherever it is returned or built, in stores of one
// size read back in another, which the processor does not forward: the
// parser took a third longer when value had six fields.
func TestRegisterSized(t *testing.T) {
	var fits func(reflect.Type) bool
	fits = func(typ reflect.Type) bool {
		if typ.Kind() != reflect.Struct {
			return true
		}
		if typ.NumField() > 4 {
			return false
		}
		for i := range typ.NumField() {
			if !fits(typ.Field(i).Type) {
				return false
			}
		}
		return true
	}
	for _, v := range []any{value{}, parsedNode{}, lineNode{}} {
		typ := reflect.TypeOf(v)
		if !fits(typ) || typ.Size() > 4*unsafe.Sizeof(uintptr(0)) {
			t.Errorf("%s: %d fields, %d bytes: not kept in registers", typ, typ.NumField(), typ.Size())
		}
	}
}
