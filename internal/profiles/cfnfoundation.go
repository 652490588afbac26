package profiles

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// cfnResource is one resource of a template.
type cfnResource struct {
	id, typ string
	props   *yamlv3.Node
	line    int
}

// cfnFoundation is what a CloudFormation template says about the cluster's
// foundation. Resources are named by logical ID: a Ref or GetAtt of another
// resource of the template is a link to it, a literal ID (subnet-0abc) a
// resource outside the template. Other intrinsic functions are not
// evaluated, except that the text of a Sub (its ${...} left as written)
// still tells a service or policy name by its end.
func cfnFoundation(resources []cfnResource, profiles []cfnProfile) *foundation.Foundation {
	f := &foundation.Foundation{}
	origin := func(r cfnResource) foundation.Origin {
		return foundation.Origin{Ref: object.Ref{APIVersion: "cloudformation", Kind: r.typ, Name: r.id}, Source: object.Source{Line: r.line}}
	}
	types := map[string]string{}
	for _, r := range resources {
		types[r.id] = r.typ
	}
	rtIndex, roleIndex := map[string]int{}, map[string]int{}
	for _, r := range resources {
		p := r.props
		switch r.typ {
		case "AWS::EC2::VPC":
			f.VPCs = append(f.VPCs, foundation.VPC{Origin: origin(r), ID: r.id,
				DNSSupport: cfnBool(get(p, "EnableDnsSupport"), true), DNSHostnames: cfnBool(get(p, "EnableDnsHostnames"), false)})
		case "AWS::EC2::Subnet":
			az, _ := literal(get(p, "AvailabilityZone"))
			f.Subnets = append(f.Subnets, foundation.Subnet{Origin: origin(r), ID: r.id, VPC: cfnLink(get(p, "VpcId")), AZ: az})
		case "AWS::EC2::RouteTable":
			rtIndex[r.id] = len(f.RouteTables)
			f.RouteTables = append(f.RouteTables, foundation.RouteTable{Origin: origin(r), ID: r.id, VPC: cfnLink(get(p, "VpcId"))})
		case "AWS::EC2::VPCEndpoint":
			f.Endpoints = append(f.Endpoints, foundation.Endpoint{Origin: origin(r), ID: r.id, VPC: cfnLink(get(p, "VpcId")),
				Service: cfnText(get(p, "ServiceName")), RouteTables: cfnLinks(get(p, "RouteTableIds")), Subnets: cfnLinks(get(p, "SubnetIds"))})
		case "AWS::IAM::Role":
			name, ok := literal(get(p, "RoleName"))
			if !ok || name == "" {
				name = r.id // CloudFormation generates the name
			}
			role := foundation.Role{Origin: origin(r), Name: name, Trust: cfnDocument(get(p, "AssumeRolePolicyDocument")), PoliciesKnown: true}
			for _, n := range items(get(p, "ManagedPolicyArns")) {
				role.Policies = append(role.Policies, cfnText(n))
			}
			for _, n := range items(get(p, "Policies")) {
				role.InlinePolicies = append(role.InlinePolicies, cfnText(get(n, "PolicyName")))
			}
			roleIndex[r.id] = len(f.Roles)
			f.Roles = append(f.Roles, role)
		case "AWS::EKS::Cluster":
			name, _ := literal(get(p, "Name"))
			f.Cluster = foundation.Cluster{Origin: origin(r), Name: name}
			f.CapacityKnown = true
			if b := cfnBool(get(get(p, "ComputeConfig"), "Enabled"), false); b != nil && *b {
				f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: origin(r), Name: "EKS Auto Mode", DesiredSize: -1})
			}
		case "AWS::EKS::Nodegroup", "AWS::AutoScaling::AutoScalingGroup":
			size := -1
			desired := get(get(p, "ScalingConfig"), "DesiredSize")
			if r.typ != "AWS::EKS::Nodegroup" {
				desired = get(p, "DesiredCapacity")
			}
			if v, ok := literal(desired); ok {
				if n, err := strconv.Atoi(v); err == nil {
					size = n
				}
			}
			f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: origin(r), Name: r.id, DesiredSize: size})
		}
	}
	for _, r := range resources {
		p := r.props
		switch r.typ {
		case "AWS::EC2::Route":
			i, ok := rtIndex[cfnLink(get(p, "RouteTableId"))]
			if !ok {
				continue
			}
			route := foundation.Route{Origin: origin(r)}
			route.Destination, _ = literal(get(p, "DestinationCidrBlock"))
			for _, hop := range []string{"NatGatewayId", "GatewayId", "TransitGatewayId", "NetworkInterfaceId", "InstanceId", "VpcPeeringConnectionId", "VpcEndpointId"} {
				id := cfnLink(get(p, hop))
				if id == "" {
					continue
				}
				route.TargetID, route.Target = id, foundation.TargetOther
				switch {
				case hop == "NatGatewayId":
					route.Target = foundation.TargetNATGateway
				case hop == "GatewayId" && (types[id] == "AWS::EC2::InternetGateway" || strings.HasPrefix(id, "igw-")):
					route.Target = foundation.TargetInternetGateway
				}
				break
			}
			if route.Destination != "" && route.TargetID != "" {
				f.RouteTables[i].Routes = append(f.RouteTables[i].Routes, route)
			}
		case "AWS::EC2::SubnetRouteTableAssociation":
			if i, ok := rtIndex[cfnLink(get(p, "RouteTableId"))]; ok {
				f.RouteTables[i].Subnets = append(f.RouteTables[i].Subnets, cfnLink(get(p, "SubnetId")))
			}
		case "AWS::IAM::Policy", "AWS::IAM::RolePolicy": // inline policies of the roles they name
			for _, role := range append(cfnLinks(get(p, "Roles")), cfnLink(get(p, "RoleName"))) {
				if i, ok := roleIndex[role]; ok {
					f.Roles[i].InlinePolicies = append(f.Roles[i].InlinePolicies, cmp.Or(cfnText(get(p, "PolicyName")), r.id))
				}
			}
		case "AWS::IAM::ManagedPolicy": // attached to the roles it names; its ARN is known after creation
			for _, role := range cfnLinks(get(p, "Roles")) {
				if i, ok := roleIndex[role]; ok {
					f.Roles[i].Policies = append(f.Roles[i].Policies, r.id)
				}
			}
		}
	}
	// A VPC of the template has a main route table with only the local route.
	for _, v := range f.VPCs {
		f.RouteTables = append(f.RouteTables, foundation.RouteTable{Origin: v.Origin, ID: "the main route table of " + v.ID, VPC: v.ID, Main: true})
	}
	for _, c := range profiles {
		p := foundation.Profile{Origin: origin(cfnResource{id: c.logicalID, typ: cfnProfileType, line: c.line}), Profile: c.profile}
		p.Subnets = cfnLinks(get(c.props, "Subnets"))
		p.PodExecutionRoleARN = cfnLink(get(c.props, "PodExecutionRoleArn")) // a literal ARN
		for _, r := range f.Roles {
			if r.Ref.Name == p.PodExecutionRoleARN { // a Ref or GetAtt of a role of the template
				p.PodExecutionRoleARN = "arn:aws:iam:::role/" + r.Name
			}
		}
		f.Profiles = append(f.Profiles, p)
	}
	return f
}

