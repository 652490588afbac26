package clusterconfig

import (
	"strings"
	"testing"
	"time"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

func TestDefault(t *testing.T) {
	c := Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.PrivateSubnetIDs(); len(got) != 3 {
		t.Errorf("private subnets %v", got)
	}
	if az, ok := c.SubnetAZ("subnet-private2"); !ok || az != "us-east-1b" {
		t.Errorf("SubnetAZ = %q, %v", az, ok)
	}
	if !c.DNSHostnames() || c.Timings.ProfileCreate.Duration != 2*time.Second {
		t.Errorf("defaults: dns %v timings %+v", c.DNSHostnames(), c.Timings)
	}
}

func TestParse(t *testing.T) {
	c, err := Parse([]byte(`metadata: {name: shop, region: eu-west-1}
vpc: {enableDnsHostnames: false}
managedNodeGroups: [{name: ng}]
fargateProfiles: [{name: apps, selectors: [{namespace: apps}]}]
timings: {preset: realistic, profileCreate: 10s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.AvailabilityZones[0] != "eu-west-1a" || c.DNSHostnames() || c.NodeGroups[0].KubeletVersion != "1.35" {
		t.Errorf("config %+v", c)
	}
	if c.Timings.ProfileCreate.Duration != 10*time.Second || c.Timings.ProfileDelete.Duration != 5*time.Minute {
		t.Errorf("timings %+v: explicit fields win over the preset", c.Timings)
	}
	if ng := c.NodeGroups[0]; ng.MaxSize != 2 || ng.ReleaseVersion != "1.35.0-"+ReleaseDate {
		t.Errorf("node group defaults: maxSize %d release %s", ng.MaxSize, ng.ReleaseVersion)
	}
	if c.Timings.NodegroupDrain.Duration != 15*time.Minute || c.Timings.ClusterUpdate.Duration != 8*time.Minute {
		t.Errorf("realistic upgrade timings %+v", c.Timings)
	}
	if len(c.FargateProfiles[0].Subnets) != 3 {
		t.Errorf("profile subnets default to the private subnets: %v", c.FargateProfiles[0].Subnets)
	}
	if !c.NATGateway("eu-west-1a") {
		t.Error("a private subnet routes to the NAT gateway of its AZ's public subnet by default")
	}
	c, err = Parse([]byte(`vpc:
  subnets:
    private: {us-east-1a: {id: p1, cidr: 10.0.0.0/24, nat: false}, us-east-1b: {id: p2, cidr: 10.0.1.0/24}}
    public: {us-east-1a: {id: u1, cidr: 10.0.2.0/24}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.NATGateway("us-east-1a") || c.NATGateway("us-east-1b") {
		t.Error("NAT routes: nat false, or no public subnet for the NAT gateway: want none")
	}
}

func TestParseErrors(t *testing.T) {
	for data, want := range map[string]string{
		"metadata: {name: '1bad'}\n":                                                                  "metadata.name",
		"vpc: {cidr: 10.0.0.0/33}\n":                                                                  "vpc.cidr",
		"managedNodeGroups: [{name: ng, instanceType: x1.huge}]\n":                                    "managedNodeGroups[0].instanceType",
		"fargateProfiles: [{name: eks-x, selectors: [{namespace: a}]}]\n":                             "fargateProfiles[0].name: \"eks-x\" starts with the reserved prefix",
		"fargateProfiles: [{name: x}]\n":                                                              "fargateProfiles[0].selectors: is empty: at least one selector is required",
		"fargateProfiles: [{name: x, selectors: [{namespace: a}], subnets: [nope]}]\n":                "fargateProfiles[0].subnets",
		"availabilityZones: [us-east-1a, us-west-2b]\n":                                               "availabilityZones[1]: \"us-west-2b\" is not an AZ of region us-east-1",
		"timings: {preset: slow}\n":                                                                   "timings.preset",
		"timings: {profileCreate: soon}\n":                                                            "duration",
		"colour: blue\n":                                                                              "unknown field",
		"vpc: {cidr: 10.0.0.0/16, subnets: {private: {us-east-1a: {id: s, cidr: 192.168.0.0/24}}}}\n": "not inside the VPC",
		"managedNodeGroups: [{name: ng, desiredCapacity: 3, maxSize: 2}]\n":                           "managedNodeGroups[0]: minSize 0, desiredCapacity 3 and maxSize 2 must be",
		"managedNodeGroups: [{name: ng, kubeletVersion: '1.34', releaseVersion: 1.35.0-20261101}]\n":  `managedNodeGroups[0].releaseVersion: "1.35.0-20261101" is not an AMI release of Kubernetes 1.34`,
		"managedNodeGroups: [{name: ng, releaseVersion: latest}]\n":                                   `managedNodeGroups[0].releaseVersion: "latest"`,
		"managedNodeGroups: [{name: ng}, {name: ng}]\n":                                               `managedNodeGroups[1].name: "ng" is the name of another node group`,
		"vpc: {endpoints: [s3, 'ECR API']}\n":                                                         `vpc.endpoints[1]: "ECR API" is not a service name`,
		"vpc: {endpoints: [s3, s3]}\n":                                                                `vpc.endpoints[1]: "s3"`,
		"vpc: {subnets: {private: {us-east-1a: {id: s, cidr: 10.0.0.0/24, nat: true}}}}\n":            "vpc.subnets.private.us-east-1a.nat: a NAT gateway needs a public subnet in us-east-1a",
	} {
		_, err := Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error naming %q", data, err, want)
		}
	}
}

func TestCheckLimits(t *testing.T) {
	c, err := Parse([]byte("fargateProfiles: [{name: x, selectors: [{namespace: a}, {namespace: b}, {namespace: c}]}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckLimits(fargate.DefaultLimits); err != nil {
		t.Errorf("three selectors are within the default limits: %v", err)
	}
	err = c.CheckLimits(fargate.Limits{SelectorsPerProfile: 2, ProfilesPerCluster: 0})
	if err == nil || !strings.Contains(err.Error(), "fargateProfiles[0].selectors: has 3 selectors, at most 2 are allowed") {
		t.Errorf("error %v, want the selectors quota named", err)
	}
}
