package eksapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

// TestIntegrationAWSCLI drives the API with the AWS CLI (v1 or v2) over a
// real loopback listener served by Server.Serve: create, the CLI's waiter
// (which polls every 10 s: the profile is ACTIVE by its first or second
// poll), describe, and a refused create.
func TestIntegrationAWSCLI(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.Timings.ProfileCreate.Duration = 500 * time.Millisecond
	cfg.Timings.ProfileDelete.Duration = 500 * time.Millisecond
	run, _ := awsCLI(t, cfg, &fakeCluster{})
	type profile struct {
		FargateProfile struct {
			FargateProfileName string           `json:"fargateProfileName"`
			ClusterName        string           `json:"clusterName"`
			Status             string           `json:"status"`
			Subnets            []string         `json:"subnets"`
			Selectors          []map[string]any `json:"selectors"`
			CreatedAt          any              `json:"createdAt"`
		} `json:"fargateProfile"`
	}
	decode := func(what, out string) profile {
		t.Helper()
		var p profile
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("%s: output is not a profile: %v\n%s", what, err, out)
		}
		return p
	}

	start := time.Now()
	create := []string{"eks", "create-fargate-profile", "--cluster-name", cluster, "--fargate-profile-name", "cli",
		"--pod-execution-role-arn", roleARN, "--selectors", `[{"namespace":"default","labels":{"app":"web"}}]`}
	out, stderr, err := run(create...)
	if err != nil {
		t.Fatalf("aws %s: %v\n%s", strings.Join(create, " "), err, stderr)
	}
	if got := decode("create-fargate-profile", out).FargateProfile.Status; got != "CREATING" {
		t.Errorf("create-fargate-profile: status %s, want CREATING", got)
	}
	if _, stderr, err := run("eks", "wait", "fargate-profile-active", "--cluster-name", cluster, "--fargate-profile-name", "cli"); err != nil {
		t.Fatalf("aws eks wait fargate-profile-active: %v\n%s", err, stderr)
	}
	t.Logf("ACTIVE for the CLI's waiter after %v", time.Since(start).Round(time.Millisecond))
	out, stderr, err = run("eks", "describe-fargate-profile", "--cluster-name", cluster, "--fargate-profile-name", "cli")
	if err != nil {
		t.Fatalf("aws eks describe-fargate-profile: %v\n%s", err, stderr)
	}
	got := decode("describe-fargate-profile", out).FargateProfile
	if got.CreatedAt == nil {
		t.Error("describe-fargate-profile: no createdAt")
	}
	got.CreatedAt = nil // its format depends on the CLI's version
	// health is left out: older CLIs (2.9) do not know the field.
	want := profile{}.FargateProfile
	want.FargateProfileName, want.ClusterName, want.Status = "cli", cluster, "ACTIVE"
	want.Subnets = []string{"subnet-private1", "subnet-private2", "subnet-private3"}
	want.Selectors = []map[string]any{{"namespace": "default", "labels": map[string]any{"app": "web"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("describe-fargate-profile (-want +got):\n%s", diff)
	}

	// The CLI reads the error type and message EKS's way.
	_, stderr, err = run(create...)
	if err == nil {
		t.Fatal("a second create-fargate-profile of cli succeeded")
	}
	if want := "An error occurred (ResourceInUseException) when calling the CreateFargateProfile operation: A Fargate Profile already exists with this name in this cluster."; !strings.Contains(stderr, want) {
		t.Errorf("second create: stderr %q does not say %q", stderr, want)
	}
}

// awsCLI serves the API of cfg's cluster, on the real clock, over a real
// loopback listener (Server.Serve) and returns a function that runs the AWS
// CLI (v1 or v2) against it.
func awsCLI(t *testing.T, cfg *clusterconfig.Config, fc *fakeCluster) (func(args ...string) (string, string, error), *eksapi.Store) {
	t.Helper()
	store, err := eksapi.NewStore(cfg, t.TempDir(), eksapi.WithClock(clock.RealClock{}), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	srv := eksapi.NewServer(cfg, store, fc)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ctx, ln); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	return awscli.Runner(t, "http://"+ln.Addr().String()), store
}

// waitFor polls the store until done holds, ten seconds at most: the CLI's
// waiters sleep 30 s between polls, so a test calls them once the state they
// wait for is reached.
func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !done(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
	}
}

