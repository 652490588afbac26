// Package clusterconfig reads a cluster configuration: a YAML file close to
// eksctl's ClusterConfig, with defaults that work without any file. The
// emulator builds its cluster from it, and check and plan read its Fargate
// profiles through internal/profiles, so it sits with the other inputs
// rather than under the emulator.
package clusterconfig

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
)

// Kind and APIVersion of the configuration file.
const (
	APIVersion = "fargatekit.io/v1alpha1"
	Kind       = "EmulatorConfig"
)

// Config is an emulated EKS cluster.
type Config struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	// KubernetesVersion is the cluster's minor version, "1.35".
	KubernetesVersion string `json:"kubernetesVersion"`
	// AccountID is the AWS account of ARNs.
	AccountID string `json:"accountID"`
	// AvailabilityZones of the cluster, in the region.
	AvailabilityZones []string    `json:"availabilityZones"`
	VPC               VPC         `json:"vpc"`
	NodeGroups        []NodeGroup `json:"managedNodeGroups"`
	// FargateProfiles are ACTIVE when the emulator first starts.
	FargateProfiles []Profile `json:"fargateProfiles"`
	Timings         Timings   `json:"timings"`
	// FargateScheduler is how fargate-scheduler behaves where AWS does not
	// say.
	FargateScheduler FargateScheduler `json:"fargateScheduler"`
	// IAM is the account's IAM roles, which the emulator's IAM API serves.
	IAM IAM `json:"iam"`
	// Seed makes fargate-scheduler's random choices repeatable; 0 picks one.
	Seed int64 `json:"seed"`
}

// Metadata names the cluster.
type Metadata struct {
	Name   string `json:"name"`
	Region string `json:"region"`
}

// VPC is the cluster's network.
type VPC struct {
	ID   string `json:"id"`
	CIDR string `json:"cidr"`
	// EnableDNSHostnames off makes every Fargate node "fargate-null", so that
	// only one Fargate pod runs.
	EnableDNSHostnames *bool   `json:"enableDnsHostnames"`
	Subnets            Subnets `json:"subnets"`
	// Endpoints are the VPC's endpoints by service, as in
	// com.amazonaws.REGION.SERVICE: "ecr.api", "ecr.dkr", "s3" (a gateway
	// endpoint), "sts"...
	Endpoints []string `json:"endpoints,omitempty"`
}

// NATGateway reports whether the private subnet of az routes to a NAT
// gateway, which is in the AZ's public subnet: when there is one, unless the
// private subnet's nat is false.
func (c *Config) NATGateway(az string) bool {
	s, private := c.VPC.Subnets.Private[az]
	_, public := c.VPC.Subnets.Public[az]
	return private && public && (s.NAT == nil || *s.NAT)
}

// NATGatewayID is the ID of the NAT gateway of az (in its public subnet).
func NATGatewayID(az string) string { return "nat-0emulator" + az[len(az)-1:] }

// PrivateRouteTableID is the ID of the route table of az's private subnet.
func PrivateRouteTableID(az string) string { return "rtb-0private" + az[len(az)-1:] }

// Subnets are the VPC's subnets by kind and AZ.
type Subnets struct {
	Private map[string]Subnet `json:"private"`
	Public  map[string]Subnet `json:"public"`
}

// Subnet is one subnet of an AZ.
type Subnet struct {
	ID   string `json:"id"`
	CIDR string `json:"cidr"`
	// NAT says whether the private subnet routes to a NAT gateway of its AZ
	// (image pulls from outside the VPC need one), which is in the AZ's
	// public subnet; default: when the AZ has a public subnet (NATGateway).
	NAT *bool `json:"nat,omitempty"`
}

// NodeGroup is a managed node group of EC2 nodes.
type NodeGroup struct {
	Name              string   `json:"name"`
	AvailabilityZones []string `json:"availabilityZones"`
	DesiredCapacity   int      `json:"desiredCapacity"`
	InstanceType      string   `json:"instanceType"`
	// MinSize and MaxSize bound DesiredCapacity (UpdateNodegroupConfig);
	// MaxSize defaults to DesiredCapacity.
	MinSize int `json:"minSize"`
	MaxSize int `json:"maxSize"`
	// KubeletVersion defaults to the cluster's version.
	KubeletVersion string `json:"kubeletVersion"`
	// ReleaseVersion is the AMI release, "1.35.0-20261101"; it defaults to
	// the newest of KubeletVersion (LatestRelease).
	ReleaseVersion string `json:"releaseVersion"`
}

