package live

import (
	"testing"

	"github.com/fargatekit/fargatekit/pkg/object"
)

func TestRestartCommand(t *testing.T) {
	web := map[string]string{"tier": "front", "app": "web"}
	for _, tc := range []struct {
		ref    object.Ref
		labels map[string]string
		want   string
	}{
		{object.Ref{Kind: "Deployment", Namespace: "a", Name: "web"}, web, "kubectl rollout restart -n a deployment/web && kubectl rollout status -n a deployment/web"},
		{object.Ref{Kind: "Rollout", Namespace: "apps", Name: "web"}, web, "kubectl argo rollouts restart -n apps web && kubectl argo rollouts status -n apps web"},
		{object.Ref{Kind: "Pod", Namespace: "apps", Name: "p"}, web, "# Pod apps/p: delete it and create it again"},
		{object.Ref{Kind: "ReplicaSet", Namespace: "apps", Name: "rs"}, web, "kubectl delete pods -n apps -l app=web,tier=front  # ReplicaSet/rs recreates them"},
		{object.Ref{Kind: "ReplicaSet", Namespace: "apps", Name: "rs"}, nil, "# ReplicaSet apps/rs: delete its pods one at a time; it recreates them"},
	} {
		if got := RestartCommand(tc.ref, tc.labels); got != tc.want {
			t.Errorf("RestartCommand(%s) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}
