package profiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// Terraform resource types read from plans and states (AWS provider).
const (
	tfProfileType   = "aws_eks_fargate_profile"
	tfNodeGroupType = "aws_eks_node_group"
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
	// delete of its own, with the Address of the current object.
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
	// of the address, e.g. "this[0]".
	Unknown []string
}

// TerraformPlan is what a plan or state says about a cluster's Fargate profiles.
type TerraformPlan struct {
	// Changes are in the plan's order (Terraform sorts resource_changes by
	// address, which is not the order of apply); for a state file: every
	// profile, with Action no-op and Before equal to After.
	Changes []ProfileChange
	// NodeGroups are the addresses of the aws_eks_node_group resources
	// present before or after the plan (EC2 capacity exists), sorted.
	NodeGroups []string
	// TerraformVersion is the version of Terraform that wrote the file.
	TerraformVersion string
}

// errNotTerraform says what ParseTerraform expects.
var errNotTerraform = errors.New("not `terraform show -json` output: expected a JSON object with format_version, " +
	"and resource_changes (a saved plan) or values (a state)")

// planKeys are top-level keys that only a plan has.
var planKeys = []string{"planned_values", "resource_changes", "prior_state", "resource_drift", "output_changes", "configuration"}

// ParseTerraform reads the aws_eks_fargate_profile resources, at any module
// depth, of `terraform show -json` output: of a saved plan (their changes) or
// of a state (every profile, unchanged). A file without such a resource gives
// a TerraformPlan without Changes and no error. Errors name file.
func ParseTerraform(file string, data []byte) (*TerraformPlan, error) {
	plan, err := parseTerraform(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
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
	return fromState(&s), nil
}

func fromPlan(p *tfjson.Plan) (*TerraformPlan, error) {
	out := &TerraformPlan{TerraformVersion: p.TerraformVersion}
	nodeGroups := map[string]bool{}
	for _, rc := range p.ResourceChanges {
		if rc == nil || rc.Mode == tfjson.DataResourceMode || rc.Change == nil {
			continue
		}
		switch rc.Type {
		case tfProfileType:
			c, ok, err := profileChange(rc)
			if err != nil {
				return nil, err
			}
			if ok {
				out.Changes = append(out.Changes, c)
			}
		case tfNodeGroupType:
			if !rc.Change.Actions.Read() && (rc.Change.Before != nil || rc.Change.After != nil) {
				nodeGroups[rc.Address] = true
			}
		}
	}
	collect := func(r *tfjson.StateResource, _ string) {
		if r.Type == tfNodeGroupType {
			nodeGroups[r.Address] = true
		}
	}
	if p.PriorState != nil {
		walkState(p.PriorState.Values, collect)
	}
	walkState(p.PlannedValues, collect)
	out.NodeGroups = sortedKeys(nodeGroups)
	return out, nil
}

func fromState(s *tfjson.State) *TerraformPlan {
	out := &TerraformPlan{TerraformVersion: s.TerraformVersion}
	nodeGroups := map[string]bool{}
	walkState(s.Values, func(r *tfjson.StateResource, module string) {
		switch r.Type {
		case tfProfileType:
			name := lastElement(r.Address, module, r.Type)
			before, _ := profileFromValues(r.AttributeValues, nil, name)
			after, _ := profileFromValues(r.AttributeValues, nil, name)
			out.Changes = append(out.Changes, ProfileChange{
				Address: r.Address, Cluster: str(r.AttributeValues["cluster_name"]),
				Action: ActionNoop, Before: &before, After: &after,
			})
		case tfNodeGroupType:
			nodeGroups[r.Address] = true
		}
	})
	out.NodeGroups = sortedKeys(nodeGroups)
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
	c = ProfileChange{Address: rc.Address}
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
		return c, false, fmt.Errorf("%s: unexpected change actions %q", rc.Address, a)
	}
	fallback := lastElement(rc.Address, rc.ModuleAddress, rc.Type)
	before, after := asObject(rc.Change.Before), asObject(rc.Change.After)
	if c.Action != ActionCreate {
		p, _ := profileFromValues(before, nil, fallback)
		c.Before = &p
		c.Cluster = str(before["cluster_name"])
	}
	switch c.Action {
	case ActionDelete:
	case ActionForget:
		p, _ := profileFromValues(before, nil, fallback)
		c.After = &p
	default:
		p, unknown := profileFromValues(after, rc.Change.AfterUnknown, fallback)
		c.After, c.Unknown = &p, unknown
		if cl := str(after["cluster_name"]); cl != "" || c.Cluster == "" {
			c.Cluster = cl
		}
	}
	return c, true, nil
}

// profileFromValues maps the attributes of an aws_eks_fargate_profile to a
// Profile; unknown is the matching after_unknown value. It returns which
// attributes are unknown.
func profileFromValues(values map[string]any, unknown any, fallbackName string) (fargate.Profile, []string) {
	var unknownAttrs []string
	all := unknown == true
	um := asObject(unknown)
	for _, attr := range []string{"cluster_name", "fargate_profile_name", "selector", "subnet_ids"} {
		if all || hasTrue(um[attr]) {
			unknownAttrs = append(unknownAttrs, attr)
		}
	}
	p := fargate.Profile{Name: str(values["fargate_profile_name"]), Status: str(values["status"])}
	if p.Name == "" && (all || hasTrue(um["fargate_profile_name"])) {
		p.Name = fallbackName
	}
	for _, v := range asList(values["selector"]) {
		m := asObject(v)
		if m == nil {
			continue
		}
		s := fargate.Selector{Namespace: str(m["namespace"])}
		for k, v := range asObject(m["labels"]) {
			if v, ok := v.(string); ok {
				if s.Labels == nil {
					s.Labels = map[string]string{}
				}
				s.Labels[k] = v
			}
		}
		p.Selectors = append(p.Selectors, s)
	}
	for _, v := range asList(values["subnet_ids"]) {
		if v, ok := v.(string); ok {
			p.Subnets = append(p.Subnets, v)
		}
	}
	return p, unknownAttrs
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

func sortedKeys(m map[string]bool) []string {
	if len(m) == 0 {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
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
	var set Set
	var errs []error
	for _, c := range plan.Changes {
		if c.After != nil {
			// Known only after apply: nothing to validate yet.
			errs = append(errs, set.admit(*c.After, c.Address, len(c.Unknown) > 0))
		}
	}
	return set, errors.Join(errs...)
}