// ReleaseDate is the date of every Kubernetes version's newest AMI release
// in the emulator: EKS publishes a release about every two weeks, and the
// emulator knows one per version.
const ReleaseDate = "20261101"

// LatestRelease is the newest AMI release of a Kubernetes minor version in
// the emulator, "1.35.0-20261101": EKS accepts only the newest release of a
// version for managed node groups.
func LatestRelease(minor string) string { return minor + ".0-" + ReleaseDate }

// releaseRE is the form of an AMI release version: the Kubernetes version
// with its patch, a dash and the build date.
var releaseRE = regexp.MustCompile(`^(1\.[0-9]+)\.[0-9]+-[0-9]{8}$`)

// ReleaseMinor returns the Kubernetes minor version of an AMI release
// version, and whether it has the form of one.
func ReleaseMinor(release string) (string, bool) {
	m := releaseRE.FindStringSubmatch(release)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Profile is a Fargate profile of the configuration.
type Profile struct {
	Name      string             `json:"name"`
	Selectors []fargate.Selector `json:"selectors"`
	// Subnets are subnet IDs; default: every private subnet.
	Subnets []string `json:"subnets"`
}

// Profile returns the profile the configuration declares, as the domain
// knows profiles (subnets filled in by the defaults).
func (p Profile) Profile() fargate.Profile {
	return fargate.Profile{Name: p.Name, Selectors: p.Selectors, Subnets: p.Subnets}
}

// IAM is the IAM section of the configuration.
type IAM struct {
	// Roles are the account's roles; the role DefaultPodExecutionRole is
	// there too unless one of them has its name (Config.Roles).
	Roles []Role `json:"roles,omitempty"`
}

// Role is an IAM role of the configuration.
type Role struct {
	// Name is the role's name; its path is /.
	Name string `json:"name"`
	// TrustPolicy is the role's trust (assume-role) policy, a JSON document;
	// default: FargateTrustPolicy.
	TrustPolicy string `json:"trustPolicy,omitempty"`
	// AttachedPolicies are the ARNs of the managed policies attached to the
	// role.
	AttachedPolicies []string `json:"attachedPolicies,omitempty"`
	// InlinePolicies are the names of the role's inline policies (their
	// documents are not modelled: one may grant what a pod execution role
	// needs).
	InlinePolicies []string `json:"inlinePolicies,omitempty"`
}

// DefaultPodExecutionRole is the name of the pod execution role of the
// configuration's profiles, which have no field for it. It always exists
// in the emulator's IAM (Config.Roles).
const DefaultPodExecutionRole = "AmazonEKSFargatePodExecutionRole"

// PodExecutionPolicyARN is the AWS managed policy a pod execution role
// needs, attached to DefaultPodExecutionRole.
const PodExecutionPolicyARN = "arn:aws:iam::aws:policy/" + foundation.PodExecutionPolicy

// FargateTrustPolicy is the trust policy EKS's user guide gives a pod
// execution role: foundation.FargatePrincipal may assume it for the
// profiles of the cluster (the aws:SourceArn condition).
func (c *Config) FargateTrustPolicy() string {
	return fmt.Sprintf(`{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Condition": {
        "ArnLike": {
          "aws:SourceArn": "arn:aws:eks:%s:%s:fargateprofile/%s/*"
        }
      },
      "Principal": {
        "Service": %q
      },
      "Action": "sts:AssumeRole"
    }
  ]
}`, c.Metadata.Region, c.AccountID, c.Metadata.Name, foundation.FargatePrincipal)
}

// Roles returns the account's roles as the emulator's IAM serves them:
// those of the configuration, each without a trust policy given
// FargateTrustPolicy, then DefaultPodExecutionRole (the Fargate trust
// policy, PodExecutionPolicyARN attached) unless the configuration has a
// role of that name (IAM's names ignore case).
func (c *Config) Roles() []Role {
	out := make([]Role, 0, len(c.IAM.Roles)+1)
	for _, r := range c.IAM.Roles {
		if r.TrustPolicy == "" {
			r.TrustPolicy = c.FargateTrustPolicy()
		}
		r.AttachedPolicies, r.InlinePolicies = slices.Clone(r.AttachedPolicies), slices.Clone(r.InlinePolicies)
		out = append(out, r)
	}
	if !slices.ContainsFunc(out, func(r Role) bool { return strings.EqualFold(r.Name, DefaultPodExecutionRole) }) {
		out = append(out, Role{Name: DefaultPodExecutionRole, TrustPolicy: c.FargateTrustPolicy(), AttachedPolicies: []string{PodExecutionPolicyARN}})
	}
	return out
}

// RoleARN is the ARN of the account's role name.
func (c *Config) RoleARN(name string) string {
	return fmt.Sprintf("arn:aws:iam::%s:role/%s", c.AccountID, name)
}

// roleName is what IAM accepts as a role name (without a path).
var roleName = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)

