// Package settings reads .fargatekit.yaml, the one configuration of every
// fargatekit command: which rules run and at what severity, which files are
// not read, and the settings that model EKS on Fargate where AWS documents
// nothing (fargate.Settings). check, plan and the emulator load it through
// Resolve and apply it the same way.
package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/spf13/pflag"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// FileName is the settings file looked up in the working directory.
const FileName = ".fargatekit.yaml"

// File is the settings file's schema.
type File struct {
	// Disable lists rules (IDs or names) that do not run.
	Disable []string `json:"disable"`
	// Severity changes a rule's severity: FG030: info. The rules that report
	// what fargate-scheduler refuses are blockers, always, and cannot be
	// disabled either (FG005 follows RefusePrivilegeEscalation).
	Severity map[string]string `json:"severity"`
	// IgnorePaths are glob patterns (with **) of files not read from directories.
	IgnorePaths []string `json:"ignorePaths"`
	// AllowedCapabilities replaces the Linux capabilities assumed accepted on
	// Fargate (default NET_BIND_SERVICE; AWS documents none).
	AllowedCapabilities *[]string `json:"allowedCapabilities"`
	// RefusePrivilegeEscalation makes allowPrivilegeEscalation: true a
	// refusal (default false: a warning, and the emulator runs the pod).
	RefusePrivilegeEscalation bool `json:"refusePrivilegeEscalation"`
	// AZChoice is how fargate-scheduler picks an AZ: uniform (default) or balanced.
	AZChoice string `json:"azChoice"`
	// HonourZoneSelector makes fargate-scheduler pick a subnet of the AZ a
	// pod's topology.kubernetes.io/zone node selector names (default false:
	// ignored, like affinity; unconfirmed on AWS).
	HonourZoneSelector bool `json:"honourZoneSelector"`
	// MemoryLimitAboveSizeFails makes a container whose memory limit is
	// above the Fargate size of its pod fail to start, as one with such a
	// CPU limit does (default false: it starts; unconfirmed on AWS).
	MemoryLimitAboveSizeFails bool `json:"memoryLimitAboveSizeFails"`
	// IRSAInjectsRegion says that EKS gives the pods of IRSA service
	// accounts AWS_REGION and AWS_DEFAULT_REGION, which tell controllers
	// the region they would ask IMDS for (default true; reported by
	// users, not documented by AWS).
	IRSAInjectsRegion *bool `json:"irsaInjectsRegion"`
	// InvalidLogging is what a Fargate pod's logging becomes when it is
	// created while the aws-logging ConfigMap is invalid: disabled (the
	// default, with a LoggingDisabled event naming the problem) or enabled
	// (logs lost silently); unconfirmed on AWS.
	InvalidLogging string `json:"invalidLogging"`
	// AZOutage is what the emulator's fargate-scheduler does, while an AZ
	// is down, with a pod whose profile has subnets in other AZs too:
	// redraw (the default: among the AZs that are up) or fail (as the draw
	// says: a pod drawn into the AZ that is down waits); unconfirmed on AWS.
	AZOutage string `json:"azOutage"`
	// Limits override EKS's quotas on profiles, raised on request on AWS.
	Limits *LimitsFile `json:"limits"`
	// Upgrade says what EKS refuses before a control-plane version update,
	// where that is unconfirmed.
	Upgrade *UpgradeFile `json:"upgrade"`
}

// UpgradeFile is the upgrade section.
type UpgradeFile struct {
	// FargateNodesBehind is what UpdateClusterVersion does while Fargate pods
	// run on kubelets older than the control plane: refuse (the default, as
	// EKS does for node groups) or allow.
	FargateNodesBehind string `json:"fargateNodesBehind"`
	// ReadinessErrors is what UpdateClusterVersion does while an upgrade
	// insight of the new version is in ERROR: refuse (the default, as the API
	// reference documents) or allow.
	ReadinessErrors string `json:"readinessErrors"`
}

// LimitsFile is the limits section; unset fields keep EKS's defaults.
type LimitsFile struct {
	ProfilesPerCluster  *int `json:"profilesPerCluster"`
	SelectorsPerProfile *int `json:"selectorsPerProfile"`
	LabelsPerSelector   *int `json:"labelsPerSelector"`
}

