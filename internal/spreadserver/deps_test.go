package spreadserver

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoEmulatorDependency: spread runs in production clusters, so it must
// not link the local emulator. The emulator side installs spread from the
// outside (internal/cli/spreadcmd and emulator.InstallHostChart).
func TestNoEmulatorDependency(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH, so the package's dependencies cannot be listed")
	}
	const emulator = "github.com/fargatekit/fargatekit/internal/emulator"
	isEmulator := func(pkg string) bool { return pkg == emulator || strings.HasPrefix(pkg, emulator+"/") }
	out, err := exec.Command(gobin, "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, ".").Output()
	if err != nil {
		t.Fatalf("listing the dependencies: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		pkg, imports, _ := strings.Cut(strings.TrimSpace(line), " ")
		if isEmulator(pkg) {
			continue // only the edges into the emulator say what to fix
		}
		for _, imp := range strings.Fields(imports) {
			if isEmulator(imp) {
				t.Errorf("%s imports %s: internal/spreadserver must not depend on the emulator", pkg, imp)
			}
		}
	}
}
