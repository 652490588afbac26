package manifest

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// FuzzToJSON checks the fast YAML-to-JSON path against yaml.v3's decoder and
// encoding/json: whenever the fast path answers, the slow path must agree.
func FuzzToJSON(f *testing.F) {
	for _, seed := range []string{
		"a: 1\nb: [x, 2.5, true, null, '3']\nc: {d: \"e\\n\\\"q\\\"\"}\n",
		"n: -0\nf: 1e3\ng: .5\nh: 0x1F\ni: 007\nj: 1_000\n",
		"a: &x {b: 1}\nc: *x\n<<: {d: 2}\n",
		"k: |\n  multi\n  line\ntab: \"\\t\\u0001\"\nu: ünï\n",
		"a: 1\na: 2\n",
		"? [complex]\n: key\n",
		"t: !custom v\nu: !!str 5\nv: yes\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var root yaml.Node
		if yaml.Unmarshal([]byte(data), &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
			return
		}
		n := root.Content[0]
		fast, err := appendJSON(nil, n)
		if err != nil {
			return // the fast path declined: the slow path is the only one
		}
		slow, err := slowJSON(n)
		if err != nil {
			t.Fatalf("fast path accepted what the library refuses (%v):\n%s", err, data)
		}
		var a, b any
		if err := json.Unmarshal(fast, &a); err != nil {
			t.Fatalf("fast path wrote invalid JSON %s: %v", fast, err)
		}
		if err := json.Unmarshal(slow, &b); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(b, a); diff != "" {
			t.Fatalf("fast and slow paths differ for %q (-slow +fast):\n%s", data, diff)
		}
	})
}

// TestJSONInt: integers as JSON spells them, and near misses YAML reads as
// integers that JSON does not.
func TestJSONInt(t *testing.T) {
	for s, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "-12": true, "9007199254740993": true,
		"": false, "-": false, "01": false, "-01": false, "+1": false, "1_0": false, "0x1F": false, "1.0": false, "--1": false,
	} {
		if got := jsonInt(s); got != want {
			t.Errorf("jsonInt(%q) = %v, want %v", s, got, want)
		}
	}
}