// Settings is a validated settings file.
type Settings struct {
	// Path is the file read; "" when there was none.
	Path     string
	Disabled map[string]bool // by rule ID
	Severity map[string]rules.Severity
	Ignore   []string
	// Dir is the directory ignore patterns are relative to: the file's, or
	// the working directory without a file.
	Dir string
	// Fargate is what models EKS on Fargate.
	Fargate fargate.Settings
	// Upgrade is what models EKS's version updates.
	Upgrade eks.UpgradePolicy
}

// Default returns the settings without a file, relative to the working directory.
func Default() *Settings {
	dir, _ := os.Getwd()
	return &Settings{Disabled: map[string]bool{}, Severity: map[string]rules.Severity{}, Dir: dir, Fargate: fargate.DefaultSettings(), Upgrade: eks.DefaultUpgradePolicy}
}

// Resolve loads the settings every command uses: the file at path (a
// --settings flag), or FileName in the working directory when path is ""
// and that file exists.
func Resolve(path string) (*Settings, error) {
	if path != "" {
		return Load(path)
	}
	if _, err := os.Stat(FileName); errors.Is(err, os.ErrNotExist) {
		return Default(), nil
	}
	return Load(FileName)
}

// Load reads the settings file at path.
func Load(path string) (*Settings, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("reading settings: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading settings: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("settings %s: %w", path, err)
	}
	s.Path, s.Dir = abs, filepath.Dir(abs)
	return s, nil
}

// Parse validates a settings file's contents against the rules of check
// and plan, naming every field that is wrong.
func Parse(data []byte) (*Settings, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	reg, err := rules.NewRegistry(builtin.All()...)
	if err != nil {
		return nil, err
	}
	s := Default()
	s.Ignore = f.IgnorePaths
	if f.AllowedCapabilities != nil {
		s.Fargate.AllowedCapabilities = append([]string{}, *f.AllowedCapabilities...)
	}
	s.Fargate.RefusePrivilegeEscalation = f.RefusePrivilegeEscalation // before severity, which may set it too
	s.Fargate.HonourZoneSelector = f.HonourZoneSelector
	s.Fargate.FailMemoryLimitAboveSize = f.MemoryLimitAboveSizeFails
	s.Fargate.NoIRSARegion = f.IRSAInjectsRegion != nil && !*f.IRSAInjectsRegion
	var errs []error
	if c, err := fargate.ParseAZChoice(f.AZChoice); err != nil {
		errs = append(errs, fmt.Errorf("azChoice: %w", err))
	} else {
		s.Fargate.AZChoice = c
	}
	if o, err := fargate.ParseAZOutage(f.AZOutage); err != nil {
		errs = append(errs, fmt.Errorf("azOutage: %w", err))
	} else {
		s.Fargate.AZOutage = o
	}
	if l, err := fargate.ParseInvalidLogging(f.InvalidLogging); err != nil {
		errs = append(errs, fmt.Errorf("invalidLogging: %w", err))
	} else {
		s.Fargate.InvalidLogging = l
	}
	if u := f.Upgrade; u != nil {
		// refuse sets *to from value: "refuse" (or unset, the default) or "allow".
		refuse := func(field, value string, to *bool) {
			switch value {
			case "", "refuse":
			case "allow":
				*to = false
			default:
				errs = append(errs, fmt.Errorf("upgrade.%s: %q is not refuse or allow", field, value))
			}
		}
		refuse("fargateNodesBehind", u.FargateNodesBehind, &s.Upgrade.RefuseFargateBehind)
		refuse("readinessErrors", u.ReadinessErrors, &s.Upgrade.RefuseReadinessErrors)
	}
	if l := f.Limits; l != nil {
		for _, v := range []struct {
			field string
			from  *int
			to    *int
		}{
			{"profilesPerCluster", l.ProfilesPerCluster, &s.Fargate.Limits.ProfilesPerCluster},
			{"selectorsPerProfile", l.SelectorsPerProfile, &s.Fargate.Limits.SelectorsPerProfile},
			{"labelsPerSelector", l.LabelsPerSelector, &s.Fargate.Limits.LabelsPerSelector},
		} {
			switch {
			case v.from == nil:
			case *v.from < 1:
				errs = append(errs, fmt.Errorf("limits.%s: must be at least 1, not %d", v.field, *v.from))
			default:
				*v.to = *v.from
			}
		}
	}
	for _, k := range f.Disable {
		r, ok := reg.Lookup(k)
		if !ok {
			errs = append(errs, fmt.Errorf("disable: unknown rule %q", k))
			continue
		}
		if r.Refusal != "" {
			errs = append(errs, fmt.Errorf("disable: %s reports what fargate-scheduler refuses, which the emulator refuses whatever check says; "+
				"silence it on one object with the annotation %s: %s", r.ID, rules.IgnoreAnnotation, r.ID))
			continue
		}
		s.Disabled[r.ID] = true
	}
	// In key order, so that the joined error reads the same on every run.
	for _, k := range slices.Sorted(maps.Keys(f.Severity)) {
		v := f.Severity[k]
		r, ok := reg.Lookup(k)
		if !ok {
			errs = append(errs, fmt.Errorf("severity: unknown rule %q", k))
			continue
		}
		sev, err := rules.ParseSeverity(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("severity.%s: %w", k, err))
			continue
		}
		switch {
		case r.Refusal == fargate.RefusePrivilegeEscalation && sev == rules.Blocker:
			// What the documents of fargatekit 0.1 advised: the setting says it now.
			slog.Warn("severity FG005: blocker is deprecated: set refusePrivilegeEscalation: true, which the emulator applies too")
			s.Fargate.RefusePrivilegeEscalation = true
			continue
		case r.Refusal == fargate.RefusePrivilegeEscalation:
			errs = append(errs, fmt.Errorf("severity.%s: FG005 is a warning, or a blocker with refusePrivilegeEscalation: true; no other severity", k))
			continue
		case r.Refusal != "":
			errs = append(errs, fmt.Errorf("severity.%s: %s reports what fargate-scheduler refuses, always a blocker; its severity cannot change", k, r.ID))
			continue
		}
		s.Severity[r.ID] = sev
	}
	for _, p := range f.IgnorePaths {
		if !doublestar.ValidatePattern(p) {
			errs = append(errs, fmt.Errorf("ignorePaths: invalid pattern %q", p))
		}
	}
	return s, errors.Join(errs...)
}

