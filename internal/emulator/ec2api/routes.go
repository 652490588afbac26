package ec2api

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"time"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

// The VPC's network, derived from the configuration as
// terraform-aws-modules/vpc lays it out: a main route table with the local
// route only; a public one, associated with the public subnets, routing
// 0.0.0.0/0 to the internet gateway; one per AZ for its private subnet,
// routing 0.0.0.0/0 to the AZ's NAT gateway when it has one, and each
// gateway endpoint's prefix list to the endpoint.

// createTime is when the emulator's network resources were made: a fixed
// time, since they are the configuration's.
var createTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

type route struct {
	DestinationCidrBlock    string `xml:"destinationCidrBlock,omitempty"`
	DestinationPrefixListID string `xml:"destinationPrefixListId,omitempty"`
	GatewayID               string `xml:"gatewayId,omitempty"`
	NatGatewayID            string `xml:"natGatewayId,omitempty"`
	State                   string `xml:"state"`
	Origin                  string `xml:"origin"`
}

type association struct {
	ID               string `xml:"routeTableAssociationId"`
	RouteTableID     string `xml:"routeTableId"`
	SubnetID         string `xml:"subnetId,omitempty"`
	Main             bool   `xml:"main"`
	AssociationState struct {
		State string `xml:"state"`
	} `xml:"associationState"`
}

type routeTable struct {
	RouteTableID string           `xml:"routeTableId"`
	VpcID        string           `xml:"vpcId"`
	OwnerID      string           `xml:"ownerId"`
	Routes       set[route]       `xml:"routeSet"`
	Associations set[association] `xml:"associationSet"`
	Tags         set[tag]         `xml:"tagSet"`
}

type describeRouteTablesResponse struct {
	XMLName     xml.Name        `xml:"DescribeRouteTablesResponse"`
	Xmlns       string          `xml:"xmlns,attr"`
	RequestID   string          `xml:"requestId"`
	RouteTables set[routeTable] `xml:"routeTableSet"`
}

// IDs of the network's resources.
func internetGatewayID() string        { return "igw-0emulator" }
func endpointID(service string) string { return "vpce-0" + hexName(service) }

// hexName is a stable hex suffix for an ID made from a name.
func hexName(name string) string {
	var h uint32 = 2166136261 // FNV-1a
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	return fmt.Sprintf("%08x", h)
}

// prefixListID is the AWS-managed prefix list of a gateway endpoint's
// service.
func prefixListID(service string) string { return "pl-" + hexName(service) }

// gatewayEndpoint reports whether a service's endpoints are gateway
// endpoints (S3 and DynamoDB) rather than interface endpoints.
func gatewayEndpoint(service string) bool { return service == "s3" || service == "dynamodb" }

func (s *Server) serviceName(service string) string {
	return "com.amazonaws." + s.cfg.Metadata.Region + "." + service
}

// routeTables lists the main, the public and the private route tables.
func (s *Server) routeTables() []routeTable {
	vpc := s.cfg.VPC
	local := route{DestinationCidrBlock: vpc.CIDR, GatewayID: "local", State: "active", Origin: "CreateRouteTable"}
	table := func(id, name string, routes ...route) routeTable {
		return routeTable{RouteTableID: id, VpcID: vpc.ID, OwnerID: s.cfg.AccountID,
			Routes: set[route]{append([]route{local}, routes...)}, Tags: set[tag]{[]tag{{"Name", s.cfg.Metadata.Name + "-" + name}}}}
	}
	associate := func(t *routeTable, subnet string, main bool) {
		a := association{ID: "rtbassoc-0" + hexName(t.RouteTableID+subnet), RouteTableID: t.RouteTableID, SubnetID: subnet, Main: main}
		a.AssociationState.State = "associated"
		t.Associations.Items = append(t.Associations.Items, a)
	}
	mainTable := table("rtb-0main", "default")
	associate(&mainTable, "", true)
	out := []routeTable{mainTable}
	if len(vpc.Subnets.Public) > 0 {
		public := table("rtb-0public", "public", route{DestinationCidrBlock: "0.0.0.0/0", GatewayID: internetGatewayID(), State: "active", Origin: "CreateRoute"})
		for _, az := range s.cfg.AvailabilityZones {
			if sn, ok := vpc.Subnets.Public[az]; ok {
				associate(&public, sn.ID, false)
			}
		}
		out = append(out, public)
	}
	for _, az := range s.cfg.AvailabilityZones {
		sn, ok := vpc.Subnets.Private[az]
		if !ok {
			continue
		}
		var routes []route
		if s.cfg.NATGateway(az) {
			routes = append(routes, route{DestinationCidrBlock: "0.0.0.0/0", NatGatewayID: clusterconfig.NATGatewayID(az), State: "active", Origin: "CreateRoute"})
		}
		for _, e := range vpc.Endpoints {
			if gatewayEndpoint(e) {
				routes = append(routes, route{DestinationPrefixListID: prefixListID(e), GatewayID: endpointID(e), State: "active", Origin: "CreateRoute"})
			}
		}
		private := table(clusterconfig.PrivateRouteTableID(az), "private-"+az, routes...)
		associate(&private, sn.ID, false)
		out = append(out, private)
	}
	return out
}

