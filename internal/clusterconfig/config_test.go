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
	if c.Timings.NodegroupDrain.Duration != 15*time.Minute || c.Timings.ClusterUpdate.Duration != 8*time.Minute || c.Timings.NodeLease.Duration != 40*time.Second {
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
		"metadata: {name: '1bad'}\n":                                                   "metadata.name",
		"vpc: {cidr: 10.0.0.0/33}\n":                                                   "vpc.cidr",
		"managedNodeGroups: [{name: ng, instanceType: x1.huge}]\n":                     "managedNodeGroups[0].instanceType",
		"fargateProfiles: [{name: eks-x, selectors: [{namespace: a}]}]\n":              "fargateProfiles[0].name: \"eks-x\" starts with the reserved prefix",
		"fargateProfiles: [{name: x}]\n":                                               "fargateProfiles[0].selectors: is empty: at least one selector is required",
		"fargateProfiles: [{name: x, selectors: [{namespace: a}], subnets: [nope]}]\n": "fargateProfiles[0].subnets",
		"availabilityZones: [us-east-1a, us-west-2b]\n":                                "availabilityZones[1]: \"us-west-2b\" is not an AZ of region us-east-1",
		"timings: {preset: slow}\n":                                                    "timings.preset",
		"timings: {nodeLease: 1500ms}\n":                                               "timings.nodeLease: 1.5s is not whole seconds of at least 4s",
		"timings: {profileCreate: soon}\n":                                             "duration",
		"colour: blue\n":                                                               "unknown field",
		"vpc: {cidr: 10.0.0.0/16, subnets: {private: {us-east-1a: {id: s, cidr: 192.168.0.0/24}}}}\n": "not inside the VPC",
		"vpc: {subnets: {private: {us-east-1a: {id: s, cidr: 10.0.0.0/29}}}}\n":                       "10.0.0.0/29 is not an IPv4 block from /16 to /28",
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

// TestIAMValidation: each wrong field of the iam section is named, and
// what is right next to it is accepted.
func TestIAMValidation(t *testing.T) {
	const trust = `'{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"eks-fargate-pods.amazonaws.com"},"Action":"sts:AssumeRole"}]}'`
	tests := []struct {
		name string
		yaml string
		want string // "" when valid
	}{
		{"trust policy that is not JSON", "iam: {roles: [{name: r, trustPolicy: '{\"Statement\": ['}]}\n",
			"iam.roles[0].trustPolicy: is not a JSON policy document"},
		{"trust policy that is a JSON string", "iam: {roles: [{name: r, trustPolicy: '\"sts:AssumeRole\"'}]}\n",
			"iam.roles[0].trustPolicy: is not a JSON policy document"},
		{"trust policy without a Statement", "iam: {roles: [{name: r, trustPolicy: '{\"Version\": \"2012-10-17\"}'}]}\n",
			"iam.roles[0].trustPolicy: has no Statement"},
		{"valid trust policy", "iam: {roles: [{name: r, trustPolicy: " + trust + "}]}\n", ""},
		{"no trust policy", "iam: {roles: [{name: r}]}\n", ""},
		{"role name with a path", "iam: {roles: [{name: ok}, {name: eks/pods}]}\n",
			`iam.roles[1].name: "eks/pods" is not a valid role name`},
		{"role name too long", "iam: {roles: [{name: " + strings.Repeat("r", 65) + "}]}\n", "iam.roles[0].name: \"rrrr"},
		{"role name of 64 characters", "iam: {roles: [{name: " + strings.Repeat("r", 64) + "}]}\n", ""},
		{"role name with IAM's punctuation", "iam: {roles: [{name: 'a+b=c,d.e@f_g-h'}]}\n", ""},
		{"empty role name", "iam: {roles: [{trustPolicy: " + trust + "}]}\n", `iam.roles[0].name: "" is not a valid role name`},
		{"duplicate role names", "iam: {roles: [{name: pods}, {name: other}, {name: pods}]}\n",
			`iam.roles[2].name: "pods" is the name of another role`},
		{"duplicate role names but for case", "iam: {roles: [{name: Pods}, {name: pods}]}\n",
			`iam.roles[1].name: "pods" is the name of another role`},
		{"the default role's name", "iam: {roles: [{name: AmazonEKSFargatePodExecutionRole}]}\n", ""},
		{"attached policy that is not an ARN", "iam: {roles: [{name: r, attachedPolicies: [AmazonEKSFargatePodExecutionRolePolicy]}]}\n",
			`iam.roles[0].attachedPolicies[0]: "AmazonEKSFargatePodExecutionRolePolicy" is not a managed policy ARN`},
		{"attached role ARN", "iam: {roles: [{name: r, attachedPolicies: ['arn:aws:iam::111122223333:role/r']}]}\n",
			`iam.roles[0].attachedPolicies[0]: "arn:aws:iam::111122223333:role/r"`},
		{"attached twice", "iam: {roles: [{name: r, attachedPolicies: [" + PodExecutionPolicyARN + ", " + PodExecutionPolicyARN + "]}]}\n",
			`iam.roles[0].attachedPolicies[1]: "` + PodExecutionPolicyARN + `" is attached twice`},
		{"attached policies with paths, AWS's and the account's", "iam: {roles: [{name: r, attachedPolicies: [" + PodExecutionPolicyARN +
			", 'arn:aws:iam::aws:policy/service-role/AmazonEC2RoleforSSM', 'arn:aws:iam::111122223333:policy/pods/ecr-pull']}]}\n", ""},
		{"inline policies", "iam: {roles: [{name: r, inlinePolicies: [ecr-pull, logs.write]}]}\n", ""},
		{"inline policy name with a space", "iam: {roles: [{name: r, inlinePolicies: [ecr pull]}]}\n",
			`iam.roles[0].inlinePolicies[0]: "ecr pull" is not a valid policy name`},
		{"inline policy twice", "iam: {roles: [{name: r, inlinePolicies: [ecr, ecr]}]}\n", `iam.roles[0].inlinePolicies[1]: "ecr" is there twice`},
		{"unknown field", "iam: {roles: [{name: r, trust: x}]}\n", "unknown field"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Parse: %v, want no error", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Parse = %v, want an error naming %q", err, tt.want)
			}
		})
	}
}

