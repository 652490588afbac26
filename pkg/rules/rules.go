package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Severity orders findings: a Blocker stops the workload from running on
// Fargate (or the cluster from being upgraded), a Warning costs availability,
// money or correctness, an Info is worth knowing.
type Severity int

// Severities, from least to most severe.
const (
	Info Severity = iota + 1
	Warning
	Blocker
)

var severityNames = map[Severity]string{Info: "info", Warning: "warning", Blocker: "blocker"}

func (s Severity) String() string {
	if n, ok := severityNames[s]; ok {
		return n
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// Worst returns the highest severity of fs, 0 when there is none.
func Worst(fs []Finding) Severity {
	var worst Severity
	for _, f := range fs {
		worst = max(worst, f.Severity)
	}
	return worst
}

// ParseSeverity reads "blocker", "warning" or "info".
func ParseSeverity(s string) (Severity, error) {
	for k, v := range severityNames {
		if v == strings.ToLower(s) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown severity %q (want blocker, warning or info)", s)
}

// ParseFailOn reads a --fail-on value: a severity, or "none" (0: never fail on findings).
func ParseFailOn(s string) (Severity, error) {
	if s == "none" {
		return 0, nil
	}
	sev, err := ParseSeverity(s)
	if err != nil {
		return 0, fmt.Errorf("--fail-on must be blocker, warning, info or none, not %q", s)
	}
	return sev, nil
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Category groups rules.
type Category string

// Categories.
const (
	CategoryFargate      Category = "fargate"
	CategoryDeprecation  Category = "deprecation"
	CategoryAvailability Category = "availability"
	CategoryCost         Category = "cost"
	CategoryConfig       Category = "config"
)

// Categories lists every category in documentation order.
var Categories = []Category{CategoryFargate, CategoryDeprecation, CategoryAvailability, CategoryCost, CategoryConfig}

// Rule is one check. A rule is a value: it never does I/O and keeps no state.
// Exactly one of Check and CheckCluster is set.
type Rule struct {
	// ID is stable and never reused: FG### for Fargate rules, DEP### for
	// deprecations, PL### for the findings of `fargatekit plan`, LV### for
	// those of `fargatekit scan` about what runs.
	ID string
	// Name is a short kebab-case name, also accepted wherever an ID is.
	Name     string
	Category Category
	Severity Severity
	// Summary is one sentence for listings.
	Summary string
	// Doc explains what the rule checks and why, in Markdown.
	Doc string
	// Remediation says how to fix a finding.
	Remediation string
	// Unconfirmed says which part of the behaviour no AWS source settles; empty when all is documented.
	Unconfirmed string
	// Refusal is the reason fargate-scheduler refuses a pod that this rule
	// reports: the engine reports, as blockers, the refusals of this kind of
	// every workload on Fargate (fargate.Refusals), where fargate.Refusal.Field
	// points. The emulator's fargate-scheduler refuses exactly these.
	Refusal fargate.RefusalKind
	// Check runs on every object as it is read; w is nil for objects that
	// create no pods. A rule with a Refusal may also have a Check: what it
	// reports when the settings say Fargate accepts the pod after all.
	Check func(ctx *Context, obj *object.Object, w *Workload) []Finding
	// CheckCluster runs once after every object was read, for rules that
	// relate objects. It reports each finding as it finds it, so that the
	// findings of a rule about every workload are never all held at once.
	CheckCluster func(ctx *Context, c *Cluster, report func(Finding))
}

// Finding is one problem a rule found in one object.
type Finding struct {
	Rule     *Rule
	Severity Severity
	Object   object.Ref
	Source   object.Source
	// Path is the field path the finding points at, empty for the object as a whole.
	Path    string
	Message string
	Details map[string]string
}

// At returns a finding at a field path of obj. The engine fills in the rule
// and, unless the finding sets one, the rule's severity.
func At(obj *object.Object, path, format string, args ...any) Finding {
	return Finding{
		Object:  obj.Ref,
		Source:  object.Source{File: obj.Source.File, Line: obj.Line(path)},
		Path:    path,
		Message: fmt.Sprintf(format, args...),
	}
}

// AtWorkload returns a finding about a workload known only by its summary.
func AtWorkload(w *Workload, format string, args ...any) Finding {
	return Finding{Object: w.Ref, Source: w.Source, Message: fmt.Sprintf(format, args...)}
}

// OnFargate returns a Check that runs check only on objects whose pods go to Fargate.
func OnFargate(check func(ctx *Context, obj *object.Object, w *Workload) []Finding) func(*Context, *object.Object, *Workload) []Finding {
	return func(ctx *Context, obj *object.Object, w *Workload) []Finding {
		if w == nil || !w.Placement.Fargate {
			return nil
		}
		return check(ctx, obj, w)
	}
}

// Workload is what the engine keeps of an object that creates pods: enough
// for the output and for the rules that relate objects, not the object itself.
type Workload struct {
	Ref       object.Ref
	Source    object.Source
	Namespace string
	// Labels are the pod template's labels.
	Labels    map[string]string
	Replicas  int
	Placement fargate.Placement
	Sizing    fargate.Sizing
	// HourlyCostUSD is the price of all replicas for an hour on Fargate, 0 when not on Fargate.
	HourlyCostUSD float64
	// MonthlyCostUSD is the price of all replicas for a month on Fargate, 0 when
	// not on Fargate or when the workload runs to completion (Job, CronJob).
	MonthlyCostUSD float64
	// Unrequested is the share of that price which pays for capacity the
	// pods did not request (fargate.Price.Unrequested), 0 when not on Fargate.
	Unrequested float64
	// ServiceAccount is the pod's service account ("default" when unset).
	ServiceAccount string
	// Claims are the names of the PersistentVolumeClaims the pods mount.
	Claims []string
	// DynamicVolumes are the volumes provisioned per pod or replica.
	DynamicVolumes []DynamicVolume
	// Refusals are the reasons fargate-scheduler refuses the pods; nil when
	// they do not go to Fargate.
	Refusals []fargate.Refusal
}

// DynamicVolume is a volume created on demand for the pods: a StatefulSet
// volumeClaimTemplate or a generic ephemeral volume.
type DynamicVolume struct {
	Name string
	// Ephemeral is true for a generic ephemeral volume, false for a claim template.
	Ephemeral bool
	// StorageClass is the claim's storageClassName; nil when unset.
	StorageClass *string
	// Line is where the volume is declared.
	Line int
}

// Runs reports whether the workload's pods run on Fargate: sent there by a
// profile, and not refused by fargate-scheduler.
func (w *Workload) Runs() bool {
	return w.Placement.Fargate && len(w.Refusals) == 0
}

// Context is what every rule may read about the run.
type Context struct {
	// Profiles are the Fargate profiles; nil when none were given, in which case
	// every workload is assessed as a Fargate candidate.
	Profiles []fargate.Profile
	// Namespace is the namespace of objects that name none ("default").
	Namespace string
	// TargetVersion is the Kubernetes minor version to check against ("1.35").
	TargetVersion string
	// Region and Price are where costs are computed.
	Region string
	Price  fargate.Price
	// PodIdentity lists EKS Pod Identity associations known from outside the
	// manifests (eksctl ClusterConfig).
	PodIdentity []PodIdentityAssociation
	// Place, when set, says where a workload's pods go instead of
	// fargate.Place with Profiles: scan, without the profiles, places a
	// workload where its pods run.
	Place func(obj *object.Object, namespace string) fargate.Placement
	// Settings are the settings of .fargatekit.yaml that model EKS: allowed
	// capabilities, privilege escalation, quotas (a zero limit is not checked).
	Settings fargate.Settings
	// Foundation is what the infrastructure code or the live AWS APIs say
	// about the cluster's VPC, roles and EC2 capacity; nil when nothing does.
	Foundation *foundation.Foundation
}

// PodIdentityAssociation binds an IAM role to a service account with EKS Pod Identity.
type PodIdentityAssociation struct {
	Namespace      string
	ServiceAccount string
	// Source names where it was declared.
	Source object.Source
}

// NamespaceOf returns the namespace an object lands in.
func (c *Context) NamespaceOf(ref object.Ref) string {
	if ref.Namespace != "" {
		return ref.Namespace
	}
	if c.Namespace != "" {
		return c.Namespace
	}
	return "default"
}

var (
	idPattern   = regexp.MustCompile(`^(FG|DEP|PL|LV)\d{3}$`)
	namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
)

// Validate reports what is wrong with a rule's definition.
func (r *Rule) Validate() error {
	var problems []string
	if !idPattern.MatchString(r.ID) {
		problems = append(problems, "ID must look like FG001 or DEP001")
	}
	if !namePattern.MatchString(r.Name) {
		problems = append(problems, "name must be kebab-case")
	}
	if r.Severity < Info || r.Severity > Blocker {
		problems = append(problems, "severity is not set")
	}
	known := false
	for _, c := range Categories {
		known = known || c == r.Category
	}
	if !known {
		problems = append(problems, fmt.Sprintf("unknown category %q", r.Category))
	}
	if r.Summary == "" || r.Doc == "" || r.Remediation == "" {
		problems = append(problems, "summary, doc and remediation are required")
	}
	// Engine rules have exactly one check (a Refusal is one, which may come
	// with a Check); plan rules (PL) and live rules (LV) have none: the plan
	// simulation and the analysis of a running cluster produce their findings.
	checks := 0
	for _, set := range []bool{r.Check != nil && r.Refusal == "", r.CheckCluster != nil, r.Refusal != ""} {
		if set {
			checks++
		}
	}
	if engine := !strings.HasPrefix(r.ID, "PL") && !strings.HasPrefix(r.ID, "LV"); (engine && checks != 1) || (!engine && checks != 0) {
		problems = append(problems, "an FG or DEP rule sets exactly one of Refusal, Check and CheckCluster, a PL or LV rule none")
	}
	if r.Refusal != "" && (r.CheckCluster != nil || !slices.Contains(fargate.RefusalKinds, r.Refusal)) {
		problems = append(problems, fmt.Sprintf("refusal %q is not a fargate.RefusalKind, or comes with a CheckCluster", r.Refusal))
	}
	if len(problems) > 0 {
		return fmt.Errorf("rule %s (%s): %s", r.ID, r.Name, strings.Join(problems, "; "))
	}
	return nil
}

// Registry holds rules by ID and name.
type Registry struct {
	rules []*Rule
	byKey map[string]*Rule
}

// NewRegistry checks every rule and refuses duplicate IDs or names.
func NewRegistry(rules ...*Rule) (*Registry, error) {
	reg := &Registry{byKey: map[string]*Rule{}}
	for _, r := range rules {
		if err := r.Validate(); err != nil {
			return nil, err
		}
		for _, k := range []string{r.ID, r.Name} {
			if _, dup := reg.byKey[k]; dup {
				return nil, fmt.Errorf("rule %s: %q is used twice", r.ID, k)
			}
			reg.byKey[k] = r
		}
		reg.rules = append(reg.rules, r)
	}
	return reg, nil
}

// Rules returns the rules in registration order.
func (g *Registry) Rules() []*Rule { return g.rules }

// Lookup finds a rule by ID or name.
func (g *Registry) Lookup(key string) (*Rule, bool) {
	r, ok := g.byKey[key]
	return r, ok
}

// OnFargatePods is OnFargate for checks about the pods themselves: it skips
// DaemonSets, whose pods Fargate refuses whatever they hold (FG001 says so).
func OnFargatePods(check func(ctx *Context, obj *object.Object, w *Workload) []Finding) func(*Context, *object.Object, *Workload) []Finding {
	return OnFargate(func(ctx *Context, obj *object.Object, w *Workload) []Finding {
		if obj.Ref.Kind == "DaemonSet" {
			return nil
		}
		return check(ctx, obj, w)
	})
}

// Where names the profile that places a workload on Fargate, as a suffix for
// finding messages: ` (Fargate profile "web")`, or "" when no profiles were
// given (every workload is then a candidate, which the output says once).
func Where(w *Workload) string {
	if w.Placement.Profile == "" {
		return ""
	}
	return fmt.Sprintf(" (Fargate profile %q)", w.Placement.Profile)
}
