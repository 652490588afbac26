package cluster_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// info is the Kubernetes side of an emulated cluster: one 1.33 kubelet
// behind a 1.34 control plane, and a client that asked for an API 1.35
// removes.
type info struct{}

func (info) Endpoint() string                                           { return "https://127.0.0.1:6443" }
func (info) CertificateAuthority() []byte                               { return nil }
func (info) CreatedAt() time.Time                                       { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) }
func (info) FargateKubelets(context.Context) (map[string]string, error) { return nil, nil }
func (info) InsightFacts(context.Context) (eksapi.InsightFacts, error) {
	return eksapi.InsightFacts{
		Kubelets:   map[string]string{"ip-10-0-1-1.ec2.internal": "1.33"},
		Deprecated: []eksapi.DeprecatedRequest{{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: "1.35"}},
	}, nil
}

// TestInsights reads the upgrade insights of the emulator's EKS API with
// the SDK's client.
func TestInsights(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.KubernetesVersion = "1.34"
	store, err := eksapi.NewStore(cfg, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(eksapi.NewServer(cfg, store, info{}).Handler())
	t.Cleanup(srv.Close)
	e := &cluster.EKS{Cluster: cfg.Metadata.Name, Region: "us-east-1", Client: eks.New(eks.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), HTTPClient: srv.Client(),
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""),
	})}
	got, err := e.Insights(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, in := range got {
		if in.ID == "" || in.Description == "" {
			t.Errorf("insight without ID or description: %+v", in)
		}
		status[in.Name+" @"+in.Version] = in.Status
	}
	want := map[string]string{
		upgrade.KubeletSkewInsight + " @1.35":               "ERROR",
		"Deprecated APIs removed in Kubernetes v1.35 @1.35": "ERROR",
		"Deprecated APIs removed in Kubernetes v1.36 @1.36": "PASSING",
	}
	if diff := cmp.Diff(want, status); diff != "" {
		t.Errorf("insights (-want +got):\n%s", diff)
	}
	e.Cluster = "other"
	if _, err := e.Insights(context.Background()); err == nil || err.Error() != `the EKS API in us-east-1 knows no cluster named "other" (eks:ListInsights)` {
		t.Errorf("insights of an unknown cluster: %v", err)
	}
}
