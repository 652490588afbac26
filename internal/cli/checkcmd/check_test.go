package checkcmd

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/benchcorpus"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// TestAnalyzeSpills: the workload summaries of a check, written to disk a
// buffer at a time, and its findings, spilled in runs, read back as an
// engine that keeps everything in memory finds them.
func TestAnalyzeSpills(t *testing.T) {
	dir := t.TempDir()
	if err := benchcorpus.Write(dir, 800, 10); err != nil { // 8,000 summaries: two buffers and more
		t.Fatal(err)
	}
	// Objects that select workloads, some of them in the buffers on disk.
	related := `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: team, namespace: team-1}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {team: team-1}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: team-2}
spec: {podSelector: {}, policyTypes: [Ingress]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: team-700}
spec:
  type: LoadBalancer
  selector: {app: svc-700-3}
  ports: [{port: 80}]
`
	if err := os.WriteFile(filepath.Join(dir, "related.yaml"), []byte(related), 0o644); err != nil {
		t.Fatal(err)
	}
	profiles := []fargate.Profile{{Name: "teams", Selectors: []fargate.Selector{{Namespace: "team-*"}}}}
	newContext := func() *rules.Context {
		return &rules.Context{Namespace: "default", TargetVersion: "1.35", Region: fargate.DefaultRegion, Profiles: profiles}
	}

	disk := newDisk(builtin.Rules())
	t.Cleanup(func() {
		if err := disk.Close(); err != nil {
			t.Error(err)
		}
	})
	disk.findings.Limit = 100_000 // several runs
	res, errs := analyze(newContext(), builtin.Rules(), rules.Options{}, &manifest.Loader{}, []string{dir}, func() {}, disk)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if disk.workloads.Len() == 0 {
		t.Fatal("no workload summaries were written to disk: the case is not the one meant")
	}

	engine := rules.NewEngine(newContext(), builtin.Rules(), rules.Options{})
	(&manifest.Loader{}).Load([]string{dir}, engine.Add, func(e manifest.Error) { t.Error(e) })
	want := engine.Result()

	same := cmp.Comparer(func(a, b *rules.Rule) bool { return a == b })
	if diff := cmp.Diff(slices.Collect(want.Workloads.Sorted()), slices.Collect(res.Workloads.Sorted())); diff != "" || res.Workloads.Err() != nil {
		t.Errorf("workloads: %v (-in memory +on disk):\n%s", res.Workloads.Err(), diff)
	}
	for _, rule := range []string{"FG032", "FG019", "FG017"} { // missing-pdb, network-policy-not-enforced, load-balancer-instance-target: the selections ran
		if !slices.ContainsFunc(want.Findings, func(f rules.Finding) bool { return f.Rule.ID == rule }) {
			t.Errorf("no %s finding: the case is not the one meant", rule)
		}
	}
	if diff := cmp.Diff(want.Findings, slices.Collect(disk.findings.All()), same); diff != "" || disk.findings.Err() != nil {
		t.Errorf("findings: %v (-in memory +on disk):\n%s", disk.findings.Err(), diff)
	}
}
