package awscli

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestQuickWaiters: the CLI loads the copy of its EKS waiter model, whose
// waiters poll every second, for as long in all, with the CLI's own
// acceptors.
func TestQuickWaiters(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		if os.Getenv("FARGATEKIT_INTEGRATION") == "required" {
			t.Fatal("the AWS CLI (aws) is not installed: run hack/tools.sh awscli")
		}
		t.Skip("the AWS CLI (aws) is not installed: run hack/tools.sh awscli, or make test")
	}
	_, _, shipped := waiterModel(t, "")
	dir := QuickWaiters(t)
	if shipped == nil || dir == "" {
		t.Fatalf("no waiter model (%q)", dir)
	}
	path, _, quick := waiterModel(t, dir)
	if !strings.HasPrefix(path, dir) {
		t.Fatalf("the CLI loads %s, not the copy in %s", path, dir)
	}
	want, got := shipped["waiters"].(map[string]any), quick["waiters"].(map[string]any)
	for _, name := range []string{"ClusterActive", "NodegroupActive", "FargateProfileActive", "FargateProfileDeleted"} {
		w, q := want[name].(map[string]any), got[name].(map[string]any)
		if q["delay"] != 1.0 || q["maxAttempts"] != w["delay"].(float64)*w["maxAttempts"].(float64) {
			t.Errorf("waiter %s: delay %v, %v attempts; the CLI's: %v, %v", name, q["delay"], q["maxAttempts"], w["delay"], w["maxAttempts"])
		}
		if diff := cmp.Diff(w["acceptors"], q["acceptors"]); diff != "" || q["acceptors"] == nil {
			t.Errorf("waiter %s's acceptors (-CLI's +copy's):\n%s", name, diff)
		}
	}
}
