package awscli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestQuickWaiters: the copy of the CLI's EKS waiter model polls every
// second, for as long in all, with the CLI's own acceptors.
func TestQuickWaiters(t *testing.T) {
	if _, err := exec.LookPath("aws"); err != nil {
		if os.Getenv("FARGATEKIT_INTEGRATION") == "required" {
			t.Fatal("the AWS CLI (aws) is not installed: run hack/tools.sh awscli")
		}
		t.Skip("the AWS CLI (aws) is not installed: run hack/tools.sh awscli, or make test")
	}
	dir := QuickWaiters(t)
	if dir == "" {
		t.Fatal("no waiter model")
	}
	files, err := filepath.Glob(filepath.Join(dir, "eks", "*", "waiters-2.json"))
	if err != nil || len(files) != 1 {
		t.Fatalf("waiter models written: %v %v", files, err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var model struct {
		Waiters map[string]struct {
			Delay, MaxAttempts float64
			Acceptors          []json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &model); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ClusterActive", "NodegroupActive", "FargateProfileActive", "FargateProfileDeleted"} {
		w, ok := model.Waiters[name]
		if !ok || w.Delay != 1 || w.MaxAttempts < 60 || len(w.Acceptors) == 0 {
			t.Errorf("waiter %s: %+v", name, w)
		}
	}
}
