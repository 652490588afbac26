// Package profiles reads Fargate profiles from the places users keep them:
// eksctl ClusterConfig files, the JSON the AWS CLI prints, Terraform plans
// and states (`terraform show -json`), CloudFormation templates, the
// emulator's configuration, and the inline --fargate-profile flag.
package profiles

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Set is what a profile source declares.
type Set struct {
	Profiles []fargate.Profile
	// PodIdentity lists EKS Pod Identity associations (eksctl iam.podIdentityAssociations).
	PodIdentity []rules.PodIdentityAssociation
	// Cluster is the cluster's name, when the source says it.
	Cluster string
	// NodeGroups counts the EC2 node groups the source declares (eksctl
	// managedNodeGroups and nodeGroups).
	NodeGroups int
	// Version is the cluster's Kubernetes minor version, when the source
	// says it (eksctl metadata.version, the emulator's kubernetesVersion).
	Version string
	// Managed are the managed node groups the source declares (eksctl and
	// emulator managedNodeGroups).
	Managed []ManagedNodeGroup
	// Format says which kind of source it was.
	Format Format
	// PrivateSubnets are the cluster's private subnet IDs, in which a
	// profile that names none runs (eksctl vpc.subnets.private), and
	// SubnetAZ their AZs; empty when the source does not say.
	PrivateSubnets []string
	SubnetAZ       map[string]string
	// Foundation is what the source says about the cluster's VPC, roles and
	// EC2 capacity (Terraform); nil when it says nothing.
	Foundation *foundation.Foundation
}

// ManagedNodeGroup is a managed node group a source declares.
type ManagedNodeGroup struct {
	Name string
	// Version is its Kubernetes minor version: the cluster's unless the
	// source says otherwise.
	Version string
	// ReleaseVersion is its AMI release, "" when the source does not say.
	ReleaseVersion string
}

// Format is a kind of profile source.
type Format string

// The formats Parse reads.
const (
	FormatEksctl         Format = "an eksctl ClusterConfig"
	FormatAWSCLI         Format = "AWS CLI JSON"
	FormatTerraform      Format = "Terraform JSON"
	FormatCloudFormation Format = "a CloudFormation template"
	FormatEmulator       Format = "an emulator configuration"
)

