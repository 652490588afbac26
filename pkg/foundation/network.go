package foundation

import "strings"

// DefaultRoute is the IPv4 destination of a default route.
const DefaultRoute = "0.0.0.0/0"

// RouteTableOf returns the route table a subnet uses: the one explicitly
// associated with it, else its VPC's main route table. ok is false when the
// source does not say.
func (f *Foundation) RouteTableOf(s *Subnet) (*RouteTable, bool) {
	if rt, ok := find(f.RouteTables, func(rt *RouteTable) bool { return containsString(rt.Subnets, s.ID) }); ok {
		return rt, true
	}
	return find(f.RouteTables, func(rt *RouteTable) bool { return rt.Main && s.VPC != "" && rt.VPC == s.VPC })
}

// Egress is how a subnet's pods reach the image registries.
type Egress struct {
	// Public is the route to an internet gateway that makes the subnet
	// public, nil when there is none.
	Public *Route
	// Outbound is the default route through a NAT gateway or another hop,
	// nil when there is none.
	Outbound *Route
	// MissingEndpoints lists, among the endpoints that let a private subnet
	// pull images from Amazon ECR without a NAT route (ecr.api and ecr.dkr
	// interface endpoints in the VPC, an s3 gateway endpoint on the route
	// table), those the VPC lacks.
	MissingEndpoints []string
}

// PullsImages reports whether pods in the subnet can pull images: through a
// default route out, or from ECR through its VPC endpoints.
func (e Egress) PullsImages() bool { return e.Outbound != nil || len(e.MissingEndpoints) == 0 }

// EgressOf decides how a subnet reaches out through route table rt.
func (f *Foundation) EgressOf(s *Subnet, rt *RouteTable) Egress {
	var e Egress
	for i := range rt.Routes {
		r := &rt.Routes[i]
		switch {
		case r.Target == TargetInternetGateway:
			e.Public = r
		case r.Destination == DefaultRoute && e.Outbound == nil:
			e.Outbound = r
		}
	}
	has := map[string]bool{}
	for _, ep := range f.Endpoints {
		if ep.VPC != "" && s.VPC != "" && ep.VPC != s.VPC {
			continue
		}
		svc := endpointService(ep.Service)
		switch {
		case svc == "s3" && containsString(ep.RouteTables, rt.ID):
			has[svc] = true
		case svc == "ecr.api" || svc == "ecr.dkr":
			has[svc] = true
		}
	}
	for _, svc := range []string{"ecr.api", "ecr.dkr", "s3"} {
		if !has[svc] {
			e.MissingEndpoints = append(e.MissingEndpoints, svc)
		}
	}
	return e
}

// endpointService is the service part of an endpoint's service name:
// "ecr.dkr" for com.amazonaws.us-east-1.ecr.dkr.
func endpointService(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 4 || parts[0] != "com" {
		return name
	}
	return strings.Join(parts[3:], ".")
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s && s != "" {
			return true
		}
	}
	return false
}
