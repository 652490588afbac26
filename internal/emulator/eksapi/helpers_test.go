package eksapi_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/eks/types"
	smithy "github.com/aws/smithy-go"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	cluster = "fargatekit" // clusterconfig.Default's cluster
	roleARN = "arn:aws:iam::111122223333:role/AmazonEKSFargatePodExecutionRole"
	caPEM   = "-----BEGIN CERTIFICATE-----\nMIIBemulator\n-----END CERTIFICATE-----\n"
)

// fakeCluster is the emulator's side of DescribeCluster,
// UpdateClusterVersion and the insights; fargate holds the Fargate nodes'
// kubelet versions, insights the facts of the insights.
type fakeCluster struct {
	fargate  map[string]string
	insights eksapi.InsightFacts
}

func (*fakeCluster) Endpoint() string             { return "https://127.0.0.1:6443" }
func (*fakeCluster) CertificateAuthority() []byte { return []byte(caPEM) }
func (*fakeCluster) CreatedAt() time.Time         { return t0.Add(-time.Hour) }
func (f *fakeCluster) FargateKubelets(context.Context) (map[string]string, error) {
	return f.fargate, nil
}
func (f *fakeCluster) InsightFacts(context.Context) (eksapi.InsightFacts, error) {
	return f.insights, nil
}

// env is a Store and Server of the default cluster, an httptest server of
// the handler and an SDK client of it.
type env struct {
	cfg     *clusterconfig.Config
	dir     string
	clock   *testingclock.FakeClock
	store   *eksapi.Store
	cluster *fakeCluster
	server  *eksapi.Server
	url     string
	client  *eks.Client
}

// newEnv sets up an env with a fake clock at t0 (opts may replace it);
// edit changes the default configuration first.
func newEnv(t testing.TB, edit func(*clusterconfig.Config), opts ...eksapi.Option) *env {
	t.Helper()
	cfg := clusterconfig.Default()
	cfg.Timings.ProfileCreate.Duration = 2 * time.Minute
	cfg.Timings.ProfileDelete.Duration = 3 * time.Minute
	if edit != nil {
		edit(cfg)
	}
	return open(t, cfg, t.TempDir(), testingclock.NewFakeClock(t0), opts...)
}

// reopen opens the state directory of e again, as a restarted emulator
// would, with a new fake clock at e's time.
func (e *env) reopen(t testing.TB) *env {
	t.Helper()
	return open(t, e.cfg, e.dir, testingclock.NewFakeClock(e.clock.Now()))
}

func open(t testing.TB, cfg *clusterconfig.Config, dir string, clk *testingclock.FakeClock, opts ...eksapi.Option) *env {
	t.Helper()
	e := &env{cfg: cfg, dir: dir, clock: clk}
	defaults := []eksapi.Option{eksapi.WithClock(e.clock), eksapi.WithLogger(slog.New(slog.DiscardHandler))}
	store, err := eksapi.NewStore(cfg, e.dir, append(defaults, opts...)...)
	if err != nil {
		t.Fatalf("NewStore: %v", err)
	}
	e.store = store
	e.cluster = &fakeCluster{}
	e.server = eksapi.NewServer(cfg, store, e.cluster)
	srv := httptest.NewServer(e.server.Handler())
	t.Cleanup(srv.Close)
	e.url = srv.URL
	e.client = eks.New(eks.Options{
		Region:           "us-east-1",
		BaseEndpoint:     aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:       srv.Client(),
		RetryMaxAttempts: 1,
	})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = e.server.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return e
}

// createInput is a valid create of profile name.
func createInput(name string) *eks.CreateFargateProfileInput {
	return &eks.CreateFargateProfileInput{
		ClusterName:         aws.String(cluster),
		FargateProfileName:  aws.String(name),
		PodExecutionRoleArn: aws.String(roleARN),
		Selectors:           []types.FargateProfileSelector{{Namespace: aws.String("default")}},
	}
}

func (e *env) create(t testing.TB, name string) *types.FargateProfile {
	t.Helper()
	out, err := e.client.CreateFargateProfile(context.Background(), createInput(name))
	if err != nil {
		t.Fatalf("CreateFargateProfile %s: %v", name, err)
	}
	return out.FargateProfile
}

func (e *env) delete(t testing.TB, name string) {
	t.Helper()
	if _, err := e.client.DeleteFargateProfile(context.Background(), &eks.DeleteFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String(name)}); err != nil {
		t.Fatalf("DeleteFargateProfile %s: %v", name, err)
	}
}

func (e *env) describe(name string) (*types.FargateProfile, error) {
	out, err := e.client.DescribeFargateProfile(context.Background(), &eks.DescribeFargateProfileInput{ClusterName: aws.String(cluster), FargateProfileName: aws.String(name)})
	if err != nil {
		return nil, err
	}
	return out.FargateProfile, nil
}

// status describes a profile and returns its status, or the error.
func (e *env) status(t testing.TB, name string) string {
	t.Helper()
	p, err := e.describe(name)
	if err != nil {
		return apiError(err)
	}
	return string(p.Status)
}

// apiError renders the typed error the SDK returned: "*types.X: message".
func apiError(err error) string {
	if err == nil {
		return ""
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return "not an API error: " + err.Error()
	}
	return fmt.Sprintf("%T: %s", ae, ae.ErrorMessage())
}
