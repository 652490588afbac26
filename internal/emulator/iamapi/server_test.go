package iamapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
	smithy "github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
	"github.com/fargatekit/fargatekit/internal/emulator/iamapi"
)

// noFargate trusts EC2 only: EKS refuses it as a pod execution role.
const noFargate = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

// config is the default configuration with two roles of its own: one with
// a trust policy that is not Fargate's, three managed policies and three
// inline ones, one with none.
func config(t *testing.T) *clusterconfig.Config {
	t.Helper()
	cfg, err := clusterconfig.Parse([]byte(`iam:
  roles:
  - name: ec2-only
    trustPolicy: '` + noFargate + `'
    attachedPolicies:
    - arn:aws:iam::aws:policy/AmazonEKSFargatePodExecutionRolePolicy
    - arn:aws:iam::aws:policy/service-role/AmazonEC2RoleforSSM
    - arn:aws:iam::111122223333:policy/pods/ecr-pull
    inlinePolicies: [ecr-pull, logs, s3-read]
  - name: bare
`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// serve starts the IAM API of cfg behind an httptest server, dispatched as
// the emulator's AWS endpoint does, and returns its URL.
func serve(t *testing.T, cfg *clusterconfig.Config) string {
	t.Helper()
	api := iamapi.NewServer(cfg, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !iamapi.IsRequest(r) {
			http.Error(w, "not an IAM request", http.StatusNotFound)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func client(url string) *iam.Client {
	return iam.New(iam.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

// TestGetRole drives GetRole with aws-sdk-go-v2's IAM client: the roles of
// the configuration and the default pod execution role, their trust
// policies URL-encoded as IAM returns them.
func TestGetRole(t *testing.T) {
	cfg := config(t)
	c := client(serve(t, cfg))
	ctx := context.Background()
	tests := []struct {
		name, role string
		trust      string // the JSON document GetRole's answer decodes to
	}{
		{"a trust policy of the configuration", "ec2-only", noFargate},
		{"a role without a trust policy gets Fargate's", "bare", cfg.FargateTrustPolicy()},
		{"the default pod execution role", clusterconfig.DefaultPodExecutionRole, cfg.FargateTrustPolicy()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(tt.role)})
			if err != nil {
				t.Fatalf("GetRole %s: %v", tt.role, err)
			}
			r := out.Role
			if got, want := aws.ToString(r.Arn), "arn:aws:iam::111122223333:role/"+tt.role; got != want {
				t.Errorf("Arn = %q, want %q", got, want)
			}
			if aws.ToString(r.RoleName) != tt.role || aws.ToString(r.Path) != "/" || !strings.HasPrefix(aws.ToString(r.RoleId), "AROA") || r.CreateDate == nil {
				t.Errorf("role %+v: want its name, path /, an AROA ID and a creation date", r)
			}
			encoded := aws.ToString(r.AssumeRolePolicyDocument)
			if strings.ContainsAny(encoded, "{\" +") {
				t.Errorf("AssumeRolePolicyDocument %q is not URL-encoded as IAM's (spaces as %%20)", encoded)
			}
			decoded, err := url.QueryUnescape(encoded)
			if err != nil {
				t.Fatalf("URL-decoding the trust policy: %v", err)
			}
			if decoded != tt.trust {
				t.Errorf("trust policy %s, want %s", decoded, tt.trust)
			}
		})
	}
	if !strings.Contains(cfg.FargateTrustPolicy(), `"aws:SourceArn": "arn:aws:eks:us-east-1:111122223333:fargateprofile/fargatekit/*"`) {
		t.Errorf("the Fargate trust policy has no aws:SourceArn condition on the cluster's profiles:\n%s", cfg.FargateTrustPolicy())
	}
}

// TestOverriddenDefaultRole: a role of the configuration named as the
// default pod execution role replaces it.
func TestOverriddenDefaultRole(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.IAM.Roles = []clusterconfig.Role{{Name: clusterconfig.DefaultPodExecutionRole, TrustPolicy: noFargate}}
	c := client(serve(t, cfg))
	out, err := c.GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String(clusterconfig.DefaultPodExecutionRole)})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument)); doc != noFargate {
		t.Errorf("trust policy %s, want the configuration's %s", doc, noFargate)
	}
	pols, err := c.ListAttachedRolePolicies(context.Background(), &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(clusterconfig.DefaultPodExecutionRole)})
	if err != nil || len(pols.AttachedPolicies) != 0 {
		t.Errorf("policies %+v, err %v: want the configuration's, none", pols, err)
	}
	api := iamapi.NewServer(cfg, nil)
	if doc, ok := api.TrustPolicy(cfg.RoleARN(clusterconfig.DefaultPodExecutionRole)); !ok || doc != noFargate {
		t.Errorf("TrustPolicy = %q, %v; want the configuration's", doc, ok)
	}
	if _, ok := api.TrustPolicy("arn:aws:iam::999999999999:role/" + clusterconfig.DefaultPodExecutionRole); ok {
		t.Error("TrustPolicy of another account's role: found")
	}
}

