package deprecation

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/eks"
)

func TestLookupStatusAt(t *testing.T) {
	tests := []struct {
		name       string
		apiVersion string
		kind       string
		target     string
		wantFound  bool
		want       Status
	}{
		{"extensions Deployment before deprecation", "extensions/v1beta1", "Deployment", "1.7", true, Served},
		{"extensions Deployment at 1.15", "extensions/v1beta1", "Deployment", "1.15", true, Deprecated},
		{"extensions Deployment at 1.16", "extensions/v1beta1", "Deployment", "1.16", true, Removed},
		{"extensions Deployment at 1.35", "extensions/v1beta1", "Deployment", "1.35", true, Removed},
		{"CronJob v1beta1 at 1.20", "batch/v1beta1", "CronJob", "1.20", true, Served},
		{"CronJob v1beta1 at 1.21", "batch/v1beta1", "CronJob", "1.21", true, Deprecated},
		{"CronJob v1beta1 at 1.24", "batch/v1beta1", "CronJob", "1.24", true, Deprecated},
		{"CronJob v1beta1 at 1.25", "batch/v1beta1", "CronJob", "1.25", true, Removed},
		{"Endpoints at 1.32", "v1", "Endpoints", "1.32", true, Served},
		{"Endpoints at 1.33", "v1", "Endpoints", "1.33", true, Deprecated},
		{"Endpoints at 1.99", "v1", "Endpoints", "1.99", true, Deprecated},
		{"Endpoints at 2.0", "v1", "Endpoints", "2.0", true, Deprecated},
		{"flowcontrol v1beta3 FlowSchema at 1.31", "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.31", true, Deprecated},
		{"flowcontrol v1beta3 FlowSchema at 1.32", "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "1.32", true, Removed},
		{"flowcontrol v1beta3 PLC at 1.32", "flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration", "1.32", true, Removed},
		{"NetworkPolicy numeric compare 1.9 vs 1.10", "extensions/v1beta1", "NetworkPolicy", "1.10", true, Deprecated},
		{"apps/v1beta1 ReplicaSet has no deprecatedIn", "apps/v1beta1", "ReplicaSet", "1.15", true, Served},
		{"HPA v2beta2 at 1.26", "autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.26", true, Removed},
		{"apps/v1 Deployment not found", "apps/v1", "Deployment", "1.35", false, Served},
		{"kind is case-sensitive", "extensions/v1beta1", "deployment", "1.16", false, Served},
		{"v1 Pod not found", "v1", "Pod", "1.35", false, Served},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := Lookup(tc.apiVersion, tc.kind)
			if ok != tc.wantFound {
				t.Fatalf("Lookup(%q, %q) found = %v, want %v", tc.apiVersion, tc.kind, ok, tc.wantFound)
			}
			if !ok {
				if diff := cmp.Diff(API{}, a); diff != "" {
					t.Errorf("Lookup(%q, %q) not found but returned a value (-want +got):\n%s", tc.apiVersion, tc.kind, diff)
				}
				return
			}
			if got := a.StatusAt(tc.target); got != tc.want {
				t.Errorf("%s %s StatusAt(%s) = %v, want %v", tc.apiVersion, tc.kind, tc.target, got, tc.want)
			}
		})
	}
}

