package ec2api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	smithy "github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
)

// serve starts the EC2 API of cfg behind an httptest server, dispatched as
// the emulator's AWS endpoint does, and returns its URL.
func serve(t *testing.T, cfg *clusterconfig.Config) string {
	t.Helper()
	api := ec2api.NewServer(cfg, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ec2api.IsRequest(r) {
			http.Error(w, "not an EC2 request", http.StatusNotFound)
			return
		}
		api.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func client(url string) *ec2.Client {
	return ec2.New(ec2.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider("test", "test", ""),
		RetryMaxAttempts: 1,
	})
}

type subnet struct{ ID, AZ, VPC, CIDR string }

func subnets(out []types.Subnet) []subnet {
	var got []subnet
	for _, s := range out {
		got = append(got, subnet{aws.ToString(s.SubnetId), aws.ToString(s.AvailabilityZone), aws.ToString(s.VpcId), aws.ToString(s.CidrBlock)})
	}
	return got
}

// TestSDK drives the API with aws-sdk-go-v2's EC2 client, which speaks the
// query protocol and reads EC2's XML.
func TestSDK(t *testing.T) {
	cfg := clusterconfig.Default()
	c := client(serve(t, cfg))
	ctx := context.Background()
	vpcID := cfg.VPC.ID
	private := []subnet{
		{"subnet-private1", "us-east-1a", vpcID, "10.0.0.0/19"},
		{"subnet-private2", "us-east-1b", vpcID, "10.0.32.0/19"},
		{"subnet-private3", "us-east-1c", vpcID, "10.0.64.0/19"},
	}
	tests := []struct {
		name string
		in   ec2.DescribeSubnetsInput
		want []subnet
	}{
		{"by id", ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-private2", "subnet-private1"}}, private[:2]},
		{"by vpc and zone", ec2.DescribeSubnetsInput{Filters: []types.Filter{
			{Name: aws.String("vpc-id"), Values: []string{vpcID}},
			{Name: aws.String("availability-zone"), Values: []string{"us-east-1c", "us-east-1b"}},
		}}, []subnet{private[1], private[2], {"subnet-public2", "us-east-1b", vpcID, "10.0.132.0/22"}, {"subnet-public3", "us-east-1c", vpcID, "10.0.136.0/22"}}},
		{"by tag", ec2.DescribeSubnetsInput{Filters: []types.Filter{{Name: aws.String("tag:kubernetes.io/role/internal-elb"), Values: []string{"1"}}}}, private},
		{"another vpc", ec2.DescribeSubnetsInput{Filters: []types.Filter{{Name: aws.String("vpc-id"), Values: []string{"vpc-other"}}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.DescribeSubnets(ctx, &tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, subnets(out.Subnets)); diff != "" {
				t.Errorf("DescribeSubnets (-want +got):\n%s", diff)
			}
		})
	}

	out, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-private1"}})
	if err != nil {
		t.Fatal(err)
	}
	s := out.Subnets[0]
	if got := aws.ToString(s.AvailabilityZoneId); got != "use1-az1" {
		t.Errorf("AvailabilityZoneId = %q, want use1-az1", got)
	}
	if got := aws.ToInt32(s.AvailableIpAddressCount); got != 8187 {
		t.Errorf("AvailableIpAddressCount = %d, want 8187 (a /19 less AWS's five)", got)
	}
	if s.State != types.SubnetStateAvailable || aws.ToBool(s.MapPublicIpOnLaunch) {
		t.Errorf("state %s, public %v: want available and private", s.State, aws.ToBool(s.MapPublicIpOnLaunch))
	}

	vpcs, err := c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{vpcID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(vpcs.Vpcs) != 1 || aws.ToString(vpcs.Vpcs[0].CidrBlock) != "10.0.0.0/16" {
		t.Errorf("DescribeVpcs = %+v, want the cluster's VPC 10.0.0.0/16", vpcs.Vpcs)
	}

	off := false
	noDNS := clusterconfig.Default()
	noDNS.VPC.EnableDNSHostnames = &off
	for _, tc := range []struct {
		cfg  *clusterconfig.Config
		want bool
	}{{cfg, true}, {noDNS, false}} {
		attr, err := client(serve(t, tc.cfg)).DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(vpcID), Attribute: types.VpcAttributeNameEnableDnsHostnames})
		if err != nil {
			t.Fatal(err)
		}
		if got := attr.EnableDnsHostnames != nil && aws.ToBool(attr.EnableDnsHostnames.Value); got != tc.want {
			t.Errorf("enableDnsHostnames = %v, want %v", got, tc.want)
		}
	}
}

// TestSDKErrors: the SDK reads EC2's error codes and messages.
func TestSDKErrors(t *testing.T) {
	c := client(serve(t, clusterconfig.Default()))
	ctx := context.Background()
	tests := []struct {
		name     string
		call     func() error
		code     string
		contains string
	}{
		{"unknown subnet", func() error {
			_, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{SubnetIds: []string{"subnet-private1", "subnet-nope"}})
			return err
		}, "InvalidSubnetID.NotFound", "subnet-nope"},
		{"unknown filter", func() error {
			_, err := c.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{Filters: []types.Filter{{Name: aws.String("colour"), Values: []string{"red"}}}})
			return err
		}, "InvalidParameterValue", "'colour'"},
		{"unknown vpc", func() error {
			_, err := c.DescribeVpcs(ctx, &ec2.DescribeVpcsInput{VpcIds: []string{"vpc-nope"}})
			return err
		}, "InvalidVpcID.NotFound", "vpc-nope"},
		{"action not served", func() error {
			_, err := c.DescribeInstances(ctx, &ec2.DescribeInstancesInput{})
			return err
		}, "InvalidAction", "DescribeInstances"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr smithy.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v is not an API error", err)
			}
			if apiErr.ErrorCode() != tt.code || !strings.Contains(apiErr.ErrorMessage(), tt.contains) {
				t.Errorf("error %s %q, want %s mentioning %q", apiErr.ErrorCode(), apiErr.ErrorMessage(), tt.code, tt.contains)
			}
		})
	}
}

