package fargate

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// ProfileLabel is the pod label EKS sets to the chosen profile, and with which
// a pod can ask for one profile among several that match it.
const ProfileLabel = "eks.amazonaws.com/fargate-profile"

// ComputeTypeAnnotation on a pod (template) set to "ec2" keeps it off Fargate.
const ComputeTypeAnnotation = "eks.amazonaws.com/compute-type"

// SchedulerName is the scheduler EKS's webhook gives the pods it sends to
// Fargate: fargate-scheduler places them.
const SchedulerName = "fargate-scheduler"

// CapacityProvisionedAnnotation is the pod annotation in which fargate-scheduler
// writes the size it runs, and bills, the pod at: "0.25vCPU 0.5GB".
const CapacityProvisionedAnnotation = "CapacityProvisioned"

// ComputeTypeLabel is the node label that tells Fargate nodes ("fargate") apart.
const ComputeTypeLabel = "eks.amazonaws.com/compute-type"

// Profile statuses, as the EKS API spells them.
const (
	StatusCreating     = "CREATING"
	StatusActive       = "ACTIVE"
	StatusDeleting     = "DELETING"
	StatusCreateFailed = "CREATE_FAILED"
	StatusDeleteFailed = "DELETE_FAILED"
)

// Selector selects pods by namespace and labels. A pod matches when its
// namespace matches Namespace and it carries every label of Labels. Namespace,
// label keys and label values may contain the wildcards * and ?.
type Selector struct {
	Namespace string            `json:"namespace"`
	Labels    map[string]string `json:"labels,omitempty"`
}

// Profile is a Fargate profile, as far as pod placement goes.
type Profile struct {
	Name      string     `json:"fargateProfileName"`
	Selectors []Selector `json:"selectors"`
	Subnets   []string   `json:"subnets,omitempty"`
	// Status is empty or ACTIVE for a profile that places pods.
	Status string `json:"status,omitempty"`
	// PodExecutionRoleARN is the IAM role the pods of the profile run with
	// (empty when the source does not say it). Validate ignores it.
	PodExecutionRoleARN string `json:"podExecutionRoleArn,omitempty"`
	// Source is where the profile was declared (file, and line when known),
	// for the findings about it.
	Source object.Source `json:"-"`
}

// Active reports whether the profile places new pods.
func (p *Profile) Active() bool { return p.Status == "" || p.Status == StatusActive }

// Limits are EKS's quotas on profiles. They are adjustable on AWS (raised on
// request), hence settings; a zero limit is not checked.
type Limits struct {
	ProfilesPerCluster  int
	SelectorsPerProfile int
	LabelsPerSelector   int
}

// DefaultLimits are the documented defaults (current values unconfirmed).
var DefaultLimits = Limits{ProfilesPerCluster: 10, SelectorsPerProfile: 5, LabelsPerSelector: 5}

// ViolationKind is one thing EKS refuses in a profile.
type ViolationKind string

// What EKS refuses in profiles.
const (
	NameRequired      ViolationKind = "name-required"
	NameReserved      ViolationKind = "name-reserved"
	NameInvalid       ViolationKind = "name-invalid"
	SelectorRequired  ViolationKind = "selector-required"
	NamespaceRequired ViolationKind = "namespace-required"
	TooManySelectors  ViolationKind = "too-many-selectors"
	TooManyLabels     ViolationKind = "too-many-labels"
	TooManyProfiles   ViolationKind = "too-many-profiles"
)

// Violation is one thing EKS refuses in a profile, at a field of it.
type Violation struct {
	Kind ViolationKind
	// Field is the profile's field ("selectors[1].labels"), in the EKS API's names.
	Field string
	// Message says what is wrong, to be read after the field.
	Message string
	// Limit is the quota exceeded, for the quota kinds.
	Limit int
}

func (v Violation) Error() string { return v.Field + " " + v.Message }

// Quota reports whether the violation exceeds one of EKS's adjustable
// quotas: EKS refuses the profile, but another account's limits may allow it.
func (v Violation) Quota() bool {
	return v.Kind == TooManySelectors || v.Kind == TooManyLabels || v.Kind == TooManyProfiles
}

// Violations are a profile's violations.
type Violations []Violation

// Err joins the violations into an error; nil when there are none.
func (vs Violations) Err() error {
	errs := make([]error, len(vs))
	for i, v := range vs {
		errs[i] = v
	}
	return errors.Join(errs...)
}

// Quotas returns the violations of adjustable quotas.
func (vs Violations) Quotas() Violations {
	var out Violations
	for _, v := range vs {
		if v.Quota() {
			out = append(out, v)
		}
	}
	return out
}

