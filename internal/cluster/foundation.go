package cluster

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Foundation reads from EC2 and IAM what the foundation rules (FG053–FG058)
// judge of a live cluster: the VPC's DNS attributes, the profiles' subnets,
// the VPC's route tables and endpoints, and the profiles' pod execution
// roles. d is the cluster's description. A call that fails leaves what it
// would have said unknown and adds an error; the rest is still read. The
// cluster's capacity is not judged here (CapacityKnown stays false): scan's
// live rules see the pods that have nowhere to run.
func (e *EKS) Foundation(ctx context.Context, d Description, profiles []fargate.Profile) (*foundation.Foundation, []error) {
	f := &foundation.Foundation{Cluster: foundation.Cluster{Origin: awsOrigin("EKSCluster", e.Cluster), Name: e.Cluster, VPC: d.VPCID}}
	f.Cluster.Region, f.Cluster.Account = foundation.RegionAccount(d.ARN)
	for _, p := range profiles {
		f.Profiles = append(f.Profiles, foundation.Profile{Origin: awsOrigin("FargateProfile", p.Name), Profile: p})
	}
	var errs []error
	if d.VPCID != "" {
		v, err := e.vpc(ctx, d.VPCID)
		errs = append(errs, err)
		f.VPCs = append(f.VPCs, v)
		f.RouteTables, err = e.routeTables(ctx, d.VPCID)
		errs = append(errs, err)
		f.Endpoints, err = e.endpoints(ctx, d.VPCID)
		errs = append(errs, err)
	}
	var subnets []string
	for _, p := range profiles {
		for _, id := range p.Subnets {
			if !slices.Contains(subnets, id) {
				subnets = append(subnets, id)
			}
		}
	}
	if len(subnets) > 0 {
		pages := ec2.NewDescribeSubnetsPaginator(e.EC2, &ec2.DescribeSubnetsInput{SubnetIds: subnets})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				errs = append(errs, e.explain("ec2:DescribeSubnets", err))
				break
			}
			for _, s := range page.Subnets {
				id := aws.ToString(s.SubnetId)
				var free *int
				if s.AvailableIpAddressCount != nil {
					free = aws.Int(int(*s.AvailableIpAddressCount))
				}
				f.Subnets = append(f.Subnets, foundation.Subnet{Origin: awsOrigin("Subnet", id), ID: id, VPC: aws.ToString(s.VpcId), AZ: aws.ToString(s.AvailabilityZone), Free: free})
			}
		}
	}
	var roles []string
	for _, p := range profiles {
		if name := foundation.RoleName(p.PodExecutionRoleARN); name != "" && !slices.Contains(roles, name) {
			roles = append(roles, name)
		}
	}
	for _, name := range roles {
		r, err := e.role(ctx, name)
		errs = append(errs, err)
		if r != nil {
			f.Roles = append(f.Roles, *r)
		}
	}
	return f, slices.DeleteFunc(errs, func(err error) bool { return err == nil })
}

// awsOrigin names a resource read from an AWS API: by its type and ID, with no file.
func awsOrigin(kind, id string) foundation.Origin {
	return foundation.Origin{Ref: object.Ref{APIVersion: "aws", Kind: kind, Name: id}}
}

func (e *EKS) vpc(ctx context.Context, id string) (foundation.VPC, error) {
	v := foundation.VPC{Origin: awsOrigin("VPC", id), ID: id}
	var errs []error
	for _, attr := range []ec2types.VpcAttributeName{ec2types.VpcAttributeNameEnableDnsSupport, ec2types.VpcAttributeNameEnableDnsHostnames} {
		out, err := e.EC2.DescribeVpcAttribute(ctx, &ec2.DescribeVpcAttributeInput{VpcId: aws.String(id), Attribute: attr})
		if err != nil {
			errs = append(errs, e.explain("ec2:DescribeVpcAttribute", err))
			continue
		}
		switch {
		case out.EnableDnsSupport != nil && out.EnableDnsSupport.Value != nil:
			v.DNSSupport = out.EnableDnsSupport.Value
		case out.EnableDnsHostnames != nil && out.EnableDnsHostnames.Value != nil:
			v.DNSHostnames = out.EnableDnsHostnames.Value
		}
	}
	return v, errors.Join(errs...)
}

