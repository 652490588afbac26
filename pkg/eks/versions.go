package eks

import (
	"bytes"
	_ "embed"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

//go:embed data/versions.yaml
var versionsYAML []byte

// dateLayout is the layout of the dates in data/versions.yaml.
const dateLayout = "2006-01-02"

// Version is one Kubernetes minor version on EKS and its support dates.
// A zero time means the date is not known. All dates are 00:00 UTC.
type Version struct {
	// Minor is the Kubernetes minor version, such as "1.29".
	Minor string
	// Release is the day the version became available on EKS.
	Release time.Time
	// EndOfStandard is the day standard support ends.
	EndOfStandard time.Time
	// EndOfExtended is the day extended support ends.
	EndOfExtended time.Time
}

// versionFile is the shape of data/versions.yaml.
type versionFile struct {
	Versions []versionRow `yaml:"versions"`
}

// versionRow is one row of data/versions.yaml.
type versionRow struct {
	Minor         string `yaml:"minor"`
	Release       string `yaml:"release"`
	EndOfStandard string `yaml:"endOfStandard"`
	EndOfExtended string `yaml:"endOfExtended,omitempty"`
}

// calendar is the parsed embedded calendar. The file is part of the
// build, so a parse error is a programming error and panics.
var calendar = sync.OnceValue(func() []Version {
	vs, err := parseVersions(versionsYAML)
	if err != nil {
		panic(fmt.Sprintf("eks: embedded data/versions.yaml: %v", err))
	}
	return vs
})

// parseVersions decodes and validates a calendar file. Rows must be
// sorted oldest to newest with no duplicate minor versions.
func parseVersions(data []byte) ([]Version, error) {
	var f versionFile
	// yaml.v3 keeps a scalar's text for a string field: an unquoted 1.30 stays "1.30".
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decode versions: %w", err)
	}
	if len(f.Versions) == 0 {
		return nil, fmt.Errorf("no versions")
	}
	out := make([]Version, 0, len(f.Versions))
	for i, row := range f.Versions {
		v, err := row.version()
		if err != nil {
			return nil, fmt.Errorf("versions[%d]: %w", i, err)
		}
		if i > 0 && CompareMinor(out[i-1].Minor, v.Minor) >= 0 {
			return nil, fmt.Errorf("versions[%d]: %s does not come after %s (want oldest to newest, no duplicates)", i, v.Minor, out[i-1].Minor)
		}
		out = append(out, v)
	}
	return out, nil
}

// version converts and checks one row.
func (r versionRow) version() (Version, error) {
	minor, err := ParseMinor(r.Minor)
	if err != nil {
		return Version{}, err
	}
	if minor != r.Minor {
		return Version{}, fmt.Errorf("minor %q: want canonical form %q", r.Minor, minor)
	}
	v := Version{Minor: minor}
	if v.Release, err = parseDate(r.Release, true); err != nil {
		return Version{}, fmt.Errorf("%s release: %w", minor, err)
	}
	if v.EndOfStandard, err = parseDate(r.EndOfStandard, true); err != nil {
		return Version{}, fmt.Errorf("%s endOfStandard: %w", minor, err)
	}
	if v.EndOfExtended, err = parseDate(r.EndOfExtended, false); err != nil {
		return Version{}, fmt.Errorf("%s endOfExtended: %w", minor, err)
	}
	if !v.Release.Before(v.EndOfStandard) {
		return Version{}, fmt.Errorf("%s: endOfStandard %s is not after release %s", minor, r.EndOfStandard, r.Release)
	}
	if !v.EndOfExtended.IsZero() && !v.EndOfStandard.Before(v.EndOfExtended) {
		return Version{}, fmt.Errorf("%s: endOfExtended %s is not after endOfStandard %s", minor, r.EndOfExtended, r.EndOfStandard)
	}
	return v, nil
}

// parseDate parses a YYYY-MM-DD day as 00:00 UTC. An empty string gives
// the zero time unless required is set.
func parseDate(s string, required bool) (time.Time, error) {
	if s == "" {
		if required {
			return time.Time{}, fmt.Errorf("date is required")
		}
		return time.Time{}, nil
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: %w", s, err)
	}
	return t, nil
}

// Versions returns the EKS version calendar sorted oldest to newest.
// The caller may modify the returned slice.
func Versions() []Version {
	return slices.Clone(calendar())
}

// Lookup returns the calendar entry for minor, such as "1.29".
// The second result is false if the version is not in the calendar.
func Lookup(minor string) (Version, bool) {
	for _, v := range calendar() {
		if v.Minor == minor {
			return v, true
		}
	}
	return Version{}, false
}

// DefaultTarget returns the Kubernetes minor version to check against at
// time now: the newest version that EKS has released (Release <= now) and
// that is still in standard support (now < EndOfStandard; an unknown end
// counts as still supported). If no version is in standard support it
// returns the newest released version, and if now is before every release
// it returns the oldest version in the calendar.
func DefaultTarget(now time.Time) string {
	vs := calendar()
	newestReleased := ""
	for i := len(vs) - 1; i >= 0; i-- {
		v := vs[i]
		if v.Release.After(now) {
			continue
		}
		if newestReleased == "" {
			newestReleased = v.Minor
		}
		if v.EndOfStandard.IsZero() || now.Before(v.EndOfStandard) {
			return v.Minor
		}
	}
	if newestReleased != "" {
		return newestReleased
	}
	return vs[0].Minor
}

// UpgradePolicy is what EKS refuses before a control-plane version update
// where AWS's behaviour is unconfirmed. The emulator's EKS API applies it,
// and fargatekit's upgrade planning reports by it.
type UpgradePolicy struct {
	// RefuseFargateBehind refuses an update while Fargate pods run on
	// kubelets older than the control plane. EKS documents that they must be
	// recreated first; whether UpdateClusterVersion refuses (as it does for
	// node groups) or lets them fall further behind is unconfirmed.
	RefuseFargateBehind bool
	// RefuseReadinessErrors refuses an update while an upgrade insight of
	// the new version is in ERROR, unless forced. The API documents it
	// (InvalidStateException, the force flag); AWS enforced it, then rolled
	// it back for a while (containers-roadmap#2570, 2025-03): whether it is
	// enforced today is unconfirmed.
	RefuseReadinessErrors bool
}

// DefaultUpgradePolicy refuses both, as EKS does for node groups and as its
// API reference documents for insights.
var DefaultUpgradePolicy = UpgradePolicy{RefuseFargateBehind: true, RefuseReadinessErrors: true}