// ValidRoleName reports whether IAM accepts name as a role name: 1 to 64
// letters, digits and +=,.@_-.
func ValidRoleName(name string) bool { return roleName.MatchString(name) }

// policyARN is the ARN of a managed policy, AWS's or the account's, with
// an optional path.
var policyARN = regexp.MustCompile(`^arn:aws[a-z-]*:iam::(aws|[0-9]{12}):policy/([\x21-\x7e]+/)*[\w+=,.@-]{1,128}$`)

// Timings are how long emulated AWS operations take.
type Timings struct {
	// Preset is "fast" (the default) or "realistic"; fields set explicitly win.
	Preset          string   `json:"preset"`
	ProfileCreate   Duration `json:"profileCreate"`
	ProfileDelete   Duration `json:"profileDelete"`
	FargatePodStart Duration `json:"fargatePodStart"`
	// ClusterUpdate is how long a control-plane version update takes.
	ClusterUpdate Duration `json:"clusterUpdate"`
	// NodegroupCreate and NodegroupDelete are how long a node group takes to
	// become ACTIVE and to disappear.
	NodegroupCreate Duration `json:"nodegroupCreate"`
	NodegroupDelete Duration `json:"nodegroupDelete"`
	// NodegroupDrain is how long a node group update keeps evicting a
	// node's pods before it fails with PodEvictionFailure (15 minutes on
	// EKS).
	NodegroupDrain Duration `json:"nodegroupDrain"`
	// NodeLease is how long a node's Lease lasts: KWOK renews it every
	// quarter of that, and the controller-manager marks a node NotReady
	// once it has gone unrenewed for a quarter more (node-monitor-grace-period),
	// as Kubernetes' defaults do for the kubelet's 40 s. The fast timings
	// keep kwokctl's 200 s, which spares the API server the renewals of
	// thousands of Fargate nodes; an AZ outage then shows after about four
	// minutes.
	NodeLease Duration `json:"nodeLease"`
}

// FargateScheduler is what fargate-scheduler does when no subnet of a pod's
// profile has a free address for the pod's ENI: AWS documents neither its
// event nor how soon an address frees.
type FargateScheduler struct {
	// SubnetFullMessage is its FailedScheduling event's message; {subnets}
	// stands for the profile's subnets. Default DefaultSubnetFullMessage.
	SubnetFullMessage string `json:"subnetFullMessage,omitempty"`
	// AddressReleaseDelay is how long a pod's address stays taken after its
	// node is gone (the ENI being deleted); the pods waiting for an address
	// are placed as soon as it frees. Default DefaultAddressReleaseDelay.
	AddressReleaseDelay *Duration `json:"addressReleaseDelay,omitempty"`
}

// DefaultAddressReleaseDelay is the default of
// FargateScheduler.AddressReleaseDelay. It also lets KWOK see a node gone
// before a node of the same name (at the same address) replaces it.
const DefaultAddressReleaseDelay = 5 * time.Second

// ReleaseDelay is FargateScheduler.AddressReleaseDelay, or its default.
func (c *Config) ReleaseDelay() time.Duration {
	if d := c.FargateScheduler.AddressReleaseDelay; d != nil {
		return d.Duration
	}
	return DefaultAddressReleaseDelay
}

// DefaultSubnetFullMessage words the event after EC2's error for an ENI in a
// full subnet (InsufficientFreeAddressesInSubnet); unconfirmed for Fargate.
const DefaultSubnetFullMessage = "InsufficientFreeAddressesInSubnet: no free IP address for the pod's network interface in subnets {subnets}"

