package profiles

import (
	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// emulatorFoundation is the foundation of an emulated cluster as its
// configuration declares it, laid out as the emulator's EC2 and IAM APIs
// serve it (terraform-aws-modules/vpc's layout: a route table per AZ for
// its private subnet, with a NAT route unless the subnet's nat is false; the
// s3 gateway endpoint on the private route tables). Resources are named as
// scan names them live, so that check on the configuration and scan on the
// emulator report the same objects.
func emulatorFoundation(cfg *clusterconfig.Config) *foundation.Foundation {
	origin := func(kind, name string) foundation.Origin {
		return foundation.Origin{Ref: object.Ref{APIVersion: clusterconfig.APIVersion, Kind: kind, Name: name}}
	}
	vpc := cfg.VPC.ID
	hostnames, support := cfg.DNSHostnames(), true
	f := &foundation.Foundation{
		Cluster: foundation.Cluster{Origin: origin("EKSCluster", cfg.Metadata.Name), Name: cfg.Metadata.Name, Region: cfg.Metadata.Region,
			Account: cfg.AccountID, VPC: vpc},
		VPCs:          []foundation.VPC{{Origin: origin("VPC", vpc), ID: vpc, DNSSupport: &support, DNSHostnames: &hostnames}},
		CapacityKnown: true,
	}
	var private []string
	for _, az := range cfg.AvailabilityZones {
		s, ok := cfg.VPC.Subnets.Private[az]
		if !ok {
			continue
		}
		f.Subnets = append(f.Subnets, foundation.Subnet{Origin: origin("Subnet", s.ID), ID: s.ID, VPC: vpc, AZ: az})
		id := clusterconfig.PrivateRouteTableID(az)
		rt := foundation.RouteTable{Origin: origin("RouteTable", id), ID: id, VPC: vpc, Subnets: []string{s.ID}}
		if cfg.NATGateway(az) {
			rt.Routes = []foundation.Route{{Destination: foundation.DefaultRoute, Target: foundation.TargetNATGateway, TargetID: clusterconfig.NATGatewayID(az)}}
		}
		private = append(private, rt.ID)
		f.RouteTables = append(f.RouteTables, rt)
	}
	for _, svc := range cfg.VPC.Endpoints {
		ep := foundation.Endpoint{Origin: origin("VpcEndpoint", svc), VPC: vpc, Service: "com.amazonaws." + cfg.Metadata.Region + "." + svc}
		if svc == "s3" || svc == "dynamodb" {
			ep.RouteTables = private
		}
		f.Endpoints = append(f.Endpoints, ep)
	}
	for _, r := range cfg.Roles() {
		f.Roles = append(f.Roles, foundation.Role{Origin: origin("IAMRole", r.Name), Name: r.Name, ARN: cfg.RoleARN(r.Name),
			Trust: r.TrustPolicy, Policies: r.AttachedPolicies, PoliciesKnown: true})
	}
	for _, p := range cfg.FargateProfiles {
		fp := p.Profile()
		fp.PodExecutionRoleARN = cfg.RoleARN(clusterconfig.DefaultPodExecutionRole)
		f.Profiles = append(f.Profiles, foundation.Profile{Origin: origin("FargateProfile", p.Name), Profile: fp})
	}
	for _, ng := range cfg.NodeGroups {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: origin("Nodegroup", ng.Name), Name: ng.Name, DesiredSize: ng.DesiredCapacity})
	}
	return f
}
