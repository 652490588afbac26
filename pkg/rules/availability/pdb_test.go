package availability

import (
	"testing"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// TestMissingPDBOverlays: two overlays of one kustomize base, checked
// together, are two workloads of one reference and one source (the base's
// file), told apart by their labels: a budget selecting one of them covers
// that one only.
func TestMissingPDBOverlays(t *testing.T) {
	ref := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web"}
	src := object.Source{File: "base/deployment.yaml", Line: 1}
	overlay := func(env string) *rules.Workload {
		return &rules.Workload{Ref: ref, Source: src, Namespace: "shop", Labels: map[string]string{"app": "web", "env": env},
			Replicas: 3, Placement: fargate.Placement{Fargate: true}}
	}
	for _, tc := range []struct {
		selector string
		want     int
	}{
		{`{"env":"prod"}`, 1}, // dev has none
		{`{"app":"web"}`, 0},  // both covered
	} {
		pdb, err := object.Decode("policy/v1", "PodDisruptionBudget",
			[]byte(`{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"web","namespace":"shop"},"spec":{"maxUnavailable":1,"selector":{"matchLabels":`+tc.selector+`}}}`),
			object.Source{File: "overlays/prod/pdb.yaml", Line: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &rules.Cluster{Workloads: rules.NewWorkloads(overlay("dev"), overlay("prod")), Objects: map[string][]*object.Object{"PodDisruptionBudget": {pdb}}}
		var got []rules.Finding
		MissingPDB.CheckCluster(&rules.Context{Namespace: "default"}, c, func(f rules.Finding) { got = append(got, f) })
		if len(got) != tc.want {
			t.Errorf("a budget selecting %s: %d findings, want %d: %v", tc.selector, len(got), tc.want, got)
		}
	}
}