// SubnetFullMessage is the event of a pod that found no free address in
// subnets.
func (c *Config) SubnetFullMessage(subnets []string) string {
	return strings.ReplaceAll(cmp.Or(c.FargateScheduler.SubnetFullMessage, DefaultSubnetFullMessage), "{subnets}", strings.Join(subnets, ", "))
}

// Duration is a time.Duration written as "90s" or "3m".
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "" || s == "null" {
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %s: %w", b, err)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// Presets of Timings.
var (
	Fast = Timings{
		Preset: "fast", ProfileCreate: Duration{2 * time.Second}, ProfileDelete: Duration{2 * time.Second},
		ClusterUpdate: Duration{3 * time.Second}, NodegroupCreate: Duration{2 * time.Second}, NodegroupDelete: Duration{2 * time.Second},
		NodegroupDrain: Duration{10 * time.Second}, NodeLease: Duration{200 * time.Second},
	}
	Realistic = Timings{
		Preset: "realistic", ProfileCreate: Duration{3 * time.Minute}, ProfileDelete: Duration{5 * time.Minute}, FargatePodStart: Duration{45 * time.Second},
		ClusterUpdate: Duration{8 * time.Minute}, NodegroupCreate: Duration{3 * time.Minute}, NodegroupDelete: Duration{4 * time.Minute},
		NodegroupDrain: Duration{15 * time.Minute}, NodeLease: Duration{40 * time.Second},
	}
)

// ClusterARN is the cluster's ARN.
func (c *Config) ClusterARN() string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", c.Metadata.Region, c.AccountID, c.Metadata.Name)
}

// DNSHostnames reports whether the VPC gives instances DNS hostnames.
func (c *Config) DNSHostnames() bool {
	return c.VPC.EnableDNSHostnames == nil || *c.VPC.EnableDNSHostnames
}

// PrivateSubnetIDs lists the private subnets' IDs in AZ order.
func (c *Config) PrivateSubnetIDs() []string {
	var out []string
	for _, az := range c.AvailabilityZones {
		if s, ok := c.VPC.Subnets.Private[az]; ok {
			out = append(out, s.ID)
		}
	}
	return out
}

// SubnetCIDRs maps every subnet's ID, private and public, to its CIDR.
func (c *Config) SubnetCIDRs() map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]Subnet{c.VPC.Subnets.Private, c.VPC.Subnets.Public} {
		for _, s := range m {
			out[s.ID] = s.CIDR
		}
	}
	return out
}

// SubnetAZ returns the AZ of a private subnet, and whether it is one.
func (c *Config) SubnetAZ(id string) (string, bool) {
	for az, s := range c.VPC.Subnets.Private {
		if s.ID == id {
			return az, true
		}
	}
	return "", false
}

// Default returns the configuration used without a file: one cluster in
// us-east-1 over three AZs, a private and a public subnet per AZ, no node
// groups, no profiles, fast timings.
func Default() *Config {
	c := &Config{}
	c.setDefaults()
	return c
}

// Load reads a configuration file; an empty path gives Default.
func Load(path string) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the emulator config: %w", err)
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("emulator config %s: %w", path, err)
	}
	return c, nil
}

// Parse reads a configuration, fills in defaults and validates it.
func Parse(data []byte) (*Config, error) {
	c := &Config{}
	if err := yaml.UnmarshalStrict(data, c); err != nil {
		return nil, err
	}
	c.setDefaults()
	return c, c.Validate()
}