// Ignored reports whether a file path matches one of the ignore patterns,
// which are relative to the settings file's directory (so that `check .` and
// `check $PWD` ignore the same files).
func (s *Settings) Ignored(path string) bool {
	p := filepath.Clean(path)
	if s.Dir != "" {
		if abs, err := filepath.Abs(p); err == nil {
			if rel, err := filepath.Rel(s.Dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
	}
	p = filepath.ToSlash(p)
	for _, pattern := range s.Ignore {
		if ok, _ := doublestar.Match(pattern, p); ok {
			return true
		}
	}
	return false
}

// Rules returns the built-in rules less the disabled ones.
func (s *Settings) Rules() []*rules.Rule { return s.Enabled(builtin.Rules()) }

// Enabled returns the rules of rs that are not disabled.
func (s *Settings) Enabled(rs []*rules.Rule) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range rs {
		if !s.Disabled[r.ID] {
			out = append(out, r)
		}
	}
	return out
}

// Apply applies the settings to findings made outside the engine (plan's):
// those of disabled rules go, and severities change as the settings say.
func (s *Settings) Apply(fs []rules.Finding) []rules.Finding {
	out := fs[:0]
	for _, f := range fs {
		if s.Disabled[f.Rule.ID] {
			continue
		}
		if sev, ok := s.Severity[f.Rule.ID]; ok {
			f.Severity = sev
		}
		out = append(out, f)
	}
	return out
}

// Options are the engine options the settings give.
func (s *Settings) Options() rules.Options { return rules.Options{Severity: s.Severity} }

// AddFlag adds --settings to a command's flags.
func AddFlag(fl *pflag.FlagSet, path *string) {
	fl.StringVar(path, "settings", "", "settings file (default: "+FileName+" in the working directory, if present)")
}