// clusterConfig is the part of an eksctl ClusterConfig (eksctl.io/v1alpha5) read here.
type clusterConfig struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"metadata"`
	ManagedNodeGroups []struct {
		Name           string `json:"name"`
		ReleaseVersion string `json:"releaseVersion"`
	} `json:"managedNodeGroups"`
	NodeGroups      []struct{}      `json:"nodeGroups"`
	FargateProfiles []eksctlProfile `json:"fargateProfiles"`
	VPC             struct {
		Subnets struct {
			// Private maps a name (the AZ, unless az says otherwise) to a subnet.
			Private map[string]struct {
				ID string `json:"id"`
				AZ string `json:"az"`
			} `json:"private"`
		} `json:"subnets"`
	} `json:"vpc"`
	IAM struct {
		PodIdentityAssociations []struct {
			Namespace          string `json:"namespace"`
			ServiceAccountName string `json:"serviceAccountName"`
		} `json:"podIdentityAssociations"`
	} `json:"iam"`
}

// eksctlProfile is a profile of an eksctl ClusterConfig.
type eksctlProfile struct {
	Name      string             `json:"name"`
	Selectors []fargate.Selector `json:"selectors"`
	Subnets   []string           `json:"subnets"`
}

// describeOutput is `aws eks describe-fargate-profile` output, or a list of profiles.
type describeOutput struct {
	FargateProfile  *fargate.Profile  `json:"fargateProfile"`
	FargateProfiles []fargate.Profile `json:"fargateProfiles"`
}

// ReadFile reads profiles from a file in one of the formats Parse reads.
func ReadFile(path string) (Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Set{}, fmt.Errorf("reading profiles: %w", err)
	}
	// The set keeps every valid profile even when others are in error.
	set, err := Parse(path, data)
	if set.Format == FormatTerraform && set.Foundation != nil {
		err = errors.Join(err, locateTerraform(filepath.Dir(path), set.Foundation))
	}
	return set, err
}

// locateTerraform points the origins of f's Terraform resources at the
// blocks that declare them, in the configuration in dir (tfSources), when
// it is there.
func locateTerraform(dir string, f *foundation.Foundation) error {
	src, err := newTFSources(dir)
	errs := []error{err}
	for _, o := range f.Origins() {
		if o.Ref.Kind != tfKind {
			continue
		}
		at, ok, err := src.Source(o.Ref.Name)
		errs = append(errs, err)
		if ok {
			o.Source = at
		}
	}
	return errors.Join(errs...)
}

// Parse reads profiles from the contents of a profile file named file:
// `terraform show -json` output (the profiles present after the plan, or
// every profile of a state), a CloudFormation template, an eksctl
// ClusterConfig or `aws eks describe-fargate-profile` output.
func Parse(file string, data []byte) (Set, error) {
	set, err := parse(file, data)
	if set.Foundation != nil {
		set.Foundation.SetFile(file)
	}
	for i := range set.Profiles {
		if set.Profiles[i].Source.File == "" {
			set.Profiles[i].Source = object.Source{File: file}
		}
	}
	switch {
	case isTerraformJSON(data):
		set.Format = FormatTerraform
	case isCloudFormation(data):
		set.Format = FormatCloudFormation
	case set.Format == "":
		set.Format = FormatAWSCLI
	}
	return set, err
}

func parse(file string, data []byte) (Set, error) {
	switch {
	case isTerraformJSON(data):
		return parseTerraformSet(data)
	case isCloudFormation(data):
		return parseCloudFormationSet(data)
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return Set{}, fmt.Errorf("not YAML or JSON: %w", err)
	}
	switch head.Kind {
	case "ClusterConfig":
		return parseClusterConfig(file, data)
	case clusterconfig.Kind:
		return parseEmulatorConfig(data)
	}
	var out describeOutput
	if err := yaml.Unmarshal(data, &out); err != nil {
		return Set{}, fmt.Errorf("not an eksctl ClusterConfig nor `aws eks describe-fargate-profile` output: %w", err)
	}
	list := out.FargateProfiles
	if out.FargateProfile != nil {
		list = append(list, *out.FargateProfile)
	}
	if len(list) == 0 {
		return Set{}, errors.New("no fargateProfile in the file (expected an eksctl ClusterConfig or `aws eks describe-fargate-profile` output)")
	}
	var set Set
	var errs []error
	for i, p := range list {
		errs = append(errs, set.admit(p, fmt.Sprintf("fargateProfiles[%d]", i), false))
	}
	return set, errors.Join(errs...)
}

func parseClusterConfig(file string, data []byte) (Set, error) {
	var cc clusterConfig
	if err := yaml.Unmarshal(data, &cc); err != nil {
		return Set{}, fmt.Errorf("eksctl ClusterConfig: %w", err)
	}
	set := Set{Cluster: cc.Metadata.Name, NodeGroups: len(cc.ManagedNodeGroups) + len(cc.NodeGroups), Format: FormatEksctl,
		Version: cc.Metadata.Version}
	for _, ng := range cc.ManagedNodeGroups {
		set.Managed = append(set.Managed, ManagedNodeGroup{Name: ng.Name, Version: cc.Metadata.Version, ReleaseVersion: ng.ReleaseVersion})
	}
	var errs []error
	for i, p := range cc.FargateProfiles {
		errs = append(errs, set.admit(fargate.Profile{Name: p.Name, Selectors: p.Selectors, Subnets: p.Subnets}, fmt.Sprintf("fargateProfiles[%d]", i), false))
	}
	for _, name := range slices.Sorted(maps.Keys(cc.VPC.Subnets.Private)) {
		sn := cc.VPC.Subnets.Private[name]
		if sn.ID == "" {
			continue
		}
		if set.SubnetAZ == nil {
			set.SubnetAZ = map[string]string{}
		}
		set.PrivateSubnets = append(set.PrivateSubnets, sn.ID)
		set.SubnetAZ[sn.ID] = cmp.Or(sn.AZ, name)
	}
	for _, a := range cc.IAM.PodIdentityAssociations {
		set.PodIdentity = append(set.PodIdentity, rules.PodIdentityAssociation{
			Namespace: a.Namespace, ServiceAccount: a.ServiceAccountName, Source: object.Source{File: file},
		})
	}
	f, err := eksctlFoundation(file, data, &cc, &set)
	set.Foundation = f
	return set, errors.Join(append(errs, err)...)
}

// parseEmulatorConfig reads the profiles of `fargatekit emulator
// --config`: what the emulated cluster starts with.
func parseEmulatorConfig(data []byte) (Set, error) {
	cfg, err := clusterconfig.Parse(data)
	if err != nil {
		return Set{}, fmt.Errorf("emulator configuration: %w", err)
	}
	set := Set{Cluster: cfg.Metadata.Name, NodeGroups: len(cfg.NodeGroups), Format: FormatEmulator,
		PrivateSubnets: cfg.PrivateSubnetIDs(), SubnetAZ: map[string]string{}, Version: cfg.KubernetesVersion,
		Foundation: cfg.Foundation()}
	for _, ng := range cfg.NodeGroups {
		set.Managed = append(set.Managed, ManagedNodeGroup{Name: ng.Name, Version: cmp.Or(ng.KubeletVersion, cfg.KubernetesVersion), ReleaseVersion: ng.ReleaseVersion})
	}
	for az, sn := range cfg.VPC.Subnets.Private {
		set.SubnetAZ[sn.ID] = az
	}
	for _, p := range cfg.FargateProfiles {
		set.Profiles = append(set.Profiles, p.Profile())
	}
	return set, nil
}