func (c *Config) setDefaults() {
	c.APIVersion, c.Kind = APIVersion, Kind
	if c.Metadata.Name == "" {
		c.Metadata.Name = "fargatekit"
	}
	if c.Metadata.Region == "" {
		c.Metadata.Region = fargate.DefaultRegion
	}
	if c.KubernetesVersion == "" {
		c.KubernetesVersion = "1.35"
	}
	if c.AccountID == "" {
		c.AccountID = "111122223333"
	}
	if len(c.AvailabilityZones) == 0 {
		for _, s := range []string{"a", "b", "c"} {
			c.AvailabilityZones = append(c.AvailabilityZones, c.Metadata.Region+s)
		}
	}
	if c.VPC.ID == "" {
		c.VPC.ID = "vpc-0fa76a7e0000emu"
	}
	if c.VPC.CIDR == "" {
		c.VPC.CIDR = "10.0.0.0/16"
	}
	if c.VPC.Subnets.Private == nil && c.VPC.Subnets.Public == nil {
		c.VPC.Subnets.Private, c.VPC.Subnets.Public = map[string]Subnet{}, map[string]Subnet{}
		for i, az := range c.AvailabilityZones {
			c.VPC.Subnets.Private[az] = Subnet{ID: fmt.Sprintf("subnet-private%d", i+1), CIDR: fmt.Sprintf("10.0.%d.0/19", i*32)}
			c.VPC.Subnets.Public[az] = Subnet{ID: fmt.Sprintf("subnet-public%d", i+1), CIDR: fmt.Sprintf("10.0.%d.0/22", 128+i*4)}
		}
	}
	for i := range c.NodeGroups {
		ng := &c.NodeGroups[i]
		if len(ng.AvailabilityZones) == 0 {
			ng.AvailabilityZones = c.AvailabilityZones
		}
		if ng.InstanceType == "" {
			ng.InstanceType = "m6i.large"
		}
		if ng.KubeletVersion == "" {
			ng.KubeletVersion = c.KubernetesVersion
		}
		if ng.DesiredCapacity == 0 {
			ng.DesiredCapacity = 2
		}
		if ng.MaxSize == 0 {
			ng.MaxSize = max(ng.DesiredCapacity, 1)
		}
		if ng.ReleaseVersion == "" {
			ng.ReleaseVersion = LatestRelease(ng.KubeletVersion)
		}
	}
	for i := range c.FargateProfiles {
		if len(c.FargateProfiles[i].Subnets) == 0 {
			c.FargateProfiles[i].Subnets = c.PrivateSubnetIDs()
		}
	}
	preset := Fast
	if c.Timings.Preset == "realistic" {
		preset = Realistic
	}
	if c.Timings.Preset == "" {
		c.Timings.Preset = preset.Preset
	}
	for _, f := range []struct{ field, def *Duration }{
		{&c.Timings.ProfileCreate, &preset.ProfileCreate},
		{&c.Timings.ProfileDelete, &preset.ProfileDelete},
		{&c.Timings.FargatePodStart, &preset.FargatePodStart},
		{&c.Timings.ClusterUpdate, &preset.ClusterUpdate},
		{&c.Timings.NodegroupCreate, &preset.NodegroupCreate},
		{&c.Timings.NodegroupDelete, &preset.NodegroupDelete},
		{&c.Timings.NodegroupDrain, &preset.NodegroupDrain},
		{&c.Timings.NodeLease, &preset.NodeLease},
	} {
		if f.field.Duration == 0 {
			*f.field = *f.def
		}
	}
}

