package manifest

import (
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/internal/benchcorpus"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// deployment is the Deployment of BenchmarkCheck (internal/cli/checkcmd):
// 48 lines, 1.7 KB.
var deployment = strings.TrimPrefix(fmt.Sprintf(benchcorpus.Deployment, 1, 2), "---\n")

// BenchmarkParse splits the loader's cost per object: the YAML parser alone
// (the floor no change here can lower), YAML to JSON, and the whole Parse.
func BenchmarkParse(b *testing.B) {
	data := []byte(deployment)
	b.Run("yaml.v3-node", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			var n yaml.Node
			if err := yaml.Unmarshal(data, &n); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast-json-lines", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		p := new(fastParser)
		for b.Loop() {
			if _, ok := p.parse(data); !ok {
				b.Fatal("the fast parser declined")
			}
		}
	})
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		b.Fatal(err)
	}
	b.Run("to-json-fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := appendJSON(nil, root.Content[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("to-json-library", func(b *testing.B) {
		for b.Loop() {
			if _, err := slowJSON(root.Content[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			Parse("f.yaml", data, func(*object.Object) {}, func(e Error) { b.Fatal(e) })
		}
	})
}