// TestRoles: the roles the emulator's IAM serves.
func TestRoles(t *testing.T) {
	c, err := Parse([]byte(`metadata: {name: shop, region: eu-west-1}
accountID: "444455556666"
iam:
  roles:
  - name: custom
    trustPolicy: '{"Statement": []}'
    attachedPolicies: [arn:aws:iam::aws:policy/ReadOnlyAccess]
  - name: plain
`))
	if err != nil {
		t.Fatal(err)
	}
	roles := c.Roles()
	var names []string
	for _, r := range roles {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "custom,plain,"+DefaultPodExecutionRole {
		t.Fatalf("roles %v, want the configuration's then the default pod execution role", names)
	}
	fargateTrust := `"aws:SourceArn": "arn:aws:eks:eu-west-1:444455556666:fargateprofile/shop/*"`
	if roles[0].TrustPolicy != `{"Statement": []}` || !strings.Contains(roles[1].TrustPolicy, fargateTrust) || !strings.Contains(roles[2].TrustPolicy, fargateTrust) ||
		!strings.Contains(roles[2].TrustPolicy, `"Service": "eks-fargate-pods.amazonaws.com"`) {
		t.Errorf("trust policies: the configuration's, else Fargate's for the cluster's profiles: %+v", roles)
	}
	if len(roles[1].AttachedPolicies) != 0 || len(roles[2].AttachedPolicies) != 1 || roles[2].AttachedPolicies[0] != PodExecutionPolicyARN {
		t.Errorf("attached policies: %+v", roles)
	}
	if err := checkPolicyDocument(c.FargateTrustPolicy()); err != nil {
		t.Errorf("the Fargate trust policy %v", err)
	}
	if got := c.RoleARN("plain"); got != "arn:aws:iam::444455556666:role/plain" {
		t.Errorf("RoleARN = %q", got)
	}
	c.IAM.Roles = []Role{{Name: "amazoneksfargatepodexecutionrole"}}
	if got := c.Roles(); len(got) != 1 {
		t.Errorf("a role of the default's name (but for case) replaces it: %+v", got)
	}
}

// TestFargateScheduler: the event names the profile's subnets, in the
// default wording or the configuration's; an address release delay of 0s
// is kept, not taken for unset.
func TestFargateScheduler(t *testing.T) {
	c := Default()
	if got := c.SubnetFullMessage([]string{"subnet-a", "subnet-b"}); got != "InsufficientFreeAddressesInSubnet: no free IP address for the pod's network interface in subnets subnet-a, subnet-b" {
		t.Errorf("default message %q", got)
	}
	if d := c.ReleaseDelay(); d != DefaultAddressReleaseDelay {
		t.Errorf("default release delay %v", d)
	}
	c, err := Parse([]byte("fargateScheduler: {subnetFullMessage: 'full: {subnets}', addressReleaseDelay: 0s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.SubnetFullMessage([]string{"subnet-a"}); got != "full: subnet-a" || c.ReleaseDelay() != 0 {
		t.Errorf("configured message %q, release delay %v", got, c.ReleaseDelay())
	}
}