// TestIntegrationAWSCLI: `aws ec2 describe-subnets --endpoint-url` reads
// the emulator's VPC.
func TestIntegrationAWSCLI(t *testing.T) {
	awsCLI, err := exec.LookPath("aws")
	if err != nil {
		t.Fatalf("the AWS CLI (aws) is not installed: run hack/tools.sh awscli (%v)", err)
	}
	url := serve(t, clusterconfig.Default())
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"AWS_CONFIG_FILE="+filepath.Join(home, "config"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(home, "credentials"))
	run := func(args ...string) (string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, awsCLI, append([]string{"--endpoint-url", url, "--output", "json"}, args...)...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	out, stderr, err := run("ec2", "describe-subnets", "--filters", "Name=availability-zone,Values=us-east-1b",
		"--query", "Subnets[].[SubnetId,AvailabilityZone,MapPublicIpOnLaunch]")
	if err != nil {
		t.Fatalf("aws ec2 describe-subnets: %v\n%s", err, stderr)
	}
	var got [][]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	want := [][]any{{"subnet-private2", "us-east-1b", false}, {"subnet-public2", "us-east-1b", true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("describe-subnets (-want +got):\n%s", diff)
	}
	out, stderr, err = run("ec2", "describe-subnets", "--filters", "Name=vpc-id,Values=vpc-other")
	if err != nil || !strings.Contains(out, `"Subnets": []`) {
		t.Errorf("describe-subnets of another VPC: err %v, output %q, stderr %q; want an empty list", err, out, stderr)
	}
	_, stderr, err = run("ec2", "describe-subnets", "--subnet-ids", "subnet-nope")
	if err == nil || !strings.Contains(stderr, "(InvalidSubnetID.NotFound)") {
		t.Errorf("describe-subnets of an unknown subnet: err %v, stderr %q; want InvalidSubnetID.NotFound", err, stderr)
	}
}
