package profiles

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/plan"
)

// Terraform resource types read from plans and states (AWS provider).
const (
	tfProfileType   = "aws_eks_fargate_profile"
	tfNodeGroupType = "aws_eks_node_group"
	tfClusterType   = "aws_eks_cluster"
)

// Action is what a change does to one profile.
type Action string

// The actions of a ProfileChange. A replacement, two actions for Terraform,
// is one Action here; ProfileChange.CreateBeforeDestroy tells their order.
const (
	ActionCreate Action = "create"
	ActionDelete Action = "delete"
	// ActionReplace destroys the profile and creates it again: every argument
	// of aws_eks_fargate_profile but tags forces a replacement.
	ActionReplace Action = "replace"
	// ActionUpdate changes tags only: profiles are otherwise immutable.
	ActionUpdate Action = "update"
	ActionNoop   Action = "no-op"
	// ActionForget: Terraform stops managing the profile (a removed block
	// with destroy = false); the profile stays in the cluster, so After is a
	// copy of Before.
	ActionForget Action = "forget"
)

// ProfileChange is one aws_eks_fargate_profile in a plan.
type ProfileChange struct {
	// Address is the full resource address, e.g.
	// module.eks.module.fargate_profile["apps"].aws_eks_fargate_profile.this[0].
	// A deposed object (left by an interrupted create_before_destroy) is a
	// change of its own, a delete in a plan, with the address of the current
	// object followed by " (deposed KEY)".
	Address string
	// Cluster is cluster_name (after the change, else before); empty when
	// unknown until apply.
	Cluster string
	Action  Action
	// CreateBeforeDestroy is true for a replacement where Terraform creates
	// the new profile first (actions ["create","delete"]), false for
	// ["delete","create"].
	CreateBeforeDestroy bool
	// Before and After are the profile before and after the change, nil when
	// absent (After of a delete, Before of a create).
	Before, After *fargate.Profile
	// Unknown lists the attributes of After that Terraform knows only after
	// apply, among cluster_name, fargate_profile_name, selector and
	// subnet_ids. They are left empty in After (a selector only partly known
	// keeps its known parts); an unknown name is replaced by the last element
	// of the address, e.g. "this[0]". An unknown pod_execution_role_arn (a
	// role created by the same plan) is not listed: it leaves
	// After.PodExecutionRoleARN empty, which it never is when known.
	Unknown []string
}

// TerraformPlan is what a plan or state says about a cluster's Fargate profiles.
type TerraformPlan struct {
	// Changes are in the plan's order (Terraform sorts resource_changes by
	// address, which is not the order of apply); for a state file: every
	// profile, with Action no-op and Before equal to After.
	Changes []ProfileChange
	// NodeGroups are the aws_eks_node_group resources present before or
	// after the change, sorted by address; EC2Capacity tells whether they
	// give the cluster EC2 nodes.
	NodeGroups []NodeGroup
	// Clusters are the aws_eks_cluster resources, sorted by address, as
	// they are before the change (after it, for one it creates).
	Clusters []EKSCluster
	// TerraformVersion is the version of Terraform that wrote the file.
	TerraformVersion string
	// Foundation is what the plan (as planned) or state says about the
	// cluster's VPC, roles and capacity.
	Foundation *foundation.Foundation
}

// NodeGroup is an aws_eks_node_group of a plan or state.
type NodeGroup struct {
	// Address is the resource address; a deposed object's ends with
	// " (deposed KEY)", as ProfileChange.Address.
	Address string
	// Cluster is cluster_name (after the change, else before); empty when
	// unknown until apply.
	Cluster string
	// Before and After tell whether the node group is present before and
	// after the change: a create is only after, a delete only before; a
	// replacement, an update, a no-op or a forget (the node group stays in
	// the cluster) are both. Every node group of a state is both.
	Before, After bool
	// DesiredSize is scaling_config[0].desired_size of the node group after
	// the change if present then, else before; -1 when unknown.
	DesiredSize int
	// Name, Version and ReleaseVersion are node_group_name, version and
	// release_version before the change (after it, for one it creates):
	// what the node group runs. Empty when unknown.
	Name, Version, ReleaseVersion string
}

