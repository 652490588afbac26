package deploy_test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fargatekit/fargatekit/deploy"
)

var update = flag.Bool("update", false, "rewrite golden files")

// kubeVersion is the Kubernetes version the charts are rendered for: one
// EKS supports (Helm's own default in tests is 1.20).
const kubeVersion = "v1.33.0"

// chart is how a chart of dir is rendered, as `helm template
// --kube-version --api-versions` does.
type chart struct {
	dir         string
	kubeVersion string
	apis        []string
}

func (c chart) render(namespace, name string, values map[string]any) (string, error) {
	ch, err := deploy.Chart(c.dir)
	if err != nil {
		return "", err
	}
	kv, err := common.ParseKubeVersion(cmp.Or(c.kubeVersion, kubeVersion))
	if err != nil {
		return "", err
	}
	in := action.NewInstall(action.NewConfiguration())
	in.ReleaseName, in.Namespace, in.DryRunStrategy, in.Replace, in.KubeVersion = name, namespace, action.DryRunClient, true, kv
	in.APIVersions = c.apis
	r, err := in.RunWithContext(context.Background(), ch, values)
	if err != nil {
		return "", fmt.Errorf("rendering the chart %s: %w", c.dir, err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return "", fmt.Errorf("rendering the chart %s: a release of type %T", c.dir, r)
	}
	return rel.Manifest, nil
}

// golden compares a rendered manifest with testdata/<dir>/<name>.yaml;
// -update rewrites it.
func golden(t *testing.T, dir, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", dir, name+".yaml")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./deploy -update writes it)", err)
	}
	if got != string(want) {
		t.Errorf("the chart renders otherwise than %s (rerun with -update if intended):\n%s", path, got)
	}
}

// objects decodes the manifest's objects of one kind into T.
func objects[T any](t *testing.T, manifest, kind string) []T {
	t.Helper()
	var out []T
	for doc := range strings.SplitSeq(manifest, "\n---") {
		if !strings.Contains(doc, "\nkind: "+kind+"\n") {
			continue
		}
		var v T
		if err := k8syaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(doc)), 4096).Decode(&v); err != nil {
			t.Fatalf("decoding a %s: %v", kind, err)
		}
		out = append(out, v)
	}
	return out
}