// cfnLink is a literal value, or the logical ID a Ref or GetAtt names; ""
// for anything else.
func cfnLink(n *yamlv3.Node) string {
	n = resolve(n)
	if n == nil {
		return ""
	}
	if v, ok := literal(n); ok {
		return v
	}
	switch n.Kind {
	case yamlv3.ScalarNode: // !Ref X, !GetAtt X.Arn
		if n.Tag == "!Ref" || n.Tag == "!GetAtt" {
			id, _, _ := strings.Cut(n.Value, ".")
			return id
		}
	case yamlv3.SequenceNode: // !GetAtt [X, Arn]
		if n.Tag == "!GetAtt" && len(n.Content) > 0 {
			return n.Content[0].Value
		}
	case yamlv3.MappingNode: // {"Ref": X}, {"Fn::GetAtt": [X, Arn]}, {"Fn::GetAtt": "X.Arn"}
		if len(n.Content) == 2 {
			switch n.Content[0].Value {
			case "Ref":
				return cfnLink(n.Content[1])
			case "Fn::GetAtt":
				v := resolve(n.Content[1])
				if v == nil {
					return ""
				}
				if v.Kind == yamlv3.SequenceNode && len(v.Content) > 0 {
					return v.Content[0].Value
				}
				id, _, _ := strings.Cut(v.Value, ".")
				return id
			}
		}
	}
	return ""
}

// cfnLinks is cfnLink of each element of a list, those it cannot read left out.
func cfnLinks(n *yamlv3.Node) []string {
	var out []string
	for _, e := range items(n) {
		if l := cfnLink(e); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// cfnText is a literal, or the template text of a Sub.
func cfnText(n *yamlv3.Node) string {
	n = resolve(n)
	if v, ok := literal(n); ok || n == nil {
		return v
	}
	if n.Tag == "!Sub" {
		if n.Kind == yamlv3.SequenceNode && len(n.Content) > 0 {
			return n.Content[0].Value
		}
		return n.Value
	}
	if n.Kind == yamlv3.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Fn::Sub" {
		v := resolve(n.Content[1])
		if v == nil {
			return ""
		}
		if v.Kind == yamlv3.SequenceNode && len(v.Content) > 0 {
			return v.Content[0].Value
		}
		return v.Value
	}
	return ""
}

// cfnBool is a boolean property, def when absent, nil when an intrinsic.
func cfnBool(n *yamlv3.Node, def bool) *bool {
	if n == nil {
		return &def
	}
	v, ok := literal(n)
	if !ok {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return nil
	}
	return &b
}

// cfnDocument is a policy document as JSON: a JSON string, or the mapping
// written in the template; "" when it holds intrinsic functions.
func cfnDocument(n *yamlv3.Node) string {
	if s, ok := literal(n); ok {
		return s
	}
	var v any
	if n == nil || n.Decode(&v) != nil {
		return ""
	}
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}