// TestListAttachedRolePolicies: a role's policies, by path prefix, a page
// at a time.
func TestListAttachedRolePolicies(t *testing.T) {
	c := client(serve(t, config(t)))
	ctx := context.Background()
	type policy struct{ Name, ARN string }
	all := []policy{
		{"AmazonEKSFargatePodExecutionRolePolicy", "arn:aws:iam::aws:policy/AmazonEKSFargatePodExecutionRolePolicy"},
		{"AmazonEC2RoleforSSM", "arn:aws:iam::aws:policy/service-role/AmazonEC2RoleforSSM"},
		{"ecr-pull", "arn:aws:iam::111122223333:policy/pods/ecr-pull"},
	}
	list := func(in *iam.ListAttachedRolePoliciesInput) []policy {
		t.Helper()
		var got []policy
		p := iam.NewListAttachedRolePoliciesPaginator(c, in)
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("ListAttachedRolePolicies: %v", err)
			}
			for _, a := range out.AttachedPolicies {
				got = append(got, policy{aws.ToString(a.PolicyName), aws.ToString(a.PolicyArn)})
			}
		}
		return got
	}
	tests := []struct {
		name string
		in   iam.ListAttachedRolePoliciesInput
		want []policy
	}{
		{"all", iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ec2-only")}, all},
		{"one per page", iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ec2-only"), MaxItems: aws.Int32(1)}, all},
		{"by path", iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ec2-only"), PathPrefix: aws.String("/service-role/")}, all[1:2]},
		{"none", iam.ListAttachedRolePoliciesInput{RoleName: aws.String("bare")}, nil},
		{"the default role", iam.ListAttachedRolePoliciesInput{RoleName: aws.String(clusterconfig.DefaultPodExecutionRole)}, all[:1]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, list(&tt.in)); diff != "" {
				t.Errorf("attached policies (-want +got):\n%s", diff)
			}
		})
	}
	out, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ec2-only"), MaxItems: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	if !out.IsTruncated || aws.ToString(out.Marker) == "" || len(out.AttachedPolicies) != 2 {
		t.Errorf("a first page of 2 of 3: truncated %v, marker %q, %d policies", out.IsTruncated, aws.ToString(out.Marker), len(out.AttachedPolicies))
	}
}

// TestListRolePolicies: the names of a role's inline policies, a page at a
// time, through aws-sdk-go-v2's paginator.
func TestListRolePolicies(t *testing.T) {
	c := client(serve(t, config(t)))
	ctx := context.Background()
	for _, tt := range []struct {
		role     string
		maxItems *int32
		want     []string
	}{
		{"ec2-only", nil, []string{"ecr-pull", "logs", "s3-read"}},
		{"ec2-only", aws.Int32(2), []string{"ecr-pull", "logs", "s3-read"}},
		{"bare", nil, nil},
		{clusterconfig.DefaultPodExecutionRole, nil, nil},
	} {
		var got []string
		pages := 0
		p := iam.NewListRolePoliciesPaginator(c, &iam.ListRolePoliciesInput{RoleName: aws.String(tt.role), MaxItems: tt.maxItems})
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				t.Fatalf("ListRolePolicies %s: %v", tt.role, err)
			}
			pages++
			got = append(got, out.PolicyNames...)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: inline policies (-want +got):\n%s", tt.role, diff)
		}
		if tt.maxItems != nil && pages != 2 {
			t.Errorf("%s: %d pages of 2, want 2", tt.role, pages)
		}
	}
	var missing *types.NoSuchEntityException
	if _, err := c.ListRolePolicies(ctx, &iam.ListRolePoliciesInput{RoleName: aws.String("nobody")}); !errors.As(err, &missing) {
		t.Errorf("a role that does not exist: %v, want NoSuchEntity", err)
	}
}

// TestErrors: the SDK reads IAM's error codes and messages, and types
// NoSuchEntity.
func TestErrors(t *testing.T) {
	c := client(serve(t, config(t)))
	ctx := context.Background()
	tests := []struct {
		name    string
		call    func() error
		code    string
		message string
	}{
		{"GetRole of an unknown role", func() error {
			_, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("nope")})
			return err
		}, "NoSuchEntity", "The role with name nope cannot be found."},
		{"ListAttachedRolePolicies of an unknown role", func() error {
			_, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("nope")})
			return err
		}, "NoSuchEntity", "The role with name nope cannot be found."},
		{"a role name IAM refuses", func() error {
			_, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("eks/pods")})
			return err
		}, "ValidationError", "1 validation error detected: Value 'eks/pods' at 'roleName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+"},
		{"a bad marker", func() error {
			_, err := c.ListAttachedRolePolicies(ctx, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String("ec2-only"), Marker: aws.String("nope")})
			return err
		}, "ValidationError", "1 validation error detected: Value 'nope' at 'marker'"},
		{"action not served", func() error {
			_, err := c.ListRoles(ctx, &iam.ListRolesInput{})
			return err
		}, "InvalidAction", "The action ListRoles is not valid for this web service (the emulator serves GetRole, ListAttachedRolePolicies, ListRolePolicies)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not an API error", err)
			}
			if apiErr.ErrorCode() != tt.code || !strings.HasPrefix(apiErr.ErrorMessage(), tt.message) {
				t.Errorf("error %s %q, want %s %q", apiErr.ErrorCode(), apiErr.ErrorMessage(), tt.code, tt.message)
			}
		})
	}
	var nse *types.NoSuchEntityException
	if _, err := c.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String("nope")}); !errors.As(err, &nse) {
		t.Errorf("GetRole of an unknown role: %v, want a *types.NoSuchEntityException", err)
	}
}

