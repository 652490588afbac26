package foundation

import (
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Origin is where a resource is declared: Ref names it (for Terraform the
// resource type and address, for CloudFormation the type and logical ID, for
// eksctl the ClusterConfig, live the resource type and ID) and Source is the
// file and line, when there is a file.
type Origin struct {
	Ref    object.Ref
	Source object.Source
}

// Foundation is what one source says about the resources around a cluster.
// A zero value field is unknown, never "absent": the rules only judge what
// the source describes.
type Foundation struct {
	// Cluster is the EKS cluster; Cluster.Name is "" when the source names none.
	Cluster Cluster
	VPCs    []VPC
	Subnets []Subnet
	// RouteTables hold their routes and explicit subnet associations.
	RouteTables []RouteTable
	Endpoints   []Endpoint
	Roles       []Role
	// Profiles are the cluster's Fargate profiles, each with its Source.
	Profiles []Profile
	// NodeGroups are the cluster's EC2 capacity: managed and self-managed
	// node groups, Karpenter, EKS Auto Mode.
	NodeGroups []NodeGroup
	// CapacityKnown is true when the source describes all of the cluster's
	// compute (an aws_eks_cluster with its node groups, an eksctl
	// ClusterConfig, the live EKS API): only then does no node group mean
	// that the cluster has no EC2 nodes.
	CapacityKnown bool
}

// Cluster is the EKS cluster.
type Cluster struct {
	Origin
	Name string
	// Region and Account, when known, complete the ARNs a pod execution
	// role's aws:SourceArn condition must match.
	Region, Account string
	// VPC is the ID of the cluster's VPC, "" when unknown.
	VPC string
}

// VPC is a VPC and the DNS attributes Fargate needs.
type VPC struct {
	Origin
	ID string
	// DNSSupport and DNSHostnames are enableDnsSupport and
	// enableDnsHostnames; nil when unknown.
	DNSSupport, DNSHostnames *bool
}

// Subnet is a subnet a profile may run pods in.
type Subnet struct {
	Origin
	ID, VPC, AZ string
	// Free is how many of its addresses are free (EC2's
	// AvailableIpAddressCount); nil when not known.
	Free *int `json:",omitempty"`
}

// RouteTable is a route table with its routes.
type RouteTable struct {
	Origin
	ID, VPC string
	// Main is true for the VPC's main route table, which serves every
	// subnet without an explicit association.
	Main bool
	// Subnets are the IDs of the subnets explicitly associated.
	Subnets []string
	Routes  []Route
}

// Target is what a route sends traffic to.
type Target string

// Route targets that matter to Fargate.
const (
	// TargetInternetGateway makes a subnet public (an egress-only internet
	// gateway does not: it carries IPv6 only and is not counted).
	TargetInternetGateway Target = "internet-gateway"
	TargetNATGateway      Target = "nat-gateway"
	// TargetOther is any other next hop (transit gateway, NAT instance or
	// network interface, peering, virtual private gateway, firewall
	// endpoint): it may carry traffic out, so it counts as egress.
	TargetOther Target = "other"
)

// Route is one route of a route table.
type Route struct {
	// Destination is the IPv4 CIDR; "" for a prefix list or IPv6.
	Destination string
	Target      Target
	// TargetID is the ID of the gateway or hop.
	TargetID string
	// Origin is where the route is declared when it is a resource of its
	// own (aws_route, AWS::EC2::Route); zero when inline.
	Origin Origin
}

// Endpoint is a VPC endpoint.
type Endpoint struct {
	Origin
	ID, VPC string
	// Service is the service name, e.g. com.amazonaws.us-east-1.ecr.dkr.
	Service string
	// RouteTables are those of a Gateway endpoint, Subnets those of an
	// Interface endpoint.
	RouteTables, Subnets []string
}

// Role is an IAM role.
type Role struct {
	Origin
	Name, ARN string
	// Trust is the assume-role policy document, JSON; "" when unknown.
	Trust string
	// Policies are the ARNs of the managed policies attached.
	Policies []string
	// InlinePolicies are the names of the role's inline policies.
	InlinePolicies []string
	// PoliciesKnown is false when the source cannot tell which policies
	// the role has.
	PoliciesKnown bool
}

// Profile is a Fargate profile with where it is declared.
type Profile struct {
	Origin
	fargate.Profile
}

// NodeGroup is EC2 capacity of the cluster.
type NodeGroup struct {
	Origin
	Name string
	// DesiredSize is -1 when unknown; 0 is a node group scaled to nothing.
	DesiredSize int
}

// VPCByID returns the VPC with ID id.
func (f *Foundation) VPCByID(id string) (*VPC, bool) {
	return find(f.VPCs, func(v *VPC) bool { return v.ID == id })
}

// SubnetByID returns the subnet with ID id.
func (f *Foundation) SubnetByID(id string) (*Subnet, bool) {
	return find(f.Subnets, func(s *Subnet) bool { return s.ID == id })
}

// ProfileByName returns the Fargate profile named name.
func (f *Foundation) ProfileByName(name string) (*Profile, bool) {
	return find(f.Profiles, func(p *Profile) bool { return p.Name == name })
}

// Role returns the role an ARN names: by ARN, or by the name at its end
// (roles of a plan have unknown ARNs but known names).
func (f *Foundation) Role(arn string) (*Role, bool) {
	if r, ok := find(f.Roles, func(r *Role) bool { return r.ARN != "" && r.ARN == arn }); ok {
		return r, true
	}
	name := RoleName(arn)
	return find(f.Roles, func(r *Role) bool { return name != "" && r.Name == name })
}

// HasCapacity reports whether the cluster has EC2 nodes a pod can go to: a
// node group whose desired size is not 0 (unknown counts).
func (f *Foundation) HasCapacity() bool {
	return slices.ContainsFunc(f.NodeGroups, func(ng NodeGroup) bool { return ng.DesiredSize != 0 })
}

// RoleName is the name of the role an IAM role ARN names (its last path
// element), "" when arn is not a role ARN.
func RoleName(arn string) string {
	_, rest, ok := strings.Cut(arn, ":role/")
	if !ok {
		return ""
	}
	return rest[strings.LastIndex(rest, "/")+1:]
}

func find[T any](list []T, ok func(*T) bool) (*T, bool) {
	for i := range list {
		if ok(&list[i]) {
			return &list[i], true
		}
	}
	return nil, false
}

// Origins returns the origin of every resource of f, for the gatherers
// that complete them.
func (f *Foundation) Origins() []*Origin {
	out := []*Origin{&f.Cluster.Origin}
	for i := range f.VPCs {
		out = append(out, &f.VPCs[i].Origin)
	}
	for i := range f.Subnets {
		out = append(out, &f.Subnets[i].Origin)
	}
	for i := range f.RouteTables {
		out = append(out, &f.RouteTables[i].Origin)
		for j := range f.RouteTables[i].Routes {
			if r := &f.RouteTables[i].Routes[j]; r.Origin.Ref.Name != "" {
				out = append(out, &r.Origin)
			}
		}
	}
	for i := range f.Endpoints {
		out = append(out, &f.Endpoints[i].Origin)
	}
	for i := range f.Roles {
		out = append(out, &f.Roles[i].Origin)
	}
	for i := range f.Profiles {
		out = append(out, &f.Profiles[i].Origin)
	}
	for i := range f.NodeGroups {
		out = append(out, &f.NodeGroups[i].Origin)
	}
	return out
}

// SetFile sets the file of every origin that has none: gatherers that read
// one file name resources, their caller the file.
func (f *Foundation) SetFile(file string) {
	for _, o := range f.Origins() {
		if o.Source.File == "" {
			o.Source.File = file
		}
	}
}

// Add adds what g says to f: several sources (a Terraform state for the
// network, an eksctl ClusterConfig for the cluster) describe one cluster.
// The first cluster named wins.
func (f *Foundation) Add(g *Foundation) {
	if f.Cluster.Name == "" && f.Cluster.VPC == "" {
		f.Cluster = g.Cluster
	}
	f.VPCs = append(f.VPCs, g.VPCs...)
	f.Subnets = append(f.Subnets, g.Subnets...)
	f.RouteTables = append(f.RouteTables, g.RouteTables...)
	f.Endpoints = append(f.Endpoints, g.Endpoints...)
	f.Roles = append(f.Roles, g.Roles...)
	f.Profiles = append(f.Profiles, g.Profiles...)
	f.NodeGroups = append(f.NodeGroups, g.NodeGroups...)
	f.CapacityKnown = f.CapacityKnown || g.CapacityKnown
}

// RegionAccount reads the region and account of an ARN; "" for what it
// does not say.
func RegionAccount(arn string) (region, account string) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) < 6 {
		return "", ""
	}
	return parts[3], parts[4]
}