// EKSCluster is an aws_eks_cluster of a plan or state.
type EKSCluster struct {
	Address string
	// Name and Version are its name and Kubernetes version: empty when
	// unknown until apply.
	Name, Version string
}

// EKSCluster returns the aws_eks_cluster named name, or the only one when
// name is "".
func (p *TerraformPlan) EKSCluster(name string) (EKSCluster, error) {
	var names []string
	for _, c := range p.Clusters {
		if name != "" && c.Name == name {
			return c, nil
		}
		names = append(names, cmp.Or(c.Name, c.Address))
	}
	switch {
	case len(names) == 0:
		return EKSCluster{}, errors.New("no aws_eks_cluster in the Terraform plan or state")
	case name != "":
		return EKSCluster{}, fmt.Errorf("no aws_eks_cluster named %s in the Terraform plan or state, only %s", name, strings.Join(names, ", "))
	case len(names) > 1:
		return EKSCluster{}, fmt.Errorf("%d aws_eks_cluster resources (%s): name the cluster", len(names), strings.Join(names, ", "))
	}
	return p.Clusters[0], nil
}

// EC2Capacity reports whether the cluster keeps EC2 nodes through the
// change: whether some node group of that cluster (of any cluster when
// cluster is "") is present both before and after it, with a desired size
// other than 0 (an unknown size counts as capacity). A node group the change
// creates is not counted: pods cannot wait for it.
func (p *TerraformPlan) EC2Capacity(cluster string) bool {
	for _, ng := range p.NodeGroups {
		if ng.Before && ng.After && ng.DesiredSize != 0 && (cluster == "" || ng.Cluster == cluster) {
			return true
		}
	}
	return false
}

// PlanChanges translates the plan's changes of the profiles of cluster (""
// for every cluster) into the domain's changes: creates, deletes and
// replacements, which plan.Analyze simulates, and the profiles that stay
// (no-op, tags only, or no longer managed). changed is the cluster the
// changes name, if any.
func (p *TerraformPlan) PlanChanges(cluster string) (changes []plan.Change, unchanged []fargate.Profile, changed string) {
	for _, c := range p.Changes {
		if cluster != "" && c.Cluster != "" && c.Cluster != cluster {
			continue
		}
		changed = cmp.Or(changed, c.Cluster)
		switch c.Action {
		case ActionCreate, ActionDelete, ActionReplace:
			changes = append(changes, plan.Change{Address: c.Address, Before: c.Before, After: c.After,
				CreateBeforeDestroy: c.CreateBeforeDestroy, Unknown: slices.Contains(c.Unknown, "selector") || slices.Contains(c.Unknown, "fargate_profile_name")})
		default: // no-op, update (tags only), forget
			if pr := cmp.Or(c.After, c.Before); pr != nil {
				unchanged = append(unchanged, *pr)
			}
		}
	}
	return changes, unchanged, changed
}

// Cluster is the cluster of the plan: the first non-empty Cluster of its
// Changes, empty when none says it.
func (p *TerraformPlan) Cluster() string {
	for _, c := range p.Changes {
		if c.Cluster != "" {
			return c.Cluster
		}
	}
	return ""
}

// errNotTerraform says what ParseTerraform expects.
var errNotTerraform = errors.New("not `terraform show -json` output: expected a JSON object with format_version, " +
	"and resource_changes (a saved plan) or values (a state)")

// planKeys are top-level keys that only a plan has.
var planKeys = []string{"planned_values", "resource_changes", "prior_state", "resource_drift", "output_changes", "configuration"}