func TestLookupEntries(t *testing.T) {
	tests := []struct {
		name       string
		apiVersion string
		kind       string
		want       API
	}{
		{
			name: "PSP policy/v1beta1 has no replacement", apiVersion: "policy/v1beta1", kind: "PodSecurityPolicy",
			want: API{
				GroupVersion: "policy/v1beta1", Kind: "PodSecurityPolicy", DeprecatedIn: "1.21", RemovedIn: "1.25",
				Notes: "No replacement API; migrate to Pod Security Admission or a third-party admission webhook. The PodSecurityPolicy admission controller is removed as well.",
			},
		},
		{
			name: "Endpoints is never removed", apiVersion: "v1", kind: "Endpoints",
			want: API{
				GroupVersion: "v1", Kind: "Endpoints", DeprecatedIn: "1.33",
				Replacement: "discovery.k8s.io/v1", ReplacementSince: "1.21",
				Notes: "The replacement kind is EndpointSlice. v1 Endpoints returns warnings but is not scheduled for removal.",
			},
		},
		{
			name: "CronJob", apiVersion: "batch/v1beta1", kind: "CronJob",
			want: API{GroupVersion: "batch/v1beta1", Kind: "CronJob", DeprecatedIn: "1.21", RemovedIn: "1.25", Replacement: "batch/v1", ReplacementSince: "1.21"},
		},
		{
			name: "PSP extensions uses the lifecycle deprecation, not Pluto's", apiVersion: "extensions/v1beta1", kind: "PodSecurityPolicy",
			want: API{
				GroupVersion: "extensions/v1beta1", Kind: "PodSecurityPolicy", DeprecatedIn: "1.11", RemovedIn: "1.16",
				Replacement: "policy/v1beta1", ReplacementSince: "1.10",
				Notes: "policy/v1beta1 PodSecurityPolicy is itself removed in 1.25 with no replacement; migrate to Pod Security Admission.",
			},
		},
		{
			name: "alpha entries are default-off", apiVersion: "admissionregistration.k8s.io/v1alpha1", kind: "ValidatingAdmissionPolicy",
			want: API{
				GroupVersion: "admissionregistration.k8s.io/v1alpha1", Kind: "ValidatingAdmissionPolicy", DeprecatedIn: "1.29", RemovedIn: "1.32",
				Replacement: "admissionregistration.k8s.io/v1", ReplacementSince: "1.30", DefaultOff: true,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Lookup(tc.apiVersion, tc.kind)
			if !ok {
				t.Fatalf("Lookup(%q, %q) not found", tc.apiVersion, tc.kind)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Lookup(%q, %q) (-want +got):\n%s", tc.apiVersion, tc.kind, diff)
			}
		})
	}
}

func TestAppsV1RequiresSelectorNote(t *testing.T) {
	tests := []struct{ groupVersion, kind string }{
		{"extensions/v1beta1", "DaemonSet"},
		{"apps/v1beta2", "DaemonSet"},
		{"extensions/v1beta1", "Deployment"},
		{"apps/v1beta1", "Deployment"},
		{"apps/v1beta2", "Deployment"},
		{"apps/v1beta1", "StatefulSet"},
		{"apps/v1beta2", "StatefulSet"},
		{"extensions/v1beta1", "ReplicaSet"},
		{"apps/v1beta1", "ReplicaSet"},
		{"apps/v1beta2", "ReplicaSet"},
	}
	for _, tc := range tests {
		t.Run(tc.groupVersion+"/"+tc.kind, func(t *testing.T) {
			a, ok := Lookup(tc.groupVersion, tc.kind)
			if !ok {
				t.Fatalf("Lookup(%q, %q) not found", tc.groupVersion, tc.kind)
			}
			if a.Replacement != "apps/v1" {
				t.Errorf("replacement = %q, want apps/v1", a.Replacement)
			}
			if !strings.Contains(a.Notes, "spec.selector is required") {
				t.Errorf("notes %q do not say spec.selector is required", a.Notes)
			}
		})
	}
}

// gvPattern matches a group/version that ends in a Kubernetes API version.
var gvPattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9.-]*[a-z0-9])?/)?v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)

func TestEmbeddedData(t *testing.T) {
	tab, err := parseAPIs(apisYAML)
	if err != nil {
		t.Fatalf("embedded data/apis.yaml: %v", err)
	}
	if got, want := len(tab.all), len(tab.index); got != want {
		t.Errorf("%d entries but %d distinct (groupVersion, kind) pairs", got, want)
	}
	seen := map[key]bool{}
	for _, a := range tab.all {
		t.Run(a.GroupVersion+"/"+a.Kind, func(t *testing.T) {
			k := key{a.GroupVersion, a.Kind}
			if seen[k] {
				t.Errorf("duplicate entry")
			}
			seen[k] = true
			if a.Kind == "" {
				t.Errorf("empty kind")
			}
			if !gvPattern.MatchString(a.GroupVersion) {
				t.Errorf("groupVersion %q does not end in a version", a.GroupVersion)
			}
			if a.Replacement != "" && !gvPattern.MatchString(a.Replacement) {
				t.Errorf("replacement %q is not a group/version", a.Replacement)
			}
			for _, v := range []string{a.DeprecatedIn, a.RemovedIn, a.ReplacementSince} {
				if v == "" {
					continue
				}
				if m, err := eks.ParseMinor(v); err != nil || m != v {
					t.Errorf("version %q is not a canonical minor (ParseMinor = %q, %v)", v, m, err)
				}
			}
			if a.DeprecatedIn != "" && a.RemovedIn != "" && eks.CompareMinor(a.RemovedIn, a.DeprecatedIn) <= 0 {
				t.Errorf("removedIn %s is not after deprecatedIn %s", a.RemovedIn, a.DeprecatedIn)
			}
		})
	}
	if diff := cmp.Diff(tab.all, All()); diff != "" {
		t.Errorf("All() differs from the parsed file (-file +All):\n%s", diff)
	}
}

