package report

import (
	"testing"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/plan"
)

func TestRestartCommand(t *testing.T) {
	for _, tc := range []struct {
		ref  object.Ref
		want string
	}{
		{object.Ref{Kind: "Deployment", Namespace: "a", Name: "web"}, "kubectl rollout restart -n a deployment/web && kubectl rollout status -n a deployment/web"},
		{object.Ref{Kind: "Rollout", Name: "web"}, "kubectl argo rollouts restart -n apps web && kubectl argo rollouts status -n apps web"},
		{object.Ref{Kind: "Pod", Name: "p"}, "# Pod apps/p: delete it and create it again"},
		{object.Ref{Kind: "ReplicaSet", Name: "rs"}, "kubectl delete pods -n apps -l app=web,tier=front  # ReplicaSet/rs recreates them"},
	} {
		w := plan.Workload{Ref: tc.ref, Namespace: "apps", Labels: map[string]string{"tier": "front", "app": "web"}}
		if got := RestartCommand(w); got != tc.want {
			t.Errorf("RestartCommand(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}