// ParseTerraform reads the aws_eks_fargate_profile resources, at any module
// depth, of `terraform show -json` output: of a saved plan (their changes) or
// of a state (every profile, unchanged). A file without such a resource gives
// a TerraformPlan without Changes and no error. A plan whose planning failed
// ("errored") and a value of the wrong type (naming its resource address) are
// errors. Errors start with file, and name it only there: callers add
// nothing.
func ParseTerraform(file string, data []byte) (*TerraformPlan, error) {
	plan, err := parseTerraform(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	plan.Foundation.SetFile(file)
	return plan, nil
}

func parseTerraform(data []byte) (*TerraformPlan, error) {
	var head map[string]json.RawMessage
	if err := json.Unmarshal(data, &head); err != nil {
		if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			return nil, errNotTerraform
		}
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	version, ok := head["format_version"]
	switch {
	case !ok && head["lineage"] != nil:
		return nil, errors.New("a raw Terraform state (terraform.tfstate) is not read: pass the output of `terraform show -json` instead")
	case !ok:
		return nil, errNotTerraform
	}
	var errored bool
	if raw, ok := head["errored"]; ok && json.Unmarshal(raw, &errored) == nil && errored {
		// tfjson (v0.29) does not read the key; Terraform sets it when
		// planning failed, and the plan lacks the changes it could not plan.
		return nil, errors.New("the plan is incomplete: planning failed (\"errored\": true); " +
			"fix the errors `terraform plan` reported and save the plan again")
	}
	for _, k := range planKeys {
		if _, ok := head[k]; ok {
			var p tfjson.Plan
			if err := json.Unmarshal(data, &p); err != nil {
				return nil, fmt.Errorf("reading Terraform plan (format_version %s): %w", version, err)
			}
			return fromPlan(&p)
		}
	}
	var s tfjson.State
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("reading Terraform state (format_version %s): %w", version, err)
	}
	return fromState(&s)
}

