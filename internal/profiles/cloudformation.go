package profiles

import (
	"errors"
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// cfnProfileType is the CloudFormation resource type of a Fargate profile.
const cfnProfileType = "AWS::EKS::FargateProfile"

// cfnProfile is one AWS::EKS::FargateProfile of a template.
type cfnProfile struct {
	logicalID string
	profile   fargate.Profile
	// props are the resource's Properties, line where it is declared.
	props *yamlv3.Node
	line  int
	// partial is true when a selector holds an intrinsic function (a
	// missing value is no intrinsic: Validate reports it).
	partial bool
}

// ParseCloudFormation reads the AWS::EKS::FargateProfile resources of a
// CloudFormation template, JSON or YAML (short-form tags such as !Ref, !Sub
// and !GetAtt included), in the template's order. A template without such a
// resource gives no profile and no error. Errors name file.
//
// Intrinsic functions are not evaluated, only literal values are read:
//   - FargateProfileName: when it is an intrinsic function (say !Sub
//     '${ClusterName}-web') or missing (CloudFormation then generates one),
//     the profile is named after its logical ID;
//   - Selectors[].Namespace, Selectors[].Labels[].Key and .Value: an
//     intrinsic is read as an empty string, so such a selector matches no pod;
//   - Subnets: intrinsics (!Ref PrivateSubnet1) are left out.
func ParseCloudFormation(file string, data []byte) ([]fargate.Profile, error) {
	list, _, err := parseCloudFormation(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	profiles := make([]fargate.Profile, 0, len(list))
	for _, p := range list {
		profiles = append(profiles, p.profile)
	}
	return profiles, nil
}

// parseCloudFormation reads the profiles of a template, and every resource
// (for the foundation).
func parseCloudFormation(data []byte) ([]cfnProfile, []cfnResource, error) {
	var doc yamlv3.Node
	if err := yamlv3.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	top := resolve(&doc)
	if top == nil || top.Kind != yamlv3.MappingNode {
		return nil, nil, errors.New("not a CloudFormation template: expected a mapping with Resources")
	}
	resources := resolve(get(top, "Resources"))
	if resources == nil {
		return nil, nil, nil
	}
	if resources.Kind != yamlv3.MappingNode {
		return nil, nil, fmt.Errorf("line %d: Resources is not a mapping of logical IDs to resources", resources.Line)
	}
	var out []cfnProfile
	var all []cfnResource
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resolve(resources.Content[i+1])
		typ, _ := literal(get(res, "Type"))
		all = append(all, cfnResource{id: id, typ: typ, props: resolve(get(res, "Properties")), line: resources.Content[i].Line})
		if typ != cfnProfileType {
			continue
		}
		c := cfnFargateProfile(id, resolve(get(res, "Properties")))
		c.line = resources.Content[i].Line
		out = append(out, c)
	}
	return out, all, nil
}

func cfnFargateProfile(id string, props *yamlv3.Node) cfnProfile {
	c := cfnProfile{logicalID: id, props: props}
	p := &c.profile
	var ok bool
	if p.Name, ok = literal(get(props, "FargateProfileName")); !ok || p.Name == "" {
		p.Name = id
	}
	// value reads a literal and notes an intrinsic function.
	value := func(n *yamlv3.Node) string {
		v, ok := literal(n)
		if !ok && n != nil && n.ShortTag() != "!!null" {
			c.partial = true
		}
		return v
	}
	for _, sn := range items(get(props, "Selectors")) {
		s := fargate.Selector{Namespace: value(get(sn, "Namespace"))}
		for _, ln := range items(get(sn, "Labels")) {
			k, v := value(get(ln, "Key")), value(get(ln, "Value"))
			if s.Labels == nil {
				s.Labels = map[string]string{}
			}
			s.Labels[k] = v
		}
		p.Selectors = append(p.Selectors, s)
	}
	for _, n := range items(get(props, "Subnets")) {
		if v, ok := literal(n); ok {
			p.Subnets = append(p.Subnets, v)
		}
	}
	return c
}

// resolve follows documents and aliases to the node they stand for.
func resolve(n *yamlv3.Node) *yamlv3.Node {
	for i := 0; n != nil && i < 100; i++ {
		switch {
		case n.Kind == yamlv3.DocumentNode && len(n.Content) == 1:
			n = n.Content[0]
		case n.Kind == yamlv3.DocumentNode:
			return nil
		case n.Kind == yamlv3.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return nil
}

// get is the value of key in mapping n, nil when absent.
func get(n *yamlv3.Node, key string) *yamlv3.Node {
	n = resolve(n)
	if n == nil || n.Kind != yamlv3.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return resolve(n.Content[i+1])
		}
	}
	return nil
}

// items are the elements of sequence n, nil when n is not a sequence.
func items(n *yamlv3.Node) []*yamlv3.Node {
	n = resolve(n)
	if n == nil || n.Kind != yamlv3.SequenceNode {
		return nil
	}
	return n.Content
}

// literal is the value of a scalar that is no intrinsic function (a short
// form such as !Ref carries a custom tag; a long form such as {"Ref": x} is a
// mapping). ok is false for anything else, a null included.
func literal(n *yamlv3.Node) (s string, ok bool) {
	n = resolve(n)
	if n == nil || n.Kind != yamlv3.ScalarNode {
		return "", false
	}
	switch n.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool":
		return n.Value, true
	}
	return "", false
}

// isCloudFormation reports whether data looks like a CloudFormation template:
// it has AWSTemplateFormatVersion, or Resources of Type AWS::EKS::FargateProfile.
func isCloudFormation(data []byte) bool {
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil {
		return false
	}
	top := resolve(&doc)
	if get(top, "AWSTemplateFormatVersion") != nil {
		return true
	}
	resources := resolve(get(top, "Resources"))
	if resources == nil || resources.Kind != yamlv3.MappingNode {
		return false
	}
	for i := 1; i < len(resources.Content); i += 2 {
		if typ, _ := literal(get(resources.Content[i], "Type")); typ == cfnProfileType {
			return true
		}
	}
	return false
}

// parseCloudFormationSet is Parse for CloudFormation templates.
func parseCloudFormationSet(data []byte) (Set, error) {
	list, resources, err := parseCloudFormation(data)
	if err != nil {
		return Set{}, err
	}
	if len(list) == 0 {
		return Set{}, errors.New("no " + cfnProfileType + " resource in the CloudFormation template")
	}
	set := Set{Foundation: cfnFoundation(resources, list)}
	var errs []error
	for _, c := range list {
		// Selectors known only once deployed: nothing to validate.
		errs = append(errs, set.admit(c.profile, "resource "+c.logicalID, c.partial))
	}
	return set, errors.Join(errs...)
}
