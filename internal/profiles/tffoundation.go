package profiles

import (
	"cmp"
	"regexp"
	"slices"
	"strconv"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// tfResource is one resource instance of a Terraform plan (as planned) or
// state.
type tfResource struct {
	Address, Module, Type string
	// Index is the instance key: a float64 for count, a string for
	// for_each, nil for neither.
	Index   any
	Values  map[string]any
	Unknown any // after_unknown of the plan's change; nil for a state
}

// tfFoundation reads the resources around a cluster from a plan (their
// planned values; an ID or link known only after apply is followed through
// the configuration's references) or a state.
type tfFoundation struct {
	resources []*tfResource
	config    *tfjson.Config
}

// planFoundation builds the Foundation of a plan: its planned values, with
// links known only after apply followed through the configuration.
func planFoundation(p *tfjson.Plan, plan *TerraformPlan) *foundation.Foundation {
	unknown := map[string]any{}
	for _, rc := range p.ResourceChanges {
		if rc != nil && rc.Change != nil && rc.DeposedKey == "" {
			unknown[rc.Address] = rc.Change.AfterUnknown
		}
	}
	t := &tfFoundation{config: p.Config}
	walkState(p.PlannedValues, func(r *tfjson.StateResource, module string) {
		t.resources = append(t.resources, &tfResource{Address: r.Address, Module: module, Type: r.Type, Index: r.Index,
			Values: r.AttributeValues, Unknown: unknown[r.Address]})
	})
	return t.build(plan)
}

// stateFoundation builds the Foundation of a state.
func stateFoundation(s *tfjson.State, plan *TerraformPlan) *foundation.Foundation {
	t := &tfFoundation{}
	walkState(s.Values, func(r *tfjson.StateResource, module string) {
		if r.DeposedKey == "" {
			t.resources = append(t.resources, &tfResource{Address: r.Address, Module: module, Type: r.Type, Index: r.Index, Values: r.AttributeValues})
		}
	})
	return t.build(plan)
}

// tfOrigin names a resource by its address (which starts with its type, after
// its module); Parse adds the file.
func tfOrigin(address string) foundation.Origin {
	return foundation.Origin{Ref: object.Ref{APIVersion: "terraform", Kind: tfKind, Name: address}}
}

// tfKind is the kind of the objects that stand for Terraform resources.
const tfKind = "Terraform"

// id is a resource's ID, or its address when the ID is known only after
// apply: links resolved through references name it so.
func (r *tfResource) id() string { return cmp.Or(str(r.Values["id"]), r.Address) }

func (t *tfFoundation) build(plan *TerraformPlan) *foundation.Foundation {
	f := &foundation.Foundation{}
	byID := map[string]int{} // route table ID → index in f.RouteTables
	var routes []*tfResource
	roles := map[string]int{} // role name → index in f.Roles
	clusterName := plan.Cluster()
	for _, r := range t.resources {
		o := tfOrigin(r.Address)
		switch r.Type {
		case "aws_vpc":
			f.VPCs = append(f.VPCs, foundation.VPC{Origin: o, ID: r.id(),
				DNSSupport: r.boolOr("enable_dns_support", true), DNSHostnames: r.boolOr("enable_dns_hostnames", false)})
		case "aws_subnet":
			f.Subnets = append(f.Subnets, foundation.Subnet{Origin: o, ID: r.id(), VPC: t.link(r, "vpc_id"), AZ: str(r.Values["availability_zone"])})
		case "aws_route_table", "aws_default_route_table":
			rt := foundation.RouteTable{Origin: o, ID: r.id(), VPC: t.link(r, "vpc_id"), Main: r.Type == "aws_default_route_table"}
			for i, v := range asList(r.Values["route"]) {
				if route, ok := t.route(r, asObject(v), i); ok {
					rt.Routes = append(rt.Routes, route)
				}
			}
			byID[rt.ID] = len(f.RouteTables)
			f.RouteTables = append(f.RouteTables, rt)
		case "aws_route", "aws_route_table_association", "aws_main_route_table_association", "aws_vpc_endpoint_route_table_association":
			routes = append(routes, r)
		case "aws_vpc_endpoint":
			f.Endpoints = append(f.Endpoints, foundation.Endpoint{Origin: o, ID: r.id(), VPC: t.link(r, "vpc_id"),
				Service: str(r.Values["service_name"]), RouteTables: t.links(r, "route_table_ids"), Subnets: t.links(r, "subnet_ids")})
		case "aws_iam_role":
			// Attachments name the role by name; links known only after
			// apply lead to its address. A name known only after apply
			// (name_prefix) is the address.
			name := cmp.Or(str(r.Values["name"]), r.Address)
			roles[name], roles[r.id()] = len(f.Roles), len(f.Roles)
			role := foundation.Role{Origin: o, Name: name, ARN: str(r.Values["arn"]),
				Trust: str(r.Values["assume_role_policy"]), Policies: strings1(r.Values["managed_policy_arns"]), PoliciesKnown: true}
			for _, p := range asList(r.Values["inline_policy"]) {
				if ip := asObject(p); str(ip["name"]) != "" || str(ip["policy"]) != "" {
					role.InlinePolicies = append(role.InlinePolicies, cmp.Or(str(ip["name"]), "(unnamed)"))
				}
			}
			f.Roles = append(f.Roles, role)
		case "aws_eks_cluster":
			if name := str(r.Values["name"]); clusterName == "" || name == clusterName || name == "" {
				f.Cluster = foundation.Cluster{Origin: o, Name: cmp.Or(name, clusterName)}
				f.Cluster.Region, f.Cluster.Account = foundation.RegionAccount(str(r.Values["arn"]))
				if vc := asList(r.Values["vpc_config"]); len(vc) > 0 {
					f.Cluster.VPC = str(asObject(vc[0])["vpc_id"])
				}
				f.CapacityKnown = true
				if cc := asList(r.Values["compute_config"]); len(cc) > 0 && asObject(cc[0])["enabled"] == true {
					f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: o, Name: "EKS Auto Mode", DesiredSize: -1})
				}
			}
		case "aws_autoscaling_group":
			f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: o, Name: str(r.Values["name"]), DesiredSize: intOr(r.Values, "desired_capacity")})
		case "helm_release":
			if strings.Contains(str(r.Values["chart"]), "karpenter") {
				f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: o, Name: "Karpenter", DesiredSize: -1})
			}
		}
	}
	// Attachments, routes and associations, once their tables and roles are known.
	for _, r := range t.resources {
		switch r.Type {
		case "aws_iam_role_policy_attachment":
			if i, ok := roles[t.link(r, "role")]; ok {
				f.Roles[i].Policies = append(f.Roles[i].Policies, str(r.Values["policy_arn"]))
			}
		case "aws_iam_role_policy_attachments_exclusive":
			if i, ok := roles[t.link(r, "role_name")]; ok {
				f.Roles[i].Policies = append(f.Roles[i].Policies, strings1(r.Values["policy_arns"])...)
			}
		case "aws_iam_role_policy": // an inline policy
			if i, ok := roles[t.link(r, "role")]; ok {
				f.Roles[i].InlinePolicies = addNew(f.Roles[i].InlinePolicies, cmp.Or(str(r.Values["name"]), r.Address))
			}
		case "aws_iam_role_policies_exclusive": // names the inline policies of aws_iam_role_policy resources
			if i, ok := roles[t.link(r, "role_name")]; ok {
				f.Roles[i].InlinePolicies = addNew(f.Roles[i].InlinePolicies, strings1(r.Values["policy_names"])...)
			}
		}
	}
	unresolved := false
	for _, r := range routes {
		rt := t.link(r, "route_table_id")
		i, ok := byID[rt]
		if !ok {
			unresolved = unresolved || r.Type == "aws_route_table_association"
			continue
		}
		switch r.Type {
		case "aws_route":
			if route, ok := t.route(r, r.Values, -1); ok {
				route.Origin = tfOrigin(r.Address)
				f.RouteTables[i].Routes = append(f.RouteTables[i].Routes, route)
			}
		case "aws_route_table_association":
			if sn := t.link(r, "subnet_id"); sn != "" {
				f.RouteTables[i].Subnets = append(f.RouteTables[i].Subnets, sn)
			} else if r.Values["gateway_id"] == nil {
				unresolved = true
			}
		case "aws_main_route_table_association":
			f.RouteTables[i].Main, f.RouteTables[i].VPC = true, cmp.Or(t.link(r, "vpc_id"), f.RouteTables[i].VPC)
		case "aws_vpc_endpoint_route_table_association":
			ep := t.link(r, "vpc_endpoint_id")
			for j := range f.Endpoints {
				if f.Endpoints[j].ID == ep {
					f.Endpoints[j].RouteTables = append(f.Endpoints[j].RouteTables, rt)
				}
			}
		}
	}
	// A VPC Terraform creates has a main route table with only the local
	// route, unless one is declared; when some association could not be
	// followed, a subnet's table is unknown rather than the main one.
	if !unresolved {
		for _, v := range f.VPCs {
			if !slices.ContainsFunc(f.RouteTables, func(rt foundation.RouteTable) bool { return rt.Main && rt.VPC == v.ID }) {
				f.RouteTables = append(f.RouteTables, foundation.RouteTable{Origin: v.Origin, ID: "the main route table of " + v.ID, VPC: v.ID, Main: true})
			}
		}
	}
	for _, c := range plan.Changes {
		if c.After != nil && (clusterName == "" || c.Cluster == "" || c.Cluster == clusterName) {
			p := foundation.Profile{Origin: tfOrigin(c.Address), Profile: *c.After}
			if r := t.resource(c.Address); r != nil {
				if slices.Contains(c.Unknown, "subnet_ids") {
					p.Subnets = t.links(r, "subnet_ids")
				}
				if p.PodExecutionRoleARN == "" {
					p.PodExecutionRoleARN = "arn:aws:iam::" + f.Cluster.Account + ":role/" + t.roleName(r, f.Roles)
				}
			}
			f.Profiles = append(f.Profiles, p)
		}
	}
	for _, ng := range plan.NodeGroups {
		if ng.After && !ng.Deposed() && (clusterName == "" || ng.Cluster == "" || ng.Cluster == clusterName) {
			f.NodeGroups = append(f.NodeGroups, foundation.NodeGroup{Origin: tfOrigin(ng.Address), Name: ng.Name, DesiredSize: ng.DesiredSize})
		}
	}
	if f.Cluster.Account == "" {
		for _, r := range f.Roles {
			if _, acct := foundation.RegionAccount(r.ARN); acct != "" {
				f.Cluster.Account = acct
				break
			}
		}
	}
	return f
}