func (e *EKS) routeTables(ctx context.Context, vpc string) ([]foundation.RouteTable, error) {
	var out []foundation.RouteTable
	pages := ec2.NewDescribeRouteTablesPaginator(e.EC2, &ec2.DescribeRouteTablesInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpc}}}})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("ec2:DescribeRouteTables", err)
		}
		for _, t := range page.RouteTables {
			id := aws.ToString(t.RouteTableId)
			rt := foundation.RouteTable{Origin: awsOrigin("RouteTable", id), ID: id, VPC: aws.ToString(t.VpcId)}
			for _, a := range t.Associations {
				rt.Main = rt.Main || aws.ToBool(a.Main)
				if s := aws.ToString(a.SubnetId); s != "" {
					rt.Subnets = append(rt.Subnets, s)
				}
			}
			for _, r := range t.Routes {
				if route, ok := liveRoute(r); ok {
					rt.Routes = append(rt.Routes, route)
				}
			}
			out = append(out, rt)
		}
	}
	return out, nil
}

// liveRoute reads a route of DescribeRouteTables; ok is false for the
// local route, a blackhole, and IPv6 or prefix-list routes.
func liveRoute(r ec2types.Route) (foundation.Route, bool) {
	route := foundation.Route{Destination: aws.ToString(r.DestinationCidrBlock)}
	if route.Destination == "" || r.State == ec2types.RouteStateBlackhole {
		return route, false
	}
	gw := aws.ToString(r.GatewayId)
	switch {
	case gw == "local":
		return route, false
	case strings.HasPrefix(gw, "igw-"):
		route.Target, route.TargetID = foundation.TargetInternetGateway, gw
	case aws.ToString(r.NatGatewayId) != "":
		route.Target, route.TargetID = foundation.TargetNATGateway, aws.ToString(r.NatGatewayId)
	default:
		route.Target = foundation.TargetOther
		for _, id := range []*string{r.GatewayId, r.TransitGatewayId, r.NetworkInterfaceId, r.InstanceId, r.VpcPeeringConnectionId, r.CoreNetworkArn, r.LocalGatewayId, r.CarrierGatewayId} {
			if aws.ToString(id) != "" {
				route.TargetID = aws.ToString(id)
				break
			}
		}
	}
	return route, true
}

func (e *EKS) endpoints(ctx context.Context, vpc string) ([]foundation.Endpoint, error) {
	var out []foundation.Endpoint
	pages := ec2.NewDescribeVpcEndpointsPaginator(e.EC2, &ec2.DescribeVpcEndpointsInput{Filters: []ec2types.Filter{{Name: aws.String("vpc-id"), Values: []string{vpc}}}})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, e.explain("ec2:DescribeVpcEndpoints", err)
		}
		for _, ep := range page.VpcEndpoints {
			id := aws.ToString(ep.VpcEndpointId)
			out = append(out, foundation.Endpoint{Origin: awsOrigin("VpcEndpoint", id), ID: id, VPC: aws.ToString(ep.VpcId),
				Service: aws.ToString(ep.ServiceName), RouteTables: ep.RouteTableIds, Subnets: ep.SubnetIds})
		}
	}
	return out, nil
}

// role reads a pod execution role: its trust policy, managed policies and
// the names of its inline policies.
// A role IAM does not have is nil, as is one GetRole may not read.
func (e *EKS) role(ctx context.Context, name string) (*foundation.Role, error) {
	got, err := e.IAM.GetRole(ctx, &iam.GetRoleInput{RoleName: aws.String(name)})
	if err != nil {
		return nil, e.explain("iam:GetRole", err)
	}
	r := &foundation.Role{Origin: awsOrigin("IAMRole", name), Name: name, ARN: aws.ToString(got.Role.Arn)}
	if doc, err := url.QueryUnescape(aws.ToString(got.Role.AssumeRolePolicyDocument)); err == nil {
		r.Trust = doc
	}
	pages := iam.NewListAttachedRolePoliciesPaginator(e.IAM, &iam.ListAttachedRolePoliciesInput{RoleName: aws.String(name)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return r, e.explain("iam:ListAttachedRolePolicies", err)
		}
		for _, p := range page.AttachedPolicies {
			r.Policies = append(r.Policies, aws.ToString(p.PolicyArn))
		}
	}
	inline := iam.NewListRolePoliciesPaginator(e.IAM, &iam.ListRolePoliciesInput{RoleName: aws.String(name)})
	for inline.HasMorePages() {
		page, err := inline.NextPage(ctx)
		if err != nil {
			return r, e.explain("iam:ListRolePolicies", err)
		}
		r.InlinePolicies = append(r.InlinePolicies, page.PolicyNames...)
	}
	r.PoliciesKnown = true
	return r, nil
}