func TestAllSorted(t *testing.T) {
	all := All()
	if !slices.IsSortedFunc(all, compareAPIs) {
		t.Errorf("All() is not sorted by removedIn, groupVersion, kind")
	}
	// Numeric order: 1.16 before 1.22 before 1.25; not removed last.
	var order []string
	for _, a := range all {
		if len(order) == 0 || order[len(order)-1] != a.RemovedIn {
			order = append(order, a.RemovedIn)
		}
	}
	want := []string{"1.16", "1.17", "1.21", "1.22", "1.25", "1.26", "1.27", "1.29", "1.31", "1.32", "1.33", "1.35", "1.36", "1.37", "1.40", ""}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("removedIn order (-want +got):\n%s", diff)
	}
	all[0].Kind = "changed"
	if All()[0].Kind == "changed" {
		t.Errorf("All() returned the package's own slice")
	}
}

func TestStatusString(t *testing.T) {
	tests := []struct {
		s    Status
		want string
	}{
		{Served, "served"},
		{Deprecated, "deprecated"},
		{Removed, "removed"},
		{Status(7), "Status(7)"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.s.String(); got != tc.want {
				t.Errorf("String() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseAPIsErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"empty", "apis: []"},
		{"unknown key", `apis: [{groupVersion: batch/v1beta1, kind: CronJob, removedIn: "1.25", removed: "1.25"}]`},
		{"missing kind", `apis: [{groupVersion: batch/v1beta1, removedIn: "1.25"}]`},
		{"missing groupVersion", `apis: [{kind: CronJob, removedIn: "1.25"}]`},
		{"no version in groupVersion", `apis: [{groupVersion: batch, kind: CronJob, removedIn: "1.25"}]`},
		{"no dates", `apis: [{groupVersion: batch/v1beta1, kind: CronJob}]`},
		{"bad version", `apis: [{groupVersion: batch/v1beta1, kind: CronJob, removedIn: "v1.25"}]`},
		{"removed before deprecated", `apis: [{groupVersion: batch/v1beta1, kind: CronJob, deprecatedIn: "1.25", removedIn: "1.21"}]`},
		{"since without replacement", `apis: [{groupVersion: batch/v1beta1, kind: CronJob, removedIn: "1.25", replacementSince: "1.21"}]`},
		{"duplicate", `apis: [{groupVersion: batch/v1beta1, kind: CronJob, removedIn: "1.25"}, {groupVersion: batch/v1beta1, kind: CronJob, removedIn: "1.25"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseAPIs([]byte(tc.data)); err == nil {
				t.Errorf("parseAPIs(%s) succeeded, want error", tc.data)
			}
		})
	}
}

// TestParseAPIsUnquoted checks that an unquoted 1.20 is read as written, not as 1.2.
func TestParseAPIsUnquoted(t *testing.T) {
	tab, err := parseAPIs([]byte(`apis: [{groupVersion: batch/v1beta1, kind: CronJob, deprecatedIn: 1.20, removedIn: 1.25, replacement: batch/v1, replacementSince: 1.21}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.all[0].DeprecatedIn; got != "1.20" {
		t.Errorf("deprecatedIn = %q, want 1.20", got)
	}
}

// TestNewestRemoval holds NewestRemoval to the data: no entry is removed
// later, and one entry is removed in it.
func TestNewestRemoval(t *testing.T) {
	newest := NewestRemoval()
	if _, err := eks.ParseMinor(newest); err != nil {
		t.Fatalf("NewestRemoval() = %q: %v", newest, err)
	}
	found := false
	for _, a := range All() {
		if a.RemovedIn == "" {
			continue
		}
		if eks.CompareMinor(a.RemovedIn, newest) > 0 {
			t.Errorf("%s %s is removed in %s, after NewestRemoval() %s", a.GroupVersion, a.Kind, a.RemovedIn, newest)
		}
		found = found || a.RemovedIn == newest
	}
	if !found {
		t.Errorf("no entry is removed in NewestRemoval() %s", newest)
	}
}