// Validate names every field that is wrong.
func (c *Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if c.APIVersion != APIVersion || c.Kind != Kind {
		bad("apiVersion/kind", "must be %s %s", APIVersion, Kind)
	}
	if !validName(c.Metadata.Name) {
		bad("metadata.name", "%q is not a valid cluster name (letters, digits, - and _, starting with a letter, at most 100)", c.Metadata.Name)
	}
	if !strings.HasPrefix(c.KubernetesVersion, "1.") {
		bad("kubernetesVersion", "%q is not a Kubernetes minor version such as 1.35", c.KubernetesVersion)
	}
	for i, az := range c.AvailabilityZones {
		if suffix, ok := strings.CutPrefix(az, c.Metadata.Region); !ok || len(suffix) != 1 || suffix[0] < 'a' || suffix[0] > 'z' {
			bad(fmt.Sprintf("availabilityZones[%d]", i), "%q is not an AZ of region %s (such as %sa)", az, c.Metadata.Region, c.Metadata.Region)
		}
	}
	vpc, err := netip.ParsePrefix(c.VPC.CIDR)
	if err != nil {
		bad("vpc.cidr", "%v", err)
	}
	for kind, m := range map[string]map[string]Subnet{"private": c.VPC.Subnets.Private, "public": c.VPC.Subnets.Public} {
		for az, s := range m {
			field := fmt.Sprintf("vpc.subnets.%s.%s", kind, az)
			if !slices.Contains(c.AvailabilityZones, az) {
				bad(field, "AZ %q is not one of availabilityZones %v", az, c.AvailabilityZones)
			}
			if s.ID == "" {
				bad(field+".id", "is required")
			}
			p, err := netip.ParsePrefix(s.CIDR)
			switch {
			case err != nil:
				bad(field+".cidr", "%v", err)
			case !p.Addr().Is4() || p.Bits() < 16 || p.Bits() > 28:
				bad(field+".cidr", "%s is not an IPv4 block from /16 to /28, as AWS requires of a subnet", s.CIDR)
			case vpc.IsValid() && (!vpc.Contains(p.Addr()) || p.Bits() < vpc.Bits()):
				bad(field+".cidr", "%s is not inside the VPC's %s", s.CIDR, c.VPC.CIDR)
			}
		}
	}
	for az, s := range c.VPC.Subnets.Private {
		if _, public := c.VPC.Subnets.Public[az]; s.NAT != nil && *s.NAT && !public {
			bad(fmt.Sprintf("vpc.subnets.private.%s.nat", az), "a NAT gateway needs a public subnet in %s", az)
		}
	}
	for i, e := range c.VPC.Endpoints {
		if !endpointService.MatchString(e) || slices.Contains(c.VPC.Endpoints[:i], e) {
			bad(fmt.Sprintf("vpc.endpoints[%d]", i), "%q is not a service name such as ecr.api, ecr.dkr or s3, or is there twice", e)
		}
	}
	for i, ng := range c.NodeGroups {
		field := fmt.Sprintf("managedNodeGroups[%d]", i)
		if ng.Name == "" {
			bad(field+".name", "is required")
		}
		if _, ok := InstanceTypes[ng.InstanceType]; !ok {
			bad(field+".instanceType", "%q is not one the emulator knows (%s)", ng.InstanceType, strings.Join(instanceTypeNames(), ", "))
		}
		for _, az := range ng.AvailabilityZones {
			if !slices.Contains(c.AvailabilityZones, az) {
				bad(field+".availabilityZones", "%q is not one of availabilityZones", az)
			}
		}
		if ng.MinSize < 0 || ng.DesiredCapacity < ng.MinSize || ng.DesiredCapacity > ng.MaxSize {
			bad(field, "minSize %d, desiredCapacity %d and maxSize %d must be 0 ≤ minSize ≤ desiredCapacity ≤ maxSize", ng.MinSize, ng.DesiredCapacity, ng.MaxSize)
		}
		if m, ok := ReleaseMinor(ng.ReleaseVersion); !ok || m != ng.KubeletVersion {
			bad(field+".releaseVersion", "%q is not an AMI release of Kubernetes %s, such as %s", ng.ReleaseVersion, ng.KubeletVersion, LatestRelease(ng.KubeletVersion))
		}
		if slices.ContainsFunc(c.NodeGroups[:i], func(o NodeGroup) bool { return o.Name == ng.Name }) {
			bad(field+".name", "%q is the name of another node group", ng.Name)
		}
	}
	for i, p := range c.FargateProfiles {
		field := fmt.Sprintf("fargateProfiles[%d]", i)
		fp := p.Profile()
		for _, v := range fp.Validate(fargate.Limits{}) { // quotas: CheckLimits, with the settings' limits
			bad(field+"."+profileField(v.Field), "%s", v.Message)
		}
		for _, id := range p.Subnets {
			if _, ok := c.SubnetAZ(id); !ok {
				bad(field+".subnets", "%q is not a private subnet of the VPC", id)
			}
		}
	}
	c.validateIAM(bad)
	switch c.Timings.Preset {
	case "fast", "realistic":
	default:
		bad("timings.preset", "%q is not fast or realistic", c.Timings.Preset)
	}
	if d := c.Timings.NodeLease.Duration; d < 4*time.Second || d%time.Second != 0 {
		bad("timings.nodeLease", "%s is not whole seconds of at least 4s", d)
	}
	return errors.Join(errs...)
}

