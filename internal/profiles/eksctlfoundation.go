package profiles

import (
	"cmp"
	"fmt"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// eksctlNetwork is the part of a ClusterConfig that says what eksctl builds
// around the cluster.
type eksctlNetwork struct {
	Metadata struct {
		Region string `json:"region"`
	} `json:"metadata"`
	ManagedNodeGroups []struct {
		DesiredCapacity *int `json:"desiredCapacity"`
	} `json:"managedNodeGroups"`
	NodeGroups []struct {
		DesiredCapacity *int `json:"desiredCapacity"`
	} `json:"nodeGroups"`
	Karpenter      *struct{} `json:"karpenter"`
	AutoModeConfig struct {
		Enabled *bool `json:"enabled"`
	} `json:"autoModeConfig"`
	VPC struct {
		ID      string `json:"id"`
		Subnets *struct {
			Private map[string]struct{} `json:"private"`
		} `json:"subnets"`
		NAT struct {
			Gateway string `json:"gateway"`
		} `json:"nat"`
	} `json:"vpc"`
	PrivateCluster struct {
		Enabled bool `json:"enabled"`
	} `json:"privateCluster"`
}

// eksctlSubnets stands for the private subnets eksctl creates, in which a
// profile that names no subnet runs.
const eksctlSubnets = "(eksctl's private subnets)"

// eksctlFoundation is what an eksctl ClusterConfig says about the cluster's
// foundation: its capacity (node groups, Karpenter, Auto Mode) and profiles,
// and, when eksctl creates the VPC, its DNS attributes (eksctl enables both)
// and the private subnets' egress (vpc.nat.gateway; the endpoints of a
// private cluster). Of a VPC it does not create, nothing is known. The
// origins point at the file's lines.
func eksctlFoundation(file string, data []byte, cc *clusterConfig, set *Set) (*foundation.Foundation, error) {
	var n eksctlNetwork
	if err := yaml.Unmarshal(data, &n); err != nil {
		return nil, fmt.Errorf("eksctl ClusterConfig: %w", err)
	}
	var obj *object.Object
	manifest.Parse(file, data, func(o *object.Object) {
		if obj == nil && o.Ref.Kind == "ClusterConfig" {
			obj = o
		}
	}, func(manifest.Error) {})
	at := func(path string) foundation.Origin {
		o := foundation.Origin{Ref: object.Ref{APIVersion: "eksctl.io/v1alpha5", Kind: "ClusterConfig", Name: cc.Metadata.Name}, Source: object.Source{File: file}}
		if obj != nil {
			o.Source.Line = obj.Line(path)
		}
		return o
	}
	f := &foundation.Foundation{Cluster: foundation.Cluster{Origin: at("metadata.name"), Name: cc.Metadata.Name, Region: n.Metadata.Region}, CapacityKnown: true}
	desired := func(d *int) int {
		if d == nil {
			return -1 // eksctl's default (2), or scaled by hand: capacity either way
		}
		return *d
	}
	for i, ng := range n.ManagedNodeGroups {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: at(fmt.Sprintf("managedNodeGroups[%d]", i)), Name: cc.ManagedNodeGroups[i].Name, DesiredSize: desired(ng.DesiredCapacity)})
	}
	for i, ng := range n.NodeGroups {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: at(fmt.Sprintf("nodeGroups[%d]", i)), DesiredSize: desired(ng.DesiredCapacity)})
	}
	if n.Karpenter != nil {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: at("karpenter"), Name: "Karpenter", DesiredSize: -1})
	}
	if e := n.AutoModeConfig.Enabled; e != nil && *e {
		f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: at("autoModeConfig"), Name: "EKS Auto Mode", DesiredSize: -1})
	}
	created := n.VPC.ID == "" && n.VPC.Subnets == nil
	for _, p := range set.Profiles {
		i := slices.IndexFunc(cc.FargateProfiles, func(q eksctlProfile) bool { return q.Name == p.Name })
		fp := foundation.Profile{Origin: at(fmt.Sprintf("fargateProfiles[%d]", i)), Profile: p}
		if len(fp.Subnets) == 0 && created {
			fp.Subnets = []string{eksctlSubnets}
		}
		f.Profiles = append(f.Profiles, fp)
	}
	if created {
		on := true
		f.VPCs = []foundation.VPC{{Origin: at("vpc"), ID: "(eksctl's VPC)", DNSSupport: &on, DNSHostnames: &on}}
		f.Cluster.VPC = f.VPCs[0].ID
		f.Subnets = []foundation.Subnet{{Origin: at("vpc.nat.gateway"), ID: eksctlSubnets, VPC: f.Cluster.VPC}}
		rt := foundation.RouteTable{Origin: at("vpc.nat"), ID: "(eksctl's private route tables)", VPC: f.Cluster.VPC, Subnets: []string{eksctlSubnets}}
		if n.VPC.NAT.Gateway != "Disable" {
			rt.Routes = []foundation.Route{{Destination: foundation.DefaultRoute, Target: foundation.TargetNATGateway, TargetID: "vpc.nat.gateway: " + cmp.Or(n.VPC.NAT.Gateway, "Single")}}
		}
		f.RouteTables = []foundation.RouteTable{rt}
		if n.PrivateCluster.Enabled { // eksctl creates the endpoints a private cluster needs
			for _, svc := range []string{"ecr.api", "ecr.dkr", "s3"} {
				f.Endpoints = append(f.Endpoints, foundation.Endpoint{Origin: at("privateCluster"), VPC: f.Cluster.VPC,
					Service: svc, RouteTables: []string{rt.ID}})
			}
		}
	}
	return f, nil
}
