package fargate

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ProfileLabel is the pod label EKS sets to the chosen profile, and with which
// a pod can ask for one profile among several that match it.
const ProfileLabel = "eks.amazonaws.com/fargate-profile"

// ComputeTypeAnnotation on a pod (template) set to "ec2" keeps it off Fargate.
const ComputeTypeAnnotation = "eks.amazonaws.com/compute-type"

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
}

// Active reports whether the profile places new pods.
func (p *Profile) Active() bool { return p.Status == "" || p.Status == StatusActive }

// Limits are EKS's quotas on profiles. They are adjustable on AWS, hence a
// value; a zero limit is not checked.
type Limits struct {
	SelectorsPerProfile int
	LabelsPerSelector   int
}

// DefaultLimits are the documented defaults.
var DefaultLimits = Limits{SelectorsPerProfile: 5, LabelsPerSelector: 5}

// Validate reports what EKS would refuse in the profile.
func (p *Profile) Validate(l Limits) error {
	var errs []error
	if p.Name == "" {
		errs = append(errs, errors.New("fargateProfileName is required"))
	} else if strings.HasPrefix(p.Name, "eks-") {
		errs = append(errs, fmt.Errorf("fargateProfileName %q starts with the reserved prefix 'eks-'", p.Name))
	}
	if len(p.Selectors) == 0 {
		errs = append(errs, errors.New("at least one selector is required"))
	}
	if l.SelectorsPerProfile > 0 && len(p.Selectors) > l.SelectorsPerProfile {
		errs = append(errs, fmt.Errorf("%d selectors, at most %d are allowed", len(p.Selectors), l.SelectorsPerProfile))
	}
	for i, s := range p.Selectors {
		if s.Namespace == "" {
			errs = append(errs, fmt.Errorf("selectors[%d].namespace is required", i))
		}
		if l.LabelsPerSelector > 0 && len(s.Labels) > l.LabelsPerSelector {
			errs = append(errs, fmt.Errorf("selectors[%d] has %d labels, at most %d are allowed", i, len(s.Labels), l.LabelsPerSelector))
		}
	}
	return errors.Join(errs...)
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
	// Iterative matching with backtracking to the last star: linear in
	// practice and never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	pr, sr := []rune(pattern), []rune(s)
	for i < len(sr) {
		switch {
		case p < len(pr) && (pr[p] == '?' || pr[p] == sr[i]):
			p++
			i++
		case p < len(pr) && pr[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pr) && pr[p] == '*' {
		p++
	}
	return p == len(pr)
}
