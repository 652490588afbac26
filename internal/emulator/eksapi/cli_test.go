package eksapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

// TestIntegrationAWSCLI drives the API with the AWS CLI (v1 or v2) over a
// real loopback listener served by Server.Serve: create, the CLI's waiter
// (which polls every 10 s: the profile is ACTIVE by its first or second
// poll), describe, and a refused create.
func TestIntegrationAWSCLI(t *testing.T) {
	awsCLI, err := exec.LookPath("aws")
	if err != nil {
		t.Fatalf("the AWS CLI (aws) is not installed: run hack/tools.sh awscli (%v)", err)
	}
	cfg := clusterconfig.Default()
	cfg.Timings.ProfileCreate.Duration = 500 * time.Millisecond
	cfg.Timings.ProfileDelete.Duration = 500 * time.Millisecond
	store, err := eksapi.NewStore(cfg, t.TempDir(), eksapi.WithClock(clock.RealClock{}), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	srv := eksapi.NewServer(cfg, store, fakeCluster{})
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
	defer func() { cancel(); wg.Wait() }()
	endpoint := "http://" + ln.Addr().String()

	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"),
	)
	run := func(args ...string) (string, string, error) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, awsCLI, append([]string{"--endpoint-url", endpoint, "--output", "json"}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
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
