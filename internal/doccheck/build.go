package doccheck

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BuildFlags are the flags `make build` builds fargatekit with, as the
// release does (.goreleaser.yaml, .ko.yaml): with CGO_ENABLED=0, a static
// binary without Kustomize's plugin loader. The documents, the tests and
// hack/verify.sh build with them too, so that the Go build cache holds one
// compilation of the module's dependencies for all of them, not one per set
// of flags (each costs minutes on a cold cache).
var BuildFlags = []string{"-trimpath", "-tags=kustomize_disable_go_plugin_support"}

// BuildEnv is the environment that makes any go command build with
// BuildFlags (CGO_ENABLED=0 and GOFLAGS): for the tests that run go install
// as a user would, or through pre-commit, and need not compile the
// dependencies once more with other settings.
func BuildEnv() []string {
	return []string{"CGO_ENABLED=0", "GOFLAGS=" + strings.Join(BuildFlags, " ")}
}

// Build builds cmd/fargatekit into dir/fargatekit with BuildFlags and
// returns its path. It runs go in the module's working directory of the
// caller, as go test sets it.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "fargatekit")
	cmd := exec.Command("go", append(append([]string{"build"}, BuildFlags...), "-o", bin, "github.com/fargatekit/fargatekit/cmd/fargatekit")...)
	cmd.Env = append(os.Environ(), BuildEnv()...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building fargatekit: %w\n%s", err, out)
	}
	return bin, nil
}
