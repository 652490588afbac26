package upgradecmd

import (
	"os"
	"path/filepath"
	"testing"
)

// TestApplyCommand: a chart's objects are applied by helm upgrade of their
// release, a kustomization's by kubectl apply -k.
func TestApplyCommand(t *testing.T) {
	dir := t.TempDir()
	chart, kust, archive := filepath.Join(dir, "web"), filepath.Join(dir, "overlay"), filepath.Join(dir, "web-1.0.0.tgz")
	for name, data := range map[string]string{
		filepath.Join(chart, "Chart.yaml"):        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
		filepath.Join(kust, "kustomization.yaml"): "resources: []\n",
		archive: "",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for path, want := range map[string]string{
		chart:   "helm upgrade RELEASE " + chart + "  # RELEASE: the release that installed it, with its values",
		archive: "helm upgrade RELEASE " + archive + "  # RELEASE: the release that installed it, with its values",
		kust:    "kubectl apply -k " + kust,
	} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := applyCommand(path, info); got != want {
			t.Errorf("applyCommand(%s) = %q, want %q", path, got, want)
		}
	}
}