// TestWire: the answers' XML as IAM writes it, read without the SDK.
func TestWire(t *testing.T) {
	base := serve(t, config(t))
	tests := []struct {
		name     string
		form     url.Values
		status   int
		contains []string
	}{
		{"GetRole", url.Values{"Action": {"GetRole"}, "Version": {iamapi.APIVersion}, "RoleName": {"bare"}}, http.StatusOK,
			[]string{`<GetRoleResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><GetRoleResult><Role>`, "<RoleLastUsed></RoleLastUsed>",
				"<AssumeRolePolicyDocument>%7B%0A%20%20%22Version%22%3A%20%222012-10-17%22%2C", "</Role></GetRoleResult><ResponseMetadata><RequestId>"}},
		{"NoSuchEntity", url.Values{"Action": {"GetRole"}, "Version": {iamapi.APIVersion}, "RoleName": {"X"}}, http.StatusNotFound,
			[]string{`<ErrorResponse xmlns="https://iam.amazonaws.com/doc/2010-05-08/"><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>The role with name X cannot be found.</Message></Error><RequestId>`}},
		{"no RoleName", url.Values{"Action": {"GetRole"}, "Version": {iamapi.APIVersion}}, http.StatusBadRequest,
			[]string{"<Code>ValidationError</Code><Message>1 validation error detected: Value null at &#39;roleName&#39; failed to satisfy constraint: Member must not be null</Message>"}},
		{"no Action", url.Values{"Version": {iamapi.APIVersion}}, http.StatusBadRequest, []string{"<Code>MissingAction</Code>"}},
		{"ListAttachedRolePolicies without policies", url.Values{"Action": {"ListAttachedRolePolicies"}, "Version": {iamapi.APIVersion}, "RoleName": {"bare"}}, http.StatusOK,
			[]string{"<ListAttachedRolePoliciesResult><AttachedPolicies></AttachedPolicies><IsTruncated>false</IsTruncated></ListAttachedRolePoliciesResult>"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.PostForm(base, tt.form)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }()
			var body bytes.Buffer
			if _, err := body.ReadFrom(resp.Body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			for _, want := range tt.contains {
				if !strings.Contains(body.String(), want) {
					t.Errorf("answer %s\nlacks %s", body.String(), want)
				}
			}
		})
	}
}

// TestIntegrationAWSCLI: `aws iam get-role` and `list-attached-role-policies`
// with --endpoint-url read the emulator's roles; the CLI decodes the trust
// policy back to the configured document.
func TestIntegrationAWSCLI(t *testing.T) {
	run := awscli.Runner(t, serve(t, config(t)))
	out, stderr, err := run("iam", "get-role", "--role-name", "ec2-only")
	if err != nil {
		t.Fatalf("aws iam get-role: %v\n%s", err, stderr)
	}
	var got struct {
		Role struct {
			RoleName, Arn            string
			AssumeRolePolicyDocument any
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	var want any
	if err := json.Unmarshal([]byte(noFargate), &want); err != nil {
		t.Fatal(err)
	}
	if got.Role.Arn != "arn:aws:iam::111122223333:role/ec2-only" {
		t.Errorf("Arn %q", got.Role.Arn)
	}
	if diff := cmp.Diff(want, got.Role.AssumeRolePolicyDocument); diff != "" {
		t.Errorf("the trust policy as the CLI decodes it (-want +got):\n%s", diff)
	}
	out, stderr, err = run("iam", "list-attached-role-policies", "--role-name", clusterconfig.DefaultPodExecutionRole,
		"--query", "AttachedPolicies[].PolicyArn")
	if err != nil || strings.Join(strings.Fields(out), "") != `["arn:aws:iam::aws:policy/AmazonEKSFargatePodExecutionRolePolicy"]` {
		t.Errorf("list-attached-role-policies: err %v, output %q, stderr %q; want the Fargate pod execution policy", err, out, stderr)
	}
	_, stderr, err = run("iam", "get-role", "--role-name", "nope")
	if err == nil || !strings.Contains(stderr, "(NoSuchEntity)") || !strings.Contains(stderr, "The role with name nope cannot be found.") {
		t.Errorf("get-role of an unknown role: err %v, stderr %q; want NoSuchEntity", err, stderr)
	}
}