// profileName is what EKS accepts as a profile name: CloudFormation's
// pattern and length (unconfirmed for the API itself).
var profileName = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]*$`)

// Validate returns what EKS refuses in the profile, name first, then
// selectors, each with the field it concerns.
func (p *Profile) Validate(l Limits) Violations {
	var out Violations
	bad := func(kind ViolationKind, field string, limit int, format string, args ...any) {
		out = append(out, Violation{Kind: kind, Field: field, Limit: limit, Message: fmt.Sprintf(format, args...)})
	}
	switch {
	case p.Name == "":
		bad(NameRequired, "fargateProfileName", 0, "is required")
	case strings.HasPrefix(p.Name, "eks-"):
		bad(NameReserved, "fargateProfileName", 0, "%q starts with the reserved prefix 'eks-'", p.Name)
	case len(p.Name) > 100 || !profileName.MatchString(p.Name):
		bad(NameInvalid, "fargateProfileName", 0, "%q is not valid: letters, digits, - and _, starting with a letter or digit, at most 100 characters", p.Name)
	}
	if len(p.Selectors) == 0 {
		bad(SelectorRequired, "selectors", 0, "is empty: at least one selector is required")
	}
	if l.SelectorsPerProfile > 0 && len(p.Selectors) > l.SelectorsPerProfile {
		bad(TooManySelectors, "selectors", l.SelectorsPerProfile, "has %d selectors, at most %d are allowed", len(p.Selectors), l.SelectorsPerProfile)
	}
	for i, s := range p.Selectors {
		if s.Namespace == "" {
			bad(NamespaceRequired, fmt.Sprintf("selectors[%d].namespace", i), 0, "is required")
		}
		if l.LabelsPerSelector > 0 && len(s.Labels) > l.LabelsPerSelector {
			bad(TooManyLabels, fmt.Sprintf("selectors[%d].labels", i), l.LabelsPerSelector, "has %d labels, at most %d are allowed", len(s.Labels), l.LabelsPerSelector)
		}
	}
	return out
}

// ValidateCluster returns what EKS refuses in a cluster's set of profiles
// beyond each profile's own fields: more profiles than the quota.
func ValidateCluster(profiles []Profile, l Limits) Violations {
	if l.ProfilesPerCluster > 0 && len(profiles) > l.ProfilesPerCluster {
		return Violations{{Kind: TooManyProfiles, Field: "fargateProfiles", Limit: l.ProfilesPerCluster,
			Message: fmt.Sprintf("has %d profiles for one cluster, at most %d are allowed", len(profiles), l.ProfilesPerCluster)}}
	}
	return nil
}

// Matches reports whether a pod in namespace ns with the given labels matches
// the selector.
func (s *Selector) Matches(ns string, labels map[string]string) bool {
	if !Wildcard(s.Namespace, ns) {
		return false
	}
	for k, v := range s.Labels {
		if !hasLabel(labels, k, v) {
			return false
		}
	}
	return true
}

func hasLabel(labels map[string]string, key, value string) bool {
	if !strings.ContainsAny(key, "*?") {
		got, ok := labels[key]
		return ok && Wildcard(value, got)
	}
	for k, got := range labels {
		if Wildcard(key, k) && Wildcard(value, got) {
			return true
		}
	}
	return false
}

// Matches reports whether any selector of the profile matches the pod.
func (p *Profile) Matches(ns string, labels map[string]string) bool {
	for i := range p.Selectors {
		if p.Selectors[i].Matches(ns, labels) {
			return true
		}
	}
	return false
}

// Choice is the outcome of matching a pod against profiles.
type Choice struct {
	// Profile is the chosen profile, nil when none matches.
	Profile *Profile
	// Matching lists the names of every active profile that matches, sorted.
	Matching []string
	// ByLabel is true when the pod's eks.amazonaws.com/fargate-profile label
	// made the choice.
	ByLabel bool
}

// Choose picks the profile EKS would apply to a new pod: among the active
// profiles that match, the one named by the pod's ProfileLabel if it is one of
// them, otherwise the first by alphanumeric order of names. The EKS user guide
// documents the alphanumeric order; an AWS re:Post article says "random". This
// project follows the user guide (see docs/fargate-behaviour.md).
func Choose(profiles []Profile, ns string, labels map[string]string) Choice {
	var c Choice
	var chosen *Profile
	for i := range profiles {
		p := &profiles[i]
		if !p.Active() || !p.Matches(ns, labels) {
			continue
		}
		c.Matching = append(c.Matching, p.Name)
		if chosen == nil || p.Name < chosen.Name {
			chosen = p
		}
		if want, ok := labels[ProfileLabel]; ok && want == p.Name {
			c.Profile, c.ByLabel = p, true
		}
	}
	sort.Strings(c.Matching)
	if c.Profile == nil {
		c.Profile = chosen
	}
	return c
}

// Wildcard reports whether s matches pattern, where * matches any run of
// characters (also none) and ? exactly one character. No other character is
// special: EKS selectors support no regular expressions or classes.
func Wildcard(pattern, s string) bool {
	return match([]rune(pattern), []rune(s), false)
}

// WildcardCovers reports whether pattern t matches every string that
// pattern s matches, both in Wildcard's syntax: whether a selector with t
// selects every pod that one with s selects. It is Wildcard with the
// wildcards of s read as characters that only a wildcard of t at least as
// wide matches: a * of s only a * of t, a ? of s a ? or a * of t. For a
// literal s it is Wildcard(t, s).
//
// A true is always right. A false can be wrong when the wildcards of t
// cover those of s in another order ("*?" covers "?*"); plan then reports a
// selector as not covered, which is the cautious side.
func WildcardCovers(t, s string) bool {
	return match([]rune(t), []rune(s), true)
}

// match reports whether s matches pattern. With patterns, s is a pattern
// too, and only a * of pattern matches a * of s. A ? of s needs no care:
// no literal of pattern is a ?.
func match(pattern, s []rune, patterns bool) bool {
	// Iterative matching with backtracking to the last star: at most
	// len(pattern)*len(s) steps, never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			// Before the literal case: a * of the pattern matched to a * of
			// s as one character would not be backtracked to.
			star, mark = p, i
			p++
		case p < len(pattern) && (pattern[p] == s[i] || pattern[p] == '?' && (!patterns || s[i] != '*')):
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
