// Package profiles reads Fargate profiles from the places users keep them:
// eksctl ClusterConfig files, the JSON the AWS CLI prints, and the inline
// --fargate-profile flag.
package profiles

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Set is what a profile source declares.
type Set struct {
	Profiles []fargate.Profile
	// PodIdentity lists EKS Pod Identity associations (eksctl iam.podIdentityAssociations).
	PodIdentity []rules.PodIdentityAssociation
}

// clusterConfig is the part of an eksctl ClusterConfig (eksctl.io/v1alpha5) read here.
type clusterConfig struct {
	APIVersion      string `json:"apiVersion"`
	Kind            string `json:"kind"`
	FargateProfiles []struct {
		Name      string             `json:"name"`
		Selectors []fargate.Selector `json:"selectors"`
		Subnets   []string           `json:"subnets"`
	} `json:"fargateProfiles"`
	IAM struct {
		PodIdentityAssociations []struct {
			Namespace          string `json:"namespace"`
			ServiceAccountName string `json:"serviceAccountName"`
		} `json:"podIdentityAssociations"`
	} `json:"iam"`
}

// describeOutput is `aws eks describe-fargate-profile` output, or a list of profiles.
type describeOutput struct {
	FargateProfile  *fargate.Profile  `json:"fargateProfile"`
	FargateProfiles []fargate.Profile `json:"fargateProfiles"`
}

// ReadFile reads profiles from an eksctl ClusterConfig or AWS CLI JSON file.
func ReadFile(path string) (Set, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Set{}, fmt.Errorf("reading profiles from %s: %w", path, err)
	}
	set, err := Parse(path, data)
	if err != nil {
		return Set{}, fmt.Errorf("reading profiles from %s: %w", path, err)
	}
	return set, nil
}

// Parse reads profiles from the contents of a profile file named file.
func Parse(file string, data []byte) (Set, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return Set{}, fmt.Errorf("not YAML or JSON: %w", err)
	}
	if head.Kind == "ClusterConfig" {
		return parseClusterConfig(file, data)
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
	return Set{Profiles: list}, validate(list, "fargateProfile")
}

func parseClusterConfig(file string, data []byte) (Set, error) {
	var cc clusterConfig
	if err := yaml.Unmarshal(data, &cc); err != nil {
		return Set{}, fmt.Errorf("eksctl ClusterConfig: %w", err)
	}
	var set Set
	for _, p := range cc.FargateProfiles {
		set.Profiles = append(set.Profiles, fargate.Profile{Name: p.Name, Selectors: p.Selectors, Subnets: p.Subnets})
	}
	for _, a := range cc.IAM.PodIdentityAssociations {
		set.PodIdentity = append(set.PodIdentity, rules.PodIdentityAssociation{
			Namespace: a.Namespace, ServiceAccount: a.ServiceAccountName, Source: object.Source{File: file},
		})
	}
	return set, validate(set.Profiles, "fargateProfiles")
}

// validate reports EKS's refusals, naming each profile's position in the file.
func validate(list []fargate.Profile, field string) error {
	var errs []error
	for i := range list {
		if err := list[i].Validate(fargate.DefaultLimits); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d] (%s): %w", field, i, list[i].Name, err))
		}
	}
	return errors.Join(errs...)
}

// ParseInline reads the --fargate-profile syntax:
//
//	name=web,namespace=prod-*,labels=app=web,tier=front,namespace=staging
//
// Each namespace= starts a selector; labels= adds labels to the current
// selector, and a following part that is not a known key adds another label.
func ParseInline(spec string) (fargate.Profile, error) {
	var p fargate.Profile
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
	if err := p.Validate(fargate.DefaultLimits); err != nil {
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