// TestIntegrationAWSCLIUpgrade updates the control plane and a node group
// with the AWS CLI: update-cluster-version, its waiter, describe-update and
// list-updates, refused over an ERROR insight, then forced; create-nodegroup, its waiter, update-nodegroup-version (which
// stays InProgress here: the node controller of the emulator finishes it)
// and the error for a skipped minor version.
func TestIntegrationAWSCLIUpgrade(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.KubernetesVersion = "1.34"
	cfg.Timings.ClusterUpdate.Duration = 300 * time.Millisecond
	cfg.Timings.NodegroupCreate.Duration = 300 * time.Millisecond
	// A client requested an API that 1.35 removes: its insight is in ERROR.
	fc := &fakeCluster{insights: eksapi.InsightFacts{Deprecated: []eksapi.DeprecatedRequest{
		{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: "1.35"}}}}
	run, store := awsCLI(t, cfg, fc)
	must := func(args ...string) map[string]any {
		t.Helper()
		out, stderr, err := run(args...)
		if err != nil {
			t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, stderr)
		}
		var v map[string]any
		if out != "" {
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("aws %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		return v
	}
	field := func(v map[string]any, path ...string) any {
		var cur any = v
		for _, p := range path {
			m, _ := cur.(map[string]any)
			cur = m[p]
		}
		return cur
	}

	_, stderr, err := run("eks", "update-cluster-version", "--name", cluster, "--kubernetes-version", "1.36")
	if want := "An error occurred (InvalidParameterException) when calling the UpdateClusterVersion operation: unsupported Kubernetes version"; err == nil || !strings.Contains(stderr, want) {
		t.Errorf("update to 1.36: %v, stderr %q, want %q", err, stderr, want)
	}
	_, stderr, err = run("eks", "update-cluster-version", "--name", cluster, "--kubernetes-version", "1.35")
	if want := "An error occurred (InvalidStateException) when calling the UpdateClusterVersion operation: Amazon EKS detected upgrade readiness issues."; err == nil || !strings.Contains(stderr, want) {
		t.Errorf("update over an ERROR insight: %v, stderr %q, want %q", err, stderr, want)
	}
	up := must("eks", "update-cluster-version", "--name", cluster, "--kubernetes-version", "1.35", "--force")
	id, _ := field(up, "update", "id").(string)
	if st := field(up, "update", "status"); st != "InProgress" || id == "" {
		t.Fatalf("update-cluster-version: %v", up)
	}
	waitFor(t, "the cluster ACTIVE after its update", func() bool { return store.Cluster().Status == eksapi.ClusterActive })
	must("eks", "wait", "cluster-active", "--name", cluster)
	if v := field(must("eks", "describe-cluster", "--name", cluster), "cluster", "version"); v != "1.35" {
		t.Errorf("describe-cluster after the update: version %v", v)
	}
	if st := field(must("eks", "describe-update", "--name", cluster, "--update-id", id), "update", "status"); st != "Successful" {
		t.Errorf("describe-update: status %v", st)
	}
	if ids := field(must("eks", "list-updates", "--name", cluster), "updateIds"); !cmp.Equal(ids, []any{id}) {
		t.Errorf("list-updates: %v", ids)
	}

	insights := must("eks", "list-insights", "--cluster-name", cluster)
	if list, _ := field(insights, "insights").([]any); len(list) != 3 {
		t.Errorf("list-insights: %v", insights)
	}
	must("eks", "create-nodegroup", "--cluster-name", cluster, "--nodegroup-name", "workers", "--kubernetes-version", "1.34",
		"--node-role", "arn:aws:iam::111122223333:role/node", "--subnets", "subnet-private1", "subnet-private2",
		"--scaling-config", "minSize=1,maxSize=3,desiredSize=2", "--instance-types", "m6i.large")
	waitFor(t, "the node group ACTIVE", func() bool {
		for _, ng := range store.Nodegroups() {
			if ng.Name == "workers" {
				return ng.Status == eksapi.NodegroupActive
			}
		}
		return false
	})
	must("eks", "wait", "nodegroup-active", "--cluster-name", cluster, "--nodegroup-name", "workers")
	_, stderr, err = run("eks", "update-nodegroup-version", "--cluster-name", cluster, "--nodegroup-name", "workers", "--release-version", "1.35.0-20250101")
	if want := "Requested Nodegroup release version 1.35.0-20250101 is invalid. Allowed release version is " + clusterconfig.LatestRelease("1.35"); err == nil || !strings.Contains(stderr, want) {
		t.Errorf("update-nodegroup-version to an old release: %v, stderr %q, want %q", err, stderr, want)
	}
	nu := must("eks", "update-nodegroup-version", "--cluster-name", cluster, "--nodegroup-name", "workers", "--force")
	nid, _ := field(nu, "update", "id").(string)
	d := must("eks", "describe-update", "--name", cluster, "--nodegroup-name", "workers", "--update-id", nid)
	if st, typ := field(d, "update", "status"), field(d, "update", "type"); st != "InProgress" || typ != "VersionUpdate" {
		t.Errorf("describe-update of the node group: %v", d)
	}
	if st := field(must("eks", "describe-nodegroup", "--cluster-name", cluster, "--nodegroup-name", "workers"), "nodegroup", "status"); st != "UPDATING" {
		t.Errorf("describe-nodegroup during the update: status %v", st)
	}
}