// route reads a route: inline (index i of a route table's route blocks) or
// an aws_route; ok is false for a route that is neither IPv4 nor to a hop
// that matters (the local route).
func (t *tfFoundation) route(r *tfResource, v map[string]any, i int) (foundation.Route, bool) {
	route := foundation.Route{Destination: cmp.Or(str(v["cidr_block"]), str(v["destination_cidr_block"]))}
	// The after_unknown value and the attribute's path of an inline route.
	unknown, attr := r.Unknown, ""
	if i >= 0 {
		unknown, attr = nil, "route."+strconv.Itoa(i)+"."
		if l := asList(asObject(r.Unknown)["route"]); i < len(l) {
			unknown = l[i]
		}
	}
	if route.Destination == "" {
		return route, false
	}
	for _, hop := range []struct {
		attr   string
		target foundation.Target
	}{
		{"nat_gateway_id", foundation.TargetNATGateway},
		{"gateway_id", foundation.TargetInternetGateway},
		{"transit_gateway_id", foundation.TargetOther},
		{"network_interface_id", foundation.TargetOther},
		{"vpc_peering_connection_id", foundation.TargetOther},
		{"vpc_endpoint_id", foundation.TargetOther},
		{"core_network_arn", foundation.TargetOther},
		{"instance_id", foundation.TargetOther},
	} {
		id := str(v[hop.attr])
		known := id != ""
		if !known {
			if !unknownAt(asObject(unknown)[hop.attr]) {
				continue
			}
			id = cmp.Or(t.link(r, attr+hop.attr), "(known after apply)")
		}
		route.Target, route.TargetID = hop.target, id
		if hop.attr == "gateway_id" {
			switch {
			case id == "local":
				return route, false
			case known && !strings.HasPrefix(id, "igw-"):
				route.Target = foundation.TargetOther // a virtual private gateway
			case !known && !strings.Contains(id, "aws_internet_gateway."):
				route.Target = foundation.TargetOther
			}
		}
		return route, true
	}
	return route, false
}