func fromPlan(p *tfjson.Plan) (*TerraformPlan, error) {
	out := &TerraformPlan{TerraformVersion: p.TerraformVersion}
	nodeGroups := map[string]*NodeGroup{}
	clusters := map[string]EKSCluster{}
	var errs []error
	for _, rc := range p.ResourceChanges {
		if rc == nil || rc.Mode == tfjson.DataResourceMode || rc.Change == nil {
			continue
		}
		switch rc.Type {
		case tfProfileType:
			c, ok, err := profileChange(rc)
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				out.Changes = append(out.Changes, c)
			}
		case tfNodeGroupType:
			if ng, ok := nodeGroupChange(rc); ok {
				nodeGroups[ng.Address] = &ng
			}
		case tfClusterType:
			if !rc.Change.Actions.Read() && rc.DeposedKey == "" {
				clusters[rc.Address] = eksCluster(rc.Address, current(rc.Change))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// A node group missing from resource_changes (a plan with -target) is
	// left as it is: present before and after, as the prior state has it.
	if p.PriorState != nil {
		walkState(p.PriorState.Values, func(r *tfjson.StateResource, _ string) {
			addr := stateAddress(r)
			switch {
			case r.Type == tfNodeGroupType && nodeGroups[addr] == nil:
				nodeGroups[addr] = stateNodeGroup(addr, r.AttributeValues, true)
			case r.Type == tfClusterType && r.DeposedKey == "":
				if _, ok := clusters[addr]; !ok {
					clusters[addr] = eksCluster(addr, r.AttributeValues)
				}
			}
		})
	}
	walkState(p.PlannedValues, func(r *tfjson.StateResource, _ string) {
		if addr := stateAddress(r); r.Type == tfNodeGroupType && nodeGroups[addr] == nil {
			nodeGroups[addr] = stateNodeGroup(addr, r.AttributeValues, false)
		}
	})
	out.NodeGroups = sortedNodeGroups(nodeGroups)
	out.Clusters = sortedClusters(clusters)
	out.Foundation = planFoundation(p, out)
	return out, nil
}

func fromState(s *tfjson.State) (*TerraformPlan, error) {
	out := &TerraformPlan{TerraformVersion: s.TerraformVersion}
	nodeGroups := map[string]*NodeGroup{}
	clusters := map[string]EKSCluster{}
	var errs []error
	walkState(s.Values, func(r *tfjson.StateResource, module string) {
		addr := stateAddress(r)
		switch r.Type {
		case tfProfileType:
			name := lastElement(r.Address, module, r.Type)
			before, _, err := profileFromValues(r.AttributeValues, nil, name, "")
			if err != nil {
				errs = append(errs, addressed(addr, err))
				return
			}
			after, _, _ := profileFromValues(r.AttributeValues, nil, name, "")
			out.Changes = append(out.Changes, ProfileChange{
				Address: addr, Cluster: str(r.AttributeValues["cluster_name"]),
				Action: ActionNoop, Before: &before, After: &after,
			})
		case tfNodeGroupType:
			nodeGroups[addr] = stateNodeGroup(addr, r.AttributeValues, true)
		case tfClusterType:
			if r.DeposedKey == "" {
				clusters[addr] = eksCluster(addr, r.AttributeValues)
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out.NodeGroups = sortedNodeGroups(nodeGroups)
	out.Clusters = sortedClusters(clusters)
	out.Foundation = stateFoundation(s, out)
	return out, nil
}

// deposedAddress is the address of a resource instance object: a deposed
// object's says so.
func deposedAddress(address, deposedKey string) string {
	if deposedKey == "" {
		return address
	}
	return address + " (deposed " + deposedKey + ")"
}

func stateAddress(r *tfjson.StateResource) string { return deposedAddress(r.Address, r.DeposedKey) }

// Deposed reports whether the node group is a deposed object, on its way
// out.
func (ng NodeGroup) Deposed() bool {
	return strings.HasSuffix(ng.Address, ")") && strings.Contains(ng.Address, " (deposed ")
}

// nodeGroupChange reads one aws_eks_node_group change; ok is false for a
// read.
func nodeGroupChange(rc *tfjson.ResourceChange) (ng NodeGroup, ok bool) {
	ch := rc.Change
	ng = NodeGroup{Address: deposedAddress(rc.Address, rc.DeposedKey)}
	a := ch.Actions
	switch {
	case a.Read():
		return ng, false
	case a.Create():
		ng.After = true
	case a.Delete():
		ng.Before = true
	case a.Replace(), a.Update(), a.NoOp(), a.Forget():
		ng.Before, ng.After = true, true
	default:
		ng.Before, ng.After = ch.Before != nil, ch.After != nil
	}
	before, after := asObject(ch.Before), asObject(ch.After)
	ng.setVersions(current(ch))
	ng.Cluster = str(before["cluster_name"])
	if ng.After && after != nil {
		ng.Cluster = cmp.Or(str(after["cluster_name"]), ng.Cluster)
		ng.DesiredSize = desiredSize(after, ch.AfterUnknown)
	} else {
		ng.DesiredSize = desiredSize(before, nil)
	}
	return ng, true
}

// stateNodeGroup is a node group of a state (the prior state of a plan:
// present before; its planned values: created by it), still there after.
func stateNodeGroup(addr string, values map[string]any, before bool) *NodeGroup {
	ng := &NodeGroup{Address: addr, Cluster: str(values["cluster_name"]), Before: before, After: true, DesiredSize: desiredSize(values, nil)}
	ng.setVersions(values)
	return ng
}

// setVersions reads the name and versions of a node group's values.
func (ng *NodeGroup) setVersions(values map[string]any) {
	ng.Name, ng.Version, ng.ReleaseVersion = str(values["node_group_name"]), str(values["version"]), str(values["release_version"])
}

// current is a resource's values before a change, or after it when the
// change creates it: what is in the account now, or will be first.
func current(ch *tfjson.Change) map[string]any {
	if before := asObject(ch.Before); before != nil {
		return before
	}
	return asObject(ch.After)
}

// eksCluster reads an aws_eks_cluster's values.
func eksCluster(addr string, values map[string]any) EKSCluster {
	return EKSCluster{Address: addr, Name: str(values["name"]), Version: str(values["version"])}
}

func sortedClusters(m map[string]EKSCluster) []EKSCluster {
	if len(m) == 0 {
		return nil
	}
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b EKSCluster) int { return strings.Compare(a.Address, b.Address) })
	return out
}

// desiredSize is scaling_config[0].desired_size of a node group's values,
// -1 when unknown (per the matching after_unknown value) or absent.
func desiredSize(values map[string]any, unknown any) int {
	if unknownAt(unknown, "scaling_config", 0, "desired_size") {
		return -1
	}
	l := asList(values["scaling_config"])
	if len(l) == 0 {
		return -1
	}
	n, ok := asObject(l[0])["desired_size"].(float64)
	if !ok || n < 0 || n != float64(int(n)) {
		return -1
	}
	return int(n)
}

func sortedNodeGroups(m map[string]*NodeGroup) []NodeGroup {
	if len(m) == 0 {
		return nil
	}
	out := make([]NodeGroup, 0, len(m))
	for _, ng := range m {
		out = append(out, *ng)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Address < out[j].Address })
	return out
}

// walkState calls fn for every managed resource of values, at any module
// depth, with the address of its module.
func walkState(values *tfjson.StateValues, fn func(r *tfjson.StateResource, module string)) {
	if values == nil {
		return
	}
	var walk func(m *tfjson.StateModule)
	walk = func(m *tfjson.StateModule) {
		if m == nil {
			return
		}
		for _, r := range m.Resources {
			if r != nil && r.Mode != tfjson.DataResourceMode {
				fn(r, m.Address)
			}
		}
		for _, c := range m.ChildModules {
			walk(c)
		}
	}
	walk(values.RootModule)
}

// profileChange reads one resource change; ok is false for a change that
// does not concern the profile (a read).
func profileChange(rc *tfjson.ResourceChange) (c ProfileChange, ok bool, err error) {
	c = ProfileChange{Address: deposedAddress(rc.Address, rc.DeposedKey)}
	a := rc.Change.Actions
	switch {
	case a.Read():
		return c, false, nil
	case a.Create():
		c.Action = ActionCreate
	case a.Delete():
		c.Action = ActionDelete
	case a.CreateBeforeDestroy():
		c.Action, c.CreateBeforeDestroy = ActionReplace, true
	case a.DestroyBeforeCreate():
		c.Action = ActionReplace
	case a.Update():
		c.Action = ActionUpdate
	case a.NoOp():
		c.Action = ActionNoop
	case a.Forget():
		c.Action = ActionForget
	default:
		return c, false, fmt.Errorf("%s: unexpected change actions %q", c.Address, a)
	}
	fallback := lastElement(rc.Address, rc.ModuleAddress, rc.Type)
	before, after := asObject(rc.Change.Before), asObject(rc.Change.After)
	needAfter := c.Action != ActionDelete && c.Action != ActionForget
	var errs []error
	if c.Action != ActionCreate && before == nil {
		errs = append(errs, fmt.Errorf("actions %q with before %s, not an object", a, describe(rc.Change.Before)))
	}
	if needAfter && after == nil {
		errs = append(errs, fmt.Errorf("actions %q with after %s, not an object", a, describe(rc.Change.After)))
	}
	if len(errs) > 0 {
		return c, false, addressed(c.Address, errors.Join(errs...))
	}
	if c.Action != ActionCreate {
		p, _, err := profileFromValues(before, nil, fallback, "before.")
		errs = append(errs, err)
		c.Before = &p
		c.Cluster = str(before["cluster_name"])
		if c.Action == ActionForget {
			after, _, _ := profileFromValues(before, nil, fallback, "before.")
			c.After = &after
		}
	}
	if needAfter {
		p, unknown, err := profileFromValues(after, rc.Change.AfterUnknown, fallback, "after.")
		errs = append(errs, err)
		c.After, c.Unknown = &p, unknown
		if cl := str(after["cluster_name"]); cl != "" || c.Cluster == "" {
			c.Cluster = cl
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, false, addressed(c.Address, err)
	}
	return c, true, nil
}

// profileFromValues maps the attributes of an aws_eks_fargate_profile to a
// Profile; unknown is the matching after_unknown value. It returns which
// attributes are unknown, and an error naming (after path, e.g. "after.")
// each known value of the wrong type: Terraform never writes one, so the
// file is not what it seems.
func profileFromValues(values map[string]any, unknown any, fallbackName, path string) (fargate.Profile, []string, error) {
	var unknownAttrs []string
	for _, attr := range []string{"cluster_name", "fargate_profile_name", "selector", "subnet_ids"} {
		if unknown == true || hasTrue(asObject(unknown)[attr]) {
			unknownAttrs = append(unknownAttrs, attr)
		}
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(path+format, args...)) }
	p := fargate.Profile{Status: str(values["status"]), PodExecutionRoleARN: str(values["pod_execution_role_arn"])}
	switch v := values["fargate_profile_name"]; {
	case unknownAt(unknown, "fargate_profile_name"):
		p.Name = cmp.Or(str(v), fallbackName)
	case isString(v):
		p.Name = v.(string)
	default:
		bad("fargate_profile_name is %s, not a string", describe(v))
	}
	selectors, ok := values["selector"].([]any)
	if !ok && values["selector"] != nil {
		bad("selector is %s, not a list", describe(values["selector"]))
	}
	for i, v := range selectors {
		if v == nil && unknownAt(unknown, "selector", i) {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			bad("selector[%d] is %s, not an object", i, describe(v))
			continue
		}
		s := fargate.Selector{Namespace: str(m["namespace"])}
		switch ns := m["namespace"]; {
		case unknownAt(unknown, "selector", i, "namespace"):
		case !isString(ns):
			bad("selector[%d].namespace is %s, not a string", i, describe(ns))
		case s.Namespace == "":
			bad("selector[%d].namespace is empty", i)
		}
		labels, ok := m["labels"].(map[string]any)
		if !ok && m["labels"] != nil {
			bad("selector[%d].labels is %s, not a map of strings", i, describe(m["labels"]))
		}
		for k, v := range labels {
			switch {
			case isString(v):
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels[k] = v.(string)
			case v == nil && unknownAt(unknown, "selector", i, "labels", k):
			default:
				bad("selector[%d].labels[%q] is %s, not a string", i, k, describe(v))
			}
		}
		p.Selectors = append(p.Selectors, s)
	}
	subnets, ok := values["subnet_ids"].([]any)
	if !ok && values["subnet_ids"] != nil {
		bad("subnet_ids is %s, not a list", describe(values["subnet_ids"]))
	}
	for i, v := range subnets {
		switch {
		case isString(v):
			p.Subnets = append(p.Subnets, v.(string))
		case v == nil && unknownAt(unknown, "subnet_ids", i):
		default:
			bad("subnet_ids[%d] is %s, not a string", i, describe(v))
		}
	}
	return p, unknownAttrs, errors.Join(errs...)
}

// addressed prefixes each error joined in err with the resource address.
func addressed(address string, err error) error {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, addressed(address, e))
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("%s: %w", address, err)
}

// unknownAt reports whether an after_unknown value marks the value at path
// (object keys and list indexes) unknown, itself or as part of a whole.
func unknownAt(unknown any, path ...any) bool {
	for _, step := range path {
		if unknown == true {
			return true
		}
		switch step := step.(type) {
		case string:
			unknown = asObject(unknown)[step]
		case int:
			l := asList(unknown)
			if step >= len(l) {
				return false
			}
			unknown = l[step]
		}
	}
	return unknown == true
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// describe shows a JSON value in an error, shortened.
func describe(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	if r := []rune(string(b)); len(r) > 40 {
		return string(r[:37]) + "..."
	}
	return string(b)
}

// lastElement is the last element of a resource address: its name and
// instance key, e.g. this[0] for module.x.aws_eks_fargate_profile.this[0].
func lastElement(address, module, typ string) string {
	rest := address
	if module != "" {
		rest = strings.TrimPrefix(rest, module+".")
	}
	return strings.TrimPrefix(rest, typ+".")
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// hasTrue reports whether an after_unknown value marks anything unknown.
func hasTrue(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case map[string]any:
		for _, e := range v {
			if hasTrue(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasTrue(e) {
				return true
			}
		}
	}
	return false
}

// isTerraformJSON reports whether data looks like `terraform show -json`
// output: a JSON object with format_version and terraform_version.
func isTerraformJSON(data []byte) bool {
	var head struct {
		FormatVersion    json.RawMessage `json:"format_version"`
		TerraformVersion json.RawMessage `json:"terraform_version"`
	}
	return json.Unmarshal(data, &head) == nil && head.FormatVersion != nil && head.TerraformVersion != nil
}

// parseTerraformSet is Parse for Terraform JSON: the profiles present after
// the plan (every profile of a state).
func parseTerraformSet(data []byte) (Set, error) {
	plan, err := parseTerraform(data)
	if err != nil {
		return Set{}, err
	}
	if len(plan.Changes) == 0 {
		return Set{}, errors.New("no aws_eks_fargate_profile in the Terraform plan or state")
	}
	set := Set{Foundation: plan.Foundation}
	var errs []error
	for _, c := range plan.Changes {
		if c.After != nil {
			// Known only after apply: nothing to validate yet.
			errs = append(errs, set.admit(*c.After, c.Address, len(c.Unknown) > 0))
		}
	}
	return set, errors.Join(errs...)
}
