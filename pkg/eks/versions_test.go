package eks

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func date(s string) time.Time {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestEmbeddedVersions(t *testing.T) {
	vs, err := parseVersions(versionsYAML)
	if err != nil {
		t.Fatalf("embedded data/versions.yaml: %v", err)
	}
	var minors []string
	seen := map[string]bool{}
	for i, v := range vs {
		if seen[v.Minor] {
			t.Errorf("duplicate minor %s", v.Minor)
		}
		seen[v.Minor] = true
		if i > 0 && CompareMinor(vs[i-1].Minor, v.Minor) >= 0 {
			t.Errorf("versions not sorted: %s before %s", vs[i-1].Minor, v.Minor)
		}
		if i > 0 && v.Release.Before(vs[i-1].Release) {
			t.Errorf("%s released before %s", v.Minor, vs[i-1].Minor)
		}
		minors = append(minors, v.Minor)
	}
	want := []string{"1.23", "1.24", "1.25", "1.26", "1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35"}
	if diff := cmp.Diff(want, minors); diff != "" {
		t.Errorf("minors (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(vs, Versions()); diff != "" {
		t.Errorf("Versions() differs from parsed file (-file +Versions):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		minor  string
		want   Version
		wantOK bool
	}{
		{"1.35", Version{Minor: "1.35", Release: date("2026-01-28"), EndOfStandard: date("2027-03-27")}, true},
		{"1.31", Version{Minor: "1.31", Release: date("2024-09-26"), EndOfStandard: date("2025-11-26"), EndOfExtended: date("2026-11-26")}, true},
		{"1.23", Version{Minor: "1.23", Release: date("2022-08-11"), EndOfStandard: date("2023-10-11"), EndOfExtended: date("2024-10-11")}, true},
		{"1.22", Version{}, false},
		{"v1.31", Version{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.minor, func(t *testing.T) {
			got, ok := Lookup(tc.minor)
			if ok != tc.wantOK {
				t.Fatalf("Lookup(%q) ok = %v, want %v", tc.minor, ok, tc.wantOK)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Lookup(%q) (-want +got):\n%s", tc.minor, diff)
			}
		})
	}
}

func TestVersionsIsACopy(t *testing.T) {
	vs := Versions()
	vs[0].Minor = "changed"
	if got := Versions()[0].Minor; got != "1.23" {
		t.Errorf("Versions()[0].Minor = %q after modifying a previous result, want 1.23", got)
	}
}

func TestDefaultTarget(t *testing.T) {
	tests := []struct {
		name string
		now  time.Time
		want string
	}{
		{"2026-11-21", date("2026-11-21"), "1.35"},
		{"2025-01-01", date("2025-01-01"), "1.31"},
		{"day 1.32 is released", date("2025-01-23"), "1.32"},
		{"day before 1.32 is released", date("2025-01-23").Add(-time.Second), "1.31"},
		{"2023-06-01", date("2023-06-01"), "1.27"},
		{"before 1.23 release", date("2021-06-01"), "1.23"},
		{"after end of standard support of 1.35", date("2027-03-27"), "1.35"},
		{"far future", date("2040-01-01"), "1.35"},
		{"non-UTC location", time.Date(2026, 1, 28, 8, 0, 0, 0, time.FixedZone("UTC+9", 9*3600)), "1.34"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DefaultTarget(tc.now); got != tc.want {
				t.Errorf("DefaultTarget(%s) = %q, want %q", tc.now, got, tc.want)
			}
		})
	}
}

func TestParseVersionsErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"empty", "versions: []"},
		{"unknown key", `versions: [{minor: "1.30", release: "2024-05-23", endOfStandard: "2025-07-23", extra: "x"}]`},
		{"non-canonical minor", `versions: [{minor: "v1.30", release: "2024-05-23", endOfStandard: "2025-07-23"}]`},
		{"missing release", `versions: [{minor: "1.30", endOfStandard: "2025-07-23"}]`},
		{"bad date", `versions: [{minor: "1.30", release: "2024-13-23", endOfStandard: "2025-07-23"}]`},
		{"end before release", `versions: [{minor: "1.30", release: "2024-05-23", endOfStandard: "2023-07-23"}]`},
		{"extended before standard", `versions: [{minor: "1.30", release: "2024-05-23", endOfStandard: "2025-07-23", endOfExtended: "2025-01-01"}]`},
		{"duplicate", `versions: [{minor: "1.30", release: "2024-05-23", endOfStandard: "2025-07-23"}, {minor: "1.30", release: "2024-05-23", endOfStandard: "2025-07-23"}]`},
		{"unsorted", `versions: [{minor: "1.31", release: "2024-09-26", endOfStandard: "2025-11-26"}, {minor: "1.30", release: "2024-05-23", endOfStandard: "2025-07-23"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseVersions([]byte(tc.data)); err == nil {
				t.Errorf("parseVersions(%s) succeeded, want error", tc.data)
			}
		})
	}
}

// TestParseVersionsUnquoted checks that an unquoted 1.30 is read as written,
// not as the number 1.3.
func TestParseVersionsUnquoted(t *testing.T) {
	vs, err := parseVersions([]byte(`versions: [{minor: 1.30, release: 2024-05-23, endOfStandard: 2025-07-23}]`))
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Minor != "1.30" {
		t.Errorf("minor = %q, want 1.30", vs[0].Minor)
	}
}

func TestNextMinor(t *testing.T) {
	for in, want := range map[string]string{"1.35": "1.36", "v1.9.3-eks-1": "1.10", "not a version": "not a version"} {
		if got := NextMinor(in); got != want {
			t.Errorf("NextMinor(%q) = %q, want %q", in, got, want)
		}
	}
}