func (s *Server) describeRouteTables(form url.Values, requestID string) (any, *apiError) {
	found, aerr := described(form, "RouteTableId", s.routeTables(), func(t routeTable) string { return t.RouteTableID },
		func(id string) *apiError {
			return notFound("InvalidRouteTableID.NotFound", "The routeTable ID '%s' does not exist", id)
		},
		func(t routeTable) map[string][]string {
			attrs := map[string][]string{"vpc-id": {t.VpcID}, "route-table-id": {t.RouteTableID}}
			for _, a := range t.Associations.Items {
				attrs["association.subnet-id"] = append(attrs["association.subnet-id"], a.SubnetID)
				attrs["association.main"] = append(attrs["association.main"], fmt.Sprint(a.Main))
			}
			for _, r := range t.Routes.Items {
				attrs["route.destination-cidr-block"] = append(attrs["route.destination-cidr-block"], r.DestinationCidrBlock)
				attrs["route.gateway-id"] = append(attrs["route.gateway-id"], r.GatewayID)
				attrs["route.nat-gateway-id"] = append(attrs["route.nat-gateway-id"], r.NatGatewayID)
			}
			return withTags(t.Tags, attrs)
		}, "vpc-id", "route-table-id", "association.subnet-id", "association.main",
		"route.destination-cidr-block", "route.gateway-id", "route.nat-gateway-id")
	if aerr != nil {
		return nil, aerr
	}
	resp := describeRouteTablesResponse{Xmlns: xmlns, RequestID: requestID}
	resp.RouteTables.Items = found
	return resp, nil
}

type natGatewayAddress struct {
	AllocationID string `xml:"allocationId"`
	PublicIP     string `xml:"publicIp"`
	IsPrimary    bool   `xml:"isPrimary"`
	Status       string `xml:"status"`
}

type natGateway struct {
	NatGatewayID     string                 `xml:"natGatewayId"`
	SubnetID         string                 `xml:"subnetId"`
	VpcID            string                 `xml:"vpcId"`
	State            string                 `xml:"state"`
	ConnectivityType string                 `xml:"connectivityType"`
	CreateTime       time.Time              `xml:"createTime"`
	Addresses        set[natGatewayAddress] `xml:"natGatewayAddressSet"`
	Tags             set[tag]               `xml:"tagSet"`
}

type describeNatGatewaysResponse struct {
	XMLName     xml.Name        `xml:"DescribeNatGatewaysResponse"`
	Xmlns       string          `xml:"xmlns,attr"`
	RequestID   string          `xml:"requestId"`
	NatGateways set[natGateway] `xml:"natGatewaySet"`
}

// natGateways lists a NAT gateway per AZ whose private subnet routes to
// one, in the AZ's public subnet.
func (s *Server) natGateways() []natGateway {
	var out []natGateway
	for i, az := range s.cfg.AvailabilityZones {
		if !s.cfg.NATGateway(az) {
			continue
		}
		id := clusterconfig.NATGatewayID(az)
		out = append(out, natGateway{
			NatGatewayID: id, SubnetID: s.cfg.VPC.Subnets.Public[az].ID, VpcID: s.cfg.VPC.ID, State: "available",
			ConnectivityType: "public", CreateTime: createTime,
			Addresses: set[natGatewayAddress]{[]natGatewayAddress{{AllocationID: "eipalloc-0" + hexName(id), PublicIP: fmt.Sprintf("198.51.100.%d", 10+i), IsPrimary: true, Status: "succeeded"}}},
			Tags:      set[tag]{[]tag{{"Name", s.cfg.Metadata.Name + "-" + az}}},
		})
	}
	return out
}