// roleName is the name of the pod execution role of a profile whose role
// ARN is known only after apply: the role its reference leads to.
func (t *tfFoundation) roleName(r *tfResource, roles []foundation.Role) string {
	addr := t.link(r, "pod_execution_role_arn")
	for _, role := range roles {
		if role.Ref.Name == addr || role.ARN == addr {
			return role.Name
		}
	}
	return ""
}

func (t *tfFoundation) resource(address string) *tfResource {
	for _, r := range t.resources {
		if r.Address == address {
			return r
		}
	}
	return nil
}

// link is a single-valued link attribute of r (an ID): its value, else,
// when known only after apply, the ID of the one resource its references
// lead to; "" when neither says.
func (t *tfFoundation) link(r *tfResource, attr string) string {
	if v := str(r.Values[attr]); v != "" {
		return v
	}
	targets := t.follow(r, attr)
	switch {
	case len(targets) == 1:
		return targets[0].id()
	case len(targets) > 1:
		// count-aligned resources (one route table association per subnet):
		// the instance with r's key.
		for _, c := range targets {
			if c.Index != nil && c.Index == r.Index {
				return c.id()
			}
		}
	}
	return ""
}

// links is a list-valued link attribute: its known elements, else the IDs
// of every resource its references lead to.
func (t *tfFoundation) links(r *tfResource, attr string) []string {
	if l := strings1(r.Values[attr]); len(l) > 0 && !hasTrue(asObject(r.Unknown)[attr]) {
		return l
	}
	var out []string
	for _, c := range t.follow(r, attr) {
		out = append(out, c.id())
	}
	return out
}