// admit adds a profile read from a file to the set, unless EKS would have
// refused it: then the cluster cannot have it, and the error says why and
// where (the file's field or resource). Quotas are not checked here: AWS
// raises them on request, and the settings say the cluster's (FG024). A partial profile (fields known only after apply) is
// admitted unchecked.
func (s *Set) admit(p fargate.Profile, where string, partial bool) error {
	if !partial {
		if err := p.Validate(fargate.Limits{}).Err(); err != nil {
			return fmt.Errorf("%s (%s) is left out: %w", where, p.Name, err)
		}
	}
	s.Profiles = append(s.Profiles, p)
	return nil
}

// ParseInline reads the --fargate-profile syntax:
//
//	name=web,namespace=prod-*,labels=app=web,tier=front,namespace=staging
//
// Each namespace= starts a selector; labels= adds labels to the current
// selector, and a following part that is not a known key adds another label.
func ParseInline(spec string) (fargate.Profile, error) {
	p := fargate.Profile{Source: object.Source{File: "--fargate-profile"}}
	var cur *fargate.Selector
	inLabels := false
	for _, part := range strings.Split(spec, ",") {
		key, value, ok := strings.Cut(part, "=")
		if !ok {
			return p, fmt.Errorf("--fargate-profile %q: %q is not key=value", spec, part)
		}
		switch key {
		case "name":
			p.Name, inLabels = value, false
		case "namespace":
			p.Selectors = append(p.Selectors, fargate.Selector{Namespace: value})
			cur, inLabels = &p.Selectors[len(p.Selectors)-1], false
		case "subnets":
			p.Subnets, inLabels = append(p.Subnets, strings.Split(value, ";")...), false
		case "labels":
			if cur == nil {
				return p, fmt.Errorf("--fargate-profile %q: labels= must follow a namespace=", spec)
			}
			inLabels = true
			if err := addLabel(cur, value); err != nil {
				return p, fmt.Errorf("--fargate-profile %q: %w", spec, err)
			}
		default:
			if !inLabels {
				return p, fmt.Errorf("--fargate-profile %q: unknown key %q (want name, namespace, labels or subnets)", spec, key)
			}
			if err := addLabel(cur, part); err != nil {
				return p, fmt.Errorf("--fargate-profile %q: %w", spec, err)
			}
		}
	}
	if err := p.Validate(fargate.Limits{}).Err(); err != nil {
		return p, fmt.Errorf("--fargate-profile %q: %w", spec, err)
	}
	return p, nil
}

func addLabel(s *fargate.Selector, kv string) error {
	k, v, ok := strings.Cut(kv, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q is not key=value", kv)
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	s.Labels[k] = v
	return nil
}
