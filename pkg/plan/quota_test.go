package plan

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

func TestQuotaFindings(t *testing.T) {
	// quota is a compact view of a finding: its rule, severity, profile,
	// field, and whether it is about the safe sequence.
	type quota struct {
		Rule     string
		Severity rules.Severity
		Profile  string
		Path     string
		During   bool
	}
	limits := func(profiles int) fargate.Limits {
		return fargate.Limits{ProfilesPerCluster: profiles, SelectorsPerProfile: 2, LabelsPerSelector: 5}
	}
	for _, tc := range []struct {
		name   string
		in     Input
		limits fargate.Limits
		want   []quota
	}{
		{
			name: "within the quotas at every step",
			in: Input{Changes: []Change{{Address: "a", Before: profile("a", "a")}, {Address: "b", After: profile("b", "a")}},
				Unchanged: []fargate.Profile{*profile("k", "k")}},
			limits: limits(3),
		},
		{
			name: "beyond the quota after the change: the safe sequence is not counted again",
			in: Input{Changes: []Change{{Address: "a", After: profile("a", "a")}, {Address: "b", After: profile("b", "b")}},
				Unchanged: []fargate.Profile{*profile("k", "k"), *profile("l", "l")}},
			limits: limits(3),
			want:   []quota{{"FG024", rules.Blocker, "b", "fargateProfiles", false}},
		},
		{
			name: "beyond the quota only while phase 1 creates before phase 2 deletes",
			in: Input{Changes: []Change{
				{Address: "a", Before: profile("a", "a"), After: profile("a2", "a")},
				{Address: "b", Before: profile("b", "b"), After: profile("b2", "b")},
			}, Unchanged: []fargate.Profile{*profile("k", "k")}},
			limits: limits(3),
			want:   []quota{{"FG024", rules.Blocker, "b2", "fargateProfiles", true}},
		},
		{
			name:   "a bridge counts while its name is deleted and created again",
			in:     Input{Changes: []Change{{Address: "p", Before: profile("p", "p"), After: profile("p", "p", "q")}}, Unchanged: []fargate.Profile{*profile("k", "k")}},
			limits: limits(2),
			want:   []quota{{"FG024", rules.Blocker, "p-bridge", "fargateProfiles", true}},
		},
		{
			name:   "deletions only: nothing is created before the deletions",
			in:     Input{Changes: []Change{{Address: "a", Before: profile("a", "a")}}, Unchanged: []fargate.Profile{*profile("k", "k")}},
			limits: limits(1),
		},
		{
			name: "a profile beyond its own quota is reported once, for the profiles after the change",
			in: Input{Changes: []Change{{Address: "a", Before: profile("a", "a"), After: profile("a2", "a", "b", "c")}},
				Unchanged: []fargate.Profile{*profile("k", "k")}},
			limits: limits(2),
			want: []quota{
				{"FG024", rules.Blocker, "a2", "selectors", false},
				{"FG024", rules.Blocker, "a2", "fargateProfiles", true},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []quota
			for _, f := range QuotaFindings(tc.in, Analyze(tc.in), tc.limits) {
				got = append(got, quota{f.Rule.ID, f.Severity, f.Object.Name, f.Path, strings.Contains(f.Message, "during the safe sequence")})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