// refPattern splits a reference into a resource (type.name) and an optional
// instance key.
var refPattern = regexp.MustCompile(`^([a-z0-9_]+\.[A-Za-z0-9_-]+)(?:\[([^\]]+)\])?`)

// follow returns the resource instances an attribute's expression refers
// to, through module outputs and input variables, in the configuration of
// a plan. Locals and for_each values are not in the JSON configuration and
// are not followed.
func (t *tfFoundation) follow(r *tfResource, attr string) []*tfResource {
	if t.config == nil || t.config.RootModule == nil {
		return nil
	}
	path := modulePath(r.Module)
	mod := configModule(t.config.RootModule, path)
	if mod == nil {
		return nil
	}
	name, _, _ := strings.Cut(lastElement(r.Address, r.Module, r.Type), "[")
	for _, cr := range mod.Resources {
		if cr != nil && cr.Type == r.Type && cr.Name == name {
			if e := expression(cr.Expressions, attr); e != nil {
				return t.resolve(path, e.References, r, 0)
			}
		}
	}
	return nil
}

// resolve follows references made in the module at path.
func (t *tfFoundation) resolve(path []string, refs []string, from *tfResource, depth int) []*tfResource {
	if depth > 16 {
		return nil
	}
	var out []*tfResource
	seen := map[string]bool{}
	add := func(rs ...*tfResource) {
		for _, r := range rs {
			if !seen[r.Address] {
				seen[r.Address] = true
				out = append(out, r)
			}
		}
	}
	byResource := map[string][]*tfResource{}
	for _, ref := range refs {
		parts := strings.Split(ref, ".")
		switch parts[0] {
		case "var":
			if len(path) == 0 || len(parts) < 2 {
				continue
			}
			parent := configModule(t.config.RootModule, path[:len(path)-1])
			if parent == nil {
				continue
			}
			if call := parent.ModuleCalls[path[len(path)-1]]; call != nil {
				if e := call.Expressions[parts[1]]; e != nil && e.ExpressionData != nil {
					add(t.resolve(path[:len(path)-1], e.References, from, depth+1)...)
				}
			}
		case "module":
			if len(parts) < 3 {
				continue
			}
			child := append(slices.Clone(path), strings.SplitN(parts[1], "[", 2)[0])
			if m := configModule(t.config.RootModule, child); m != nil {
				if o := m.Outputs[strings.SplitN(parts[2], "[", 2)[0]]; o != nil && o.Expression != nil && o.Expression.ExpressionData != nil {
					add(t.resolve(child, o.Expression.References, from, depth+1)...)
				}
			}
		case "local", "each", "count", "path", "data", "self", "terraform":
		default:
			m := refPattern.FindStringSubmatch(ref)
			if m == nil {
				continue
			}
			byResource[m[1]] = append(byResource[m[1]], t.instances(path, m[1], m[2], from)...)
		}
	}
	for _, rs := range byResource {
		add(rs...)
	}
	slices.SortFunc(out, func(a, b *tfResource) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// instances are the instances of resource (type.name) in the modules at
// path (any instance key of each module), with key when the reference names
// one: a number, a quoted string, or count.index for from's own key.
func (t *tfFoundation) instances(path []string, resource, key string, from *tfResource) []*tfResource {
	var want any
	switch key {
	case "count.index", "each.key":
		want = from.Index
	case "":
	default:
		if n, err := strconv.Atoi(key); err == nil {
			want = float64(n)
		} else if s, err := strconv.Unquote(key); err == nil {
			want = s
		} else {
			key = "" // an expression: every instance
		}
	}
	var out []*tfResource
	for _, r := range t.resources {
		if slices.Equal(modulePath(r.Module), path) && r.Type+"."+strings.SplitN(lastElement(r.Address, r.Module, r.Type), "[", 2)[0] == resource &&
			(key == "" || r.Index == want) {
			out = append(out, r)
		}
	}
	return out
}

// expression is the expression of an attribute, or of an attribute of a
// nested block: route.0.gateway_id.
func expression(exprs map[string]*tfjson.Expression, attr string) *tfjson.ExpressionData {
	block, rest, nested := strings.Cut(attr, ".")
	e := exprs[block]
	if e == nil || e.ExpressionData == nil {
		return nil
	}
	if !nested {
		return e.ExpressionData
	}
	index, field, _ := strings.Cut(rest, ".")
	i, err := strconv.Atoi(index)
	if err != nil || i >= len(e.NestedBlocks) {
		return nil
	}
	return expression(e.NestedBlocks[i], field)
}

// modulePath is the module calls of a module address, instance keys
// dropped: module.eks.module.fargate_profile["apps"] → [eks fargate_profile].
func modulePath(address string) []string {
	var path []string
	for _, part := range strings.Split(address, "module.")[1:] {
		name := strings.TrimSuffix(part, ".")
		path = append(path, strings.SplitN(name, "[", 2)[0])
	}
	return path
}

func configModule(m *tfjson.ConfigModule, path []string) *tfjson.ConfigModule {
	for _, name := range path {
		if m == nil || m.ModuleCalls[name] == nil {
			return nil
		}
		m = m.ModuleCalls[name].Module
	}
	return m
}

// boolOr is a boolean attribute, def when absent (the provider's default);
// nil when known only after apply.
func (r *tfResource) boolOr(key string, def bool) *bool {
	switch v := r.Values[key].(type) {
	case bool:
		return &v
	case nil:
		if _, present := r.Values[key]; !present && !unknownAt(asObject(r.Unknown)[key]) {
			return &def
		}
	}
	return nil
}

func intOr(values map[string]any, key string) int {
	if n, ok := values[key].(float64); ok && n >= 0 {
		return int(n)
	}
	return -1
}

// strings1 reads a list of strings, skipping what is not a string.
func strings1(v any) []string {
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// addNew appends the values that list does not have yet.
func addNew(list []string, values ...string) []string {
	for _, v := range values {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}