// validateIAM names what is wrong in the iam section: role names IAM
// refuses or used twice (IAM's names ignore case), trust policies that are
// not JSON policy documents, attached policies that are not policy ARNs,
// inline policy names IAM refuses.
func (c *Config) validateIAM(bad func(field, format string, args ...any)) {
	for i, r := range c.IAM.Roles {
		field := fmt.Sprintf("iam.roles[%d]", i)
		if !ValidRoleName(r.Name) {
			bad(field+".name", "%q is not a valid role name (1 to 64 letters, digits and +=,.@_-; no path)", r.Name)
		}
		if slices.ContainsFunc(c.IAM.Roles[:i], func(o Role) bool { return strings.EqualFold(o.Name, r.Name) }) {
			bad(field+".name", "%q is the name of another role (IAM role names ignore case)", r.Name)
		}
		if r.TrustPolicy != "" {
			if err := checkPolicyDocument(r.TrustPolicy); err != nil {
				bad(field+".trustPolicy", "%v", err)
			}
		}
		for j, arn := range r.AttachedPolicies {
			f := fmt.Sprintf("%s.attachedPolicies[%d]", field, j)
			if !policyARN.MatchString(arn) {
				bad(f, "%q is not a managed policy ARN such as %s", arn, PodExecutionPolicyARN)
			} else if slices.Contains(r.AttachedPolicies[:j], arn) {
				bad(f, "%q is attached twice", arn)
			}
		}
		for j, name := range r.InlinePolicies {
			f := fmt.Sprintf("%s.inlinePolicies[%d]", field, j)
			if !policyName.MatchString(name) {
				bad(f, "%q is not a valid policy name (1 to 128 letters, digits and +=,.@_-)", name)
			} else if slices.Contains(r.InlinePolicies[:j], name) {
				bad(f, "%q is there twice", name)
			}
		}
	}
}

// policyName matches the names IAM gives policies.
var policyName = regexp.MustCompile(`^[\w+=,.@-]{1,128}$`)

// checkPolicyDocument says why doc is not an IAM policy document: a JSON
// object with a Statement.
func checkPolicyDocument(doc string) error {
	var policy map[string]json.RawMessage
	if err := json.Unmarshal([]byte(doc), &policy); err != nil {
		return fmt.Errorf("is not a JSON policy document: %w", err)
	}
	if len(policy["Statement"]) == 0 {
		return errors.New("has no Statement")
	}
	return nil
}

// endpointService is the SERVICE of a VPC endpoint com.amazonaws.REGION.SERVICE.
var endpointService = regexp.MustCompile(`^[a-z0-9]+([.-][a-z0-9]+)*$`)

// profileField names a profile field as this file does.
func profileField(apiField string) string {
	return strings.Replace(apiField, "fargateProfileName", "name", 1)
}

// CheckLimits names what exceeds EKS's quotas on profiles (the settings'
// limits): EKS would refuse to create such profiles.
func (c *Config) CheckLimits(l fargate.Limits) error {
	var errs []error
	for _, v := range fargate.ValidateCluster(c.profiles(), l) {
		errs = append(errs, fmt.Errorf("%s: %s (limits.profilesPerCluster in the settings)", v.Field, v.Message))
	}
	for i, p := range c.FargateProfiles {
		fp := p.Profile()
		for _, v := range fp.Validate(l).Quotas() {
			errs = append(errs, fmt.Errorf("fargateProfiles[%d].%s: %s (a quota of the settings' limits)", i, profileField(v.Field), v.Message))
		}
	}
	return errors.Join(errs...)
}

func (c *Config) profiles() []fargate.Profile {
	out := make([]fargate.Profile, len(c.FargateProfiles))
	for i, p := range c.FargateProfiles {
		out[i] = p.Profile()
	}
	return out
}

// clusterName is what EKS accepts as a cluster name.
var clusterName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,99}$`)

func validName(s string) bool { return clusterName.MatchString(s) }

// InstanceType is what a node of an EC2 instance type offers pods.
type InstanceType struct {
	CPU    string // allocatable, as a quantity
	Memory string
	Pods   int // max pods with the VPC CNI
	Arch   string
}

// InstanceTypes the emulator knows. Allocatable CPU and memory are the EKS
// AMI's usual reservations subtracted from the instance's; max pods are the
// VPC CNI's (eni-max-pods).
var InstanceTypes = map[string]InstanceType{
	"t3.medium":  {CPU: "1930m", Memory: "3388Mi", Pods: 17, Arch: "amd64"},
	"m6i.large":  {CPU: "1930m", Memory: "7134Mi", Pods: 29, Arch: "amd64"},
	"m6i.xlarge": {CPU: "3920m", Memory: "14500Mi", Pods: 58, Arch: "amd64"},
	"c6i.large":  {CPU: "1930m", Memory: "3200Mi", Pods: 29, Arch: "amd64"},
	"m7g.large":  {CPU: "1930m", Memory: "7134Mi", Pods: 29, Arch: "arm64"},
}

func instanceTypeNames() []string {
	names := make([]string, 0, len(InstanceTypes))
	for n := range InstanceTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
