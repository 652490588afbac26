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
// serves them, each SDK client reaching its own; query requests signed
// without a service in their scope go by their Version; unsigned requests,
// and requests to a name that is not loopback, are refused by the API they
// are for, in its error format.
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
	srv := httptest.NewServer(awsEndpoint(eksapi.NewServer(cfg, store, noCluster{}), ec2API, iamAPI))
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

	// send sends req to the endpoint, to Host host ("" for the URL's),
	// signed for service ("" for unsigned), and returns the status, the
	// x-amzn-ErrorType and the body of the answer.
	send := func(t *testing.T, req *http.Request, host, service string) (int, string, string) {
		t.Helper()
		if host != "" {
			req.Host = host
		}
		if service != "" {
			if err := Sign(req, service, "us-east-1"); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, resp.Header.Get("x-amzn-ErrorType"), string(body)
	}
	post := func(t *testing.T, form url.Values, sign bool, host string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(form.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		service := ""
		if sign {
			// A service the endpoint does not know: the form's Version
			// tells the APIs apart.
			service = "unknown"
		}
		return send(t, req, host, service)
	}
	getRole := url.Values{"Action": {"GetRole"}, "Version": {iamapi.APIVersion}, "RoleName": {clusterconfig.DefaultPodExecutionRole}}
	describeVpcs := url.Values{"Action": {"DescribeVpcs"}, "Version": {ec2api.APIVersion}}
	queries := []struct {
		name   string
		form   url.Values
		sign   bool
		host   string
		status int
		want   string // in the answer
	}{
		{"IAM by its Version", getRole, true, "", 200, "<GetRoleResponse"},
		{"EC2 by its Version", describeVpcs, true, "", 200, "<DescribeVpcsResponse"},
		{"no Version: EC2, as before IAM", url.Values{"Action": {"DescribeVpcs"}}, true, "", 200, "<DescribeVpcsResponse"},
		{"localhost", describeVpcs, true, "localhost:8780", 200, "<DescribeVpcsResponse"},
		{"IPv6 loopback", describeVpcs, true, "[::1]:8780", 200, "<DescribeVpcsResponse"},
		{"IAM unsigned", getRole, false, "", 403, "<Code>MissingAuthenticationToken</Code>"},
		{"EC2 unsigned", describeVpcs, false, "", 403, "<Code>MissingAuthenticationToken</Code>"},
		{"IAM to another name", getRole, true, "attacker.example:8780", 403, "<Code>AccessDenied</Code>"},
		{"EC2 to another name", describeVpcs, true, "attacker.example", 403, "<Code>AccessDenied</Code>"},
	}
	for _, tt := range queries {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := post(t, tt.form, tt.sign, tt.host)
			if status != tt.status || !strings.Contains(body, tt.want) {
				t.Errorf("status %d, answer %s; want %d with %s", status, body, tt.status, tt.want)
			}
		})
	}

	// EKS: a browser's request (no Authorization header), and one through a
	// name resolved to loopback (DNS rebinding).
	eksRequest := func(t *testing.T, host string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/clusters/"+cfg.Metadata.Name+"/fargate-profiles",
			strings.NewReader(`{"fargateProfileName":"x","podExecutionRoleArn":"arn:aws:iam::111122223333:role/x","selectors":[{"namespace":"x"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		service := ""
		if host != "" {
			service = "eks" // signed, to another name
		}
		return send(t, req, host, service)
	}
	for _, tt := range []struct{ name, host, typ string }{
		{"EKS unsigned", "", "MissingAuthenticationTokenException"},
		{"EKS to another name", "attacker.example", "AccessDeniedException"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, typ, body := eksRequest(t, tt.host)
			if status != http.StatusForbidden || typ != tt.typ || !strings.Contains(body, `"message"`) {
				t.Errorf("status %d, type %q, answer %s; want 403 %s", status, typ, body, tt.typ)
			}
		})
	}
	if _, err := eksc.DescribeFargateProfile(ctx, &awseks.DescribeFargateProfileInput{ClusterName: aws.String(cfg.Metadata.Name), FargateProfileName: aws.String("x")}); err == nil {
		t.Error("a refused request created a Fargate profile")
	}
}
