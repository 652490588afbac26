package emulator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	awseks "github.com/aws/aws-sdk-go-v2/service/eks"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	smithy "github.com/aws/smithy-go"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
)

// noCluster is DescribeCluster's side of a daemon without a control plane.
type noCluster struct{}

func (noCluster) Endpoint() string             { return "https://127.0.0.1:6443" }
func (noCluster) CertificateAuthority() []byte { return nil }
func (noCluster) CreatedAt() time.Time         { return time.Time{} }
func (noCluster) FargateKubelets(context.Context) (map[string]string, error) {
	return nil, nil
}
func (noCluster) InsightFacts(context.Context) (eksapi.InsightFacts, error) {
	return eksapi.InsightFacts{}, nil
}

// TestAWSEndpoint: the EKS, EC2 and IAM APIs on one endpoint, as the daemon
// serves them, each SDK client reaching its own; unsigned query requests
// go by their Version.
func TestAWSEndpoint(t *testing.T) {
	cfg := clusterconfig.Default()
	iamAPI := iamapi.NewServer(cfg, slog.New(slog.DiscardHandler))
	store, err := eksapi.NewStore(cfg, t.TempDir(), eksapi.WithRoles(iamAPI), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	ec2API, err := ec2api.NewServer(cfg, "", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(awsEndpoint(eksapi.NewServer(cfg, store, noCluster{}).Handler(), ec2API, iamAPI))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	ec2c := ec2.New(ec2.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1})
	iamc := iam.New(iam.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1})
	eksc := awseks.New(awseks.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: creds, RetryMaxAttempts: 1})

	sdk := []struct {
		name string
		call func() error
		code string // "" for success
		in   string // a word of the error's message, saying which API answered
	}{
		{"EC2 DescribeVpcs", func() error { _, err := ec2c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{}); return err }, "", ""},
		{"IAM GetRole", func() error {
			_, err := iamc.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(clusterconfig.DefaultPodExecutionRole)})
			return err
		}, "", ""},
		{"EKS ListFargateProfiles", func() error {
			_, err := eksc.ListFargateProfiles(ctx, &awseks.ListFargateProfilesInput{ClusterName: aws.String(cfg.Metadata.Name)})
			return err
		}, "", ""},
		{"an IAM action not served, answered by IAM", func() error { _, err := iamc.ListRoles(ctx, &iam.ListRolesInput{}); return err },
			"InvalidAction", "GetRole, ListAttachedRolePolicies"},
		{"an EC2 action not served, answered by EC2", func() error { _, err := ec2c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{}); return err },
			"InvalidAction", "DescribeSubnets"},
		{"IAM's NoSuchEntity", func() error { _, err := iamc.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("nope")}); return err },
			"NoSuchEntity", "nope"},
	}
	for _, tt := range sdk {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr smithy.APIError
			switch {
			case tt.code == "" && err != nil:
				t.Fatalf("%v", err)
			case tt.code == "":
			case !errors.As(err, &apiErr):
				t.Fatalf("error %v, want %s", err, tt.code)
			case apiErr.ErrorCode() != tt.code || !strings.Contains(apiErr.ErrorMessage(), tt.in):
				t.Errorf("error %s %q, want %s mentioning %q", apiErr.ErrorCode(), apiErr.ErrorMessage(), tt.code, tt.in)
			}
		})
	}

	unsigned := []struct {
		name string
		form url.Values
		want string // the root element of the answer
	}{
		{"IAM by its Version", url.Values{"Action": {"GetRole"}, "Version": {iamapi.APIVersion}, "RoleName": {clusterconfig.DefaultPodExecutionRole}}, "<GetRoleResponse"},
		{"EC2 by its Version", url.Values{"Action": {"DescribeVpcs"}, "Version": {ec2api.APIVersion}}, "<DescribeVpcsResponse"},
		{"no Version: EC2, as before IAM", url.Values{"Action": {"DescribeVpcs"}}, "<DescribeVpcsResponse"},
	}
	for _, tt := range unsigned {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.PostForm(srv.URL, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), tt.want) {
				t.Errorf("status %d, answer %s; want %s", resp.StatusCode, body, tt.want)
			}
		})
	}
}
