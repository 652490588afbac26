package ec2api_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"
	smithy "github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
	"github.com/fargatekit/fargatekit/internal/emulator/ec2api"
)

// serve starts the EC2 API of cfg behind an httptest server, dispatched as
// the emulator's AWS endpoint does, and returns its URL.
func serve(t *testing.T, cfg *clusterconfig.Config) string {
	t.Helper()
	return serveIn(t, cfg, "")
}

// serveIn is serve with the VPC's attributes kept in dir.
func serveIn(t *testing.T, cfg *clusterconfig.Config, dir string) string {
	t.Helper()
	api, err := ec2api.NewServer(cfg, dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
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

// network is a configuration with what a VPC's routes can miss: us-east-1c
// has no NAT route, and the VPC has endpoints for ECR and S3.
func network() *clusterconfig.Config {
	cfg := clusterconfig.Default()
	off := false
	sn := cfg.VPC.Subnets.Private["us-east-1c"]
	sn.NAT = &off
	cfg.VPC.Subnets.Private["us-east-1c"] = sn
	cfg.VPC.Endpoints = []string{"ecr.api", "ecr.dkr", "s3"}
	return cfg
}

// TestSDKRoutes: route tables, NAT gateways and endpoints as the SDK reads
// them, and the filters that find a subnet's routes.
func TestSDKRoutes(t *testing.T) {
	c := client(serve(t, network()))
	ctx := context.Background()
	type rt struct {
		ID      string
		Subnets []string
		Main    bool
		Routes  []string // destination → target
	}
	tables := func(in *ec2.DescribeRouteTablesInput) []rt {
		t.Helper()
		out, err := c.DescribeRouteTables(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		var got []rt
		for _, tb := range out.RouteTables {
			r := rt{ID: aws.ToString(tb.RouteTableId)}
			for _, a := range tb.Associations {
				r.Main = r.Main || aws.ToBool(a.Main)
				if a.SubnetId != nil {
					r.Subnets = append(r.Subnets, *a.SubnetId)
				}
			}
			for _, x := range tb.Routes {
				dest := aws.ToString(x.DestinationCidrBlock) + aws.ToString(x.DestinationPrefixListId)
				r.Routes = append(r.Routes, dest+" → "+aws.ToString(x.GatewayId)+aws.ToString(x.NatGatewayId))
			}
			got = append(got, r)
		}
		return got
	}
	bySubnet := func(id string) *ec2.DescribeRouteTablesInput {
		return &ec2.DescribeRouteTablesInput{Filters: []types.Filter{{Name: aws.String("association.subnet-id"), Values: []string{id}}}}
	}
	got := tables(bySubnet("subnet-private1"))
	if len(got) != 1 || len(got[0].Routes) != 3 || got[0].Routes[0] != "10.0.0.0/16 → local" || got[0].Routes[1] != "0.0.0.0/0 → nat-0emulatora" ||
		!strings.HasPrefix(got[0].Routes[2], "pl-") || !strings.Contains(got[0].Routes[2], "→ vpce-") {
		t.Errorf("subnet-private1's route table: %+v; want local, 0.0.0.0/0 to its AZ's NAT gateway, S3's prefix list to the endpoint", got)
	}
	got = tables(bySubnet("subnet-private3"))
	if len(got) != 1 || len(got[0].Routes) != 2 || slices.ContainsFunc(got[0].Routes, func(r string) bool { return strings.HasPrefix(r, "0.0.0.0/0") }) {
		t.Errorf("subnet-private3 (nat: false): %+v; want no default route", got)
	}
	got = tables(bySubnet("subnet-public2"))
	if diff := cmp.Diff([]rt{{ID: "rtb-0public", Subnets: []string{"subnet-public1", "subnet-public2", "subnet-public3"}, Routes: []string{"10.0.0.0/16 → local", "0.0.0.0/0 → igw-0emulator"}}}, got); diff != "" {
		t.Errorf("subnet-public2's route table (-want +got):\n%s", diff)
	}
	got = tables(&ec2.DescribeRouteTablesInput{Filters: []types.Filter{{Name: aws.String("association.main"), Values: []string{"true"}}}})
	if len(got) != 1 || !got[0].Main || len(got[0].Routes) != 1 {
		t.Errorf("the main route table: %+v", got)
	}
	if got := tables(&ec2.DescribeRouteTablesInput{}); len(got) != 5 {
		t.Errorf("every route table: %d, want 5 (main, public, 3 private)", len(got))
	}

	nats, err := c.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{})
	if err != nil {
		t.Fatal(err)
	}
	var natSubnets []string
	for _, n := range nats.NatGateways {
		natSubnets = append(natSubnets, aws.ToString(n.NatGatewayId)+" in "+aws.ToString(n.SubnetId)+" "+string(n.State))
	}
	if diff := cmp.Diff([]string{"nat-0emulatora in subnet-public1 available", "nat-0emulatorb in subnet-public2 available"}, natSubnets); diff != "" {
		t.Errorf("NAT gateways (-want +got):\n%s", diff)
	}

	eps, err := c.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{Filters: []types.Filter{{Name: aws.String("vpc-endpoint-type"), Values: []string{"Gateway"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.VpcEndpoints) != 1 || aws.ToString(eps.VpcEndpoints[0].ServiceName) != "com.amazonaws.us-east-1.s3" || len(eps.VpcEndpoints[0].RouteTableIds) != 3 {
		t.Errorf("gateway endpoints: %+v; want S3's, in the three private route tables", eps.VpcEndpoints)
	}
	eps, err = c.DescribeVpcEndpoints(ctx, &ec2.DescribeVpcEndpointsInput{Filters: []types.Filter{{Name: aws.String("service-name"), Values: []string{"com.amazonaws.us-east-1.ecr.dkr"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(eps.VpcEndpoints) != 1 || eps.VpcEndpoints[0].VpcEndpointType != types.VpcEndpointTypeInterface || len(eps.VpcEndpoints[0].SubnetIds) != 3 {
		t.Errorf("the ECR endpoint: %+v; want an interface endpoint in the three private subnets", eps.VpcEndpoints)
	}
}

// TestModifyVpcAttribute: DNS hostnames switched off and on, kept in the
// state directory, and EC2's refusals.
func TestModifyVpcAttribute(t *testing.T) {
	cfg, dir := clusterconfig.Default(), t.TempDir()
	c := client(serveIn(t, cfg, dir))
	ctx := context.Background()
	vpc := aws.String(cfg.VPC.ID)
	hostnames := func(c *ec2.Client) bool {
		t.Helper()
		out, err := c.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: vpc, Attribute: types.VpcAttributeNameEnableDnsHostnames})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToBool(out.EnableDnsHostnames.Value)
	}
	if _, err := c.ModifyVpcAttribute(ctx, &ec2.ModifyVpcAttributeInput{VpcId: vpc, EnableDnsHostnames: &types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if hostnames(c) {
		t.Error("DNS hostnames still on after switching them off")
	}
	if hostnames(client(serveIn(t, cfg, dir))) {
		t.Error("a restarted emulator forgot the switch")
	}
	for _, tc := range []struct {
		name     string
		in       ec2.ModifyVpcAttributeInput
		code     string
		contains string
	}{
		{"two attributes", ec2.ModifyVpcAttributeInput{VpcId: vpc, EnableDnsHostnames: &types.AttributeBooleanValue{Value: aws.Bool(true)}, EnableDnsSupport: &types.AttributeBooleanValue{Value: aws.Bool(true)}},
			"InvalidParameterCombination", "one attribute"},
		{"none", ec2.ModifyVpcAttributeInput{VpcId: vpc}, "InvalidParameterCombination", "one attribute"},
		{"unknown vpc", ec2.ModifyVpcAttributeInput{VpcId: aws.String("vpc-nope"), EnableDnsSupport: &types.AttributeBooleanValue{Value: aws.Bool(true)}}, "InvalidVpcID.NotFound", "vpc-nope"},
	} {
		_, err := c.ModifyVpcAttribute(ctx, &tc.in)
		var apiErr smithy.APIError
		if !errors.As(err, &apiErr) || apiErr.ErrorCode() != tc.code || !strings.Contains(apiErr.ErrorMessage(), tc.contains) {
			t.Errorf("%s: %v, want %s mentioning %q", tc.name, err, tc.code, tc.contains)
		}
	}
	// DNS support off, then hostnames on: refused.
	if _, err := c.ModifyVpcAttribute(ctx, &ec2.ModifyVpcAttributeInput{VpcId: vpc, EnableDnsSupport: &types.AttributeBooleanValue{Value: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	_, err := c.ModifyVpcAttribute(ctx, &ec2.ModifyVpcAttributeInput{VpcId: vpc, EnableDnsHostnames: &types.AttributeBooleanValue{Value: aws.Bool(true)}})
	if apiErr := smithy.APIError(nil); !errors.As(err, &apiErr) || apiErr.ErrorCode() != "InvalidParameterValue" {
		t.Errorf("DNS hostnames enabled without DNS support: %v, want InvalidParameterValue", err)
	}
	// A state file that cannot be read is an error naming it.
	if err := os.WriteFile(filepath.Join(dir, ec2api.StateFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ec2api.NewServer(cfg, dir, nil); err == nil || !strings.Contains(err.Error(), ec2api.StateFile) {
		t.Errorf("a broken state file: %v", err)
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
		{"unknown route table", func() error {
			_, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{RouteTableIds: []string{"rtb-nope"}})
			return err
		}, "InvalidRouteTableID.NotFound", "rtb-nope"},
		{"unknown NAT gateway", func() error {
			_, err := c.DescribeNatGateways(ctx, &ec2.DescribeNatGatewaysInput{NatGatewayIds: []string{"nat-nope"}})
			return err
		}, "NatGatewayNotFound", "nat-nope"},
		{"unknown route table filter", func() error {
			_, err := c.DescribeRouteTables(ctx, &ec2.DescribeRouteTablesInput{Filters: []types.Filter{{Name: aws.String("colour"), Values: []string{"red"}}}})
			return err
		}, "InvalidParameterValue", "'colour'"},
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
	run := awscli.Runner(t, serve(t, clusterconfig.Default()))
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
	// A private subnet's default route, and the VPC's DNS hostnames switched off.
	out, stderr, err = run("ec2", "describe-route-tables", "--filters", "Name=association.subnet-id,Values=subnet-private2",
		"--query", "RouteTables[].Routes[?DestinationCidrBlock=='0.0.0.0/0'].NatGatewayId[]")
	if err != nil || strings.Join(strings.Fields(out), "") != `["nat-0emulatorb"]` {
		t.Errorf("describe-route-tables: err %v, output %q, stderr %q; want the NAT gateway of us-east-1b", err, out, stderr)
	}
	if _, stderr, err := run("ec2", "modify-vpc-attribute", "--vpc-id", clusterconfig.Default().VPC.ID, "--no-enable-dns-hostnames"); err != nil {
		t.Fatalf("modify-vpc-attribute: %v\n%s", err, stderr)
	}
	out, stderr, err = run("ec2", "describe-vpc-attribute", "--vpc-id", clusterconfig.Default().VPC.ID, "--attribute", "enableDnsHostnames",
		"--query", "EnableDnsHostnames.Value")
	if err != nil || strings.TrimSpace(out) != "false" {
		t.Errorf("describe-vpc-attribute after switching DNS hostnames off: err %v, output %q, stderr %q", err, out, stderr)
	}
}