func (s *Server) describeNatGateways(form url.Values, requestID string) (any, *apiError) {
	found, aerr := described(form, "NatGatewayId", s.natGateways(), func(n natGateway) string { return n.NatGatewayID },
		func(id string) *apiError {
			return notFound("NatGatewayNotFound", "The Nat Gateway %s was not found", id)
		},
		func(n natGateway) map[string][]string {
			return withTags(n.Tags, map[string][]string{"nat-gateway-id": {n.NatGatewayID}, "subnet-id": {n.SubnetID}, "vpc-id": {n.VpcID}, "state": {n.State}})
		}, "nat-gateway-id", "subnet-id", "vpc-id", "state")
	if aerr != nil {
		return nil, aerr
	}
	resp := describeNatGatewaysResponse{Xmlns: xmlns, RequestID: requestID}
	resp.NatGateways.Items = found
	return resp, nil
}

type vpcEndpoint struct {
	VpcEndpointID     string      `xml:"vpcEndpointId"`
	VpcEndpointType   string      `xml:"vpcEndpointType"`
	VpcID             string      `xml:"vpcId"`
	ServiceName       string      `xml:"serviceName"`
	State             string      `xml:"state"`
	RouteTableIDs     set[string] `xml:"routeTableIdSet"`
	SubnetIDs         set[string] `xml:"subnetIdSet"`
	PrivateDNSEnabled bool        `xml:"privateDnsEnabled"`
	OwnerID           string      `xml:"ownerId"`
	CreationTimestamp time.Time   `xml:"creationTimestamp"`
	Tags              set[tag]    `xml:"tagSet"`
}

type describeVpcEndpointsResponse struct {
	XMLName   xml.Name         `xml:"DescribeVpcEndpointsResponse"`
	Xmlns     string           `xml:"xmlns,attr"`
	RequestID string           `xml:"requestId"`
	Endpoints set[vpcEndpoint] `xml:"vpcEndpointSet"`
}

// endpoints lists the configuration's VPC endpoints: gateway endpoints in
// the private route tables, interface endpoints in the private subnets.
func (s *Server) endpoints() []vpcEndpoint {
	var privateSubnets, privateTables []string
	for _, az := range s.cfg.AvailabilityZones {
		if sn, ok := s.cfg.VPC.Subnets.Private[az]; ok {
			privateSubnets, privateTables = append(privateSubnets, sn.ID), append(privateTables, clusterconfig.PrivateRouteTableID(az))
		}
	}
	var out []vpcEndpoint
	for _, e := range s.cfg.VPC.Endpoints {
		ep := vpcEndpoint{VpcEndpointID: endpointID(e), VpcEndpointType: "Interface", VpcID: s.cfg.VPC.ID, ServiceName: s.serviceName(e),
			State: "available", OwnerID: s.cfg.AccountID, CreationTimestamp: createTime, Tags: set[tag]{[]tag{{"Name", s.cfg.Metadata.Name + "-" + e}}}}
		if gatewayEndpoint(e) {
			ep.VpcEndpointType, ep.RouteTableIDs.Items = "Gateway", privateTables
		} else {
			ep.SubnetIDs.Items, ep.PrivateDNSEnabled = privateSubnets, true
		}
		out = append(out, ep)
	}
	return out
}

func (s *Server) describeVpcEndpoints(form url.Values, requestID string) (any, *apiError) {
	found, aerr := described(form, "VpcEndpointId", s.endpoints(), func(e vpcEndpoint) string { return e.VpcEndpointID },
		func(id string) *apiError {
			return notFound("InvalidVpcEndpointId.NotFound", "The Vpc Endpoint Id '%s' does not exist", id)
		},
		func(e vpcEndpoint) map[string][]string {
			return withTags(e.Tags, map[string][]string{"vpc-id": {e.VpcID}, "service-name": {e.ServiceName}, "vpc-endpoint-id": {e.VpcEndpointID},
				"vpc-endpoint-type": {e.VpcEndpointType}, "vpc-endpoint-state": {e.State}})
		}, "vpc-id", "service-name", "vpc-endpoint-id", "vpc-endpoint-type", "vpc-endpoint-state")
	if aerr != nil {
		return nil, aerr
	}
	resp := describeVpcEndpointsResponse{Xmlns: xmlns, RequestID: requestID}
	resp.Endpoints.Items = found
	return resp, nil
}
