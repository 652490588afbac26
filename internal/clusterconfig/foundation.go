package clusterconfig

import (
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Foundation is the foundation of the emulated cluster as its
// configuration declares it, laid out as the emulator's EC2 and IAM APIs
// serve it (terraform-aws-modules/vpc's layout: a route table per AZ for
// its private subnet, with a NAT route unless the subnet's nat is false; the
// s3 gateway endpoint on the private route tables). Resources are named as
// scan names them live, so that check on the configuration and scan on the
// emulator report the same objects.
func (c *Config) Foundation() *foundation.Foundation {
	origin := func(kind, name string) foundation.Origin {
		return foundation.Origin{Ref: object.Ref{APIVersion: APIVersion, Kind: kind, Name: name}}
	}
	vpc := c.VPC.ID
	hostnames, support := c.DNSHostnames(), true
	f := &foundation.Foundation{
		Cluster: foundation.Cluster{Origin: origin("EKSCluster", c.Metadata.Name), Name: c.Metadata.Name, Region: c.Metadata.Region,
			Account: c.AccountID, VPC: vpc},
		VPCs:          []foundation.VPC{{Origin: origin("VPC", vpc), ID: vpc, DNSSupport: &support, DNSHostnames: &hostnames}},
		CapacityKnown: true,
	}
	var private []string
	for _, az := range c.AvailabilityZones {
		s, ok := c.VPC.Subnets.Private[az]
		if !ok {
			continue
		}
		f.Subnets = append(f.Subnets, foundation.Subnet{Origin: origin("Subnet", s.ID), ID: s.ID, VPC: vpc, AZ: az})
		id := PrivateRouteTableID(az)
		rt := foundation.RouteTable{Origin: origin("RouteTable", id), ID: id, VPC: vpc, Subnets: []string{s.ID}}
		if c.NATGateway(az) {
			rt.Routes = []foundation.Route{{Destination: foundation.DefaultRoute, Target: foundation.TargetNATGateway, TargetID: NATGatewayID(az)}}
		}
		private = append(private, rt.ID)
		f.RouteTables = append(f.RouteTables, rt)
	}
	for _, svc := range c.VPC.Endpoints {
		ep := foundation.Endpoint{Origin: origin("VpcEndpoint", svc), VPC: vpc, Service: "com.amazonaws." + c.Metadata.Region + "." + svc}
		if svc == "s3" || svc == "dynamodb" {
			ep.RouteTables = private
		}
		f.Endpoints = append(f.Endpoints, ep)
	}
	for _, r := range c.Roles() {
		f.Roles = append(f.Roles, foundation.Role{Origin: origin("IAMRole", r.Name), Name: r.Name, ARN: c.RoleARN(r.Name),
			Trust: r.TrustPolicy, Policies: r.AttachedPolicies, InlinePolicies: r.InlinePolicies, PoliciesKnown: true})
	}
	for _, p := range c.FargateProfiles {
		fp := p.Profile()
		fp.PodExecutionRoleARN = c.RoleARN(DefaultPodExecutionRole)
		f.Profiles = append(f.Profiles, foundation.Profile{Origin: origin("FargateProfile", p.Name), Profile: fp})
	}
	for _, ng := range c.NodeGroups {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: origin("Nodegroup", ng.Name), Name: ng.Name, DesiredSize: ng.DesiredCapacity})
	}
	return f
}
