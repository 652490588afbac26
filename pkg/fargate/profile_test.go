package fargate

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestWildcard(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"prod", "prod", true},
		{"prod", "prod2", false},
		{"prod-*", "prod-", true},
		{"prod-*", "prod-eu", true},
		{"prod-*", "staging-eu", false},
		{"*", "", true},
		{"", "", true},
		{"", "a", false},
		{"?", "", false},
		{"?", "a", true},
		{"pro?", "prod", true},
		{"pro?", "pro", false},
		{"*-db-*", "team-db-1", true},
		{"*-db-*", "team-db", false},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXbY", false},
		{"app.kubernetes.io/*", "app.kubernetes.io/name", true},
		{"[a]", "a", false}, // no character classes
		{"über-*", "über-x", true},
		{"?", "ü", true},  // ? is one character, not one byte
		{"*", "*0", true}, // a * in s is an ordinary character
		{"*a", "*ba", true},
	} {
		if got := Wildcard(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Wildcard(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestWildcardCovers(t *testing.T) {
	for _, tc := range []struct {
		t, s string
		want bool
	}{
		{"team-*", "team-a", true}, // a literal s: Wildcard
		{"team-?", "team-ab", false},
		{"team-*", "team-*", true},
		{"team-?", "team-*", false}, // ? covers one character, not any run
		{"team-?", "team-?", true},
		{"*", "team-?", true},
		{"team-a", "team-?", false}, // a literal covers no wildcard
		{"t*-*", "team-*", true},
		{"team-*", "t*", false},
		{"*", "*", true},
		{"?", "*", false},
		{"", "*", false}, // * matches more than ""
		{"*", "", true},
		{"*a", "*ba", true}, // the * of t takes the * of s and b
		{"a*", "*a", false},
		{"*b*", "a*b*c", true},
		{"a?c", "a?c", true},
		{"ab", "a?", false},
	} {
		t.Run(tc.t+" "+tc.s, func(t *testing.T) {
			if got := WildcardCovers(tc.t, tc.s); got != tc.want {
				t.Errorf("WildcardCovers(%q, %q) = %v, want %v", tc.t, tc.s, got, tc.want)
			}
		})
	}
}

func TestSelectorMatches(t *testing.T) {
	pod := map[string]string{"app": "web", "tier": "front", "app.kubernetes.io/name": "shop"}
	for _, tc := range []struct {
		name string
		sel  Selector
		ns   string
		want bool
	}{
		{"namespace only", Selector{Namespace: "prod"}, "prod", true},
		{"other namespace", Selector{Namespace: "prod"}, "staging", false},
		{"all labels", Selector{Namespace: "prod", Labels: map[string]string{"app": "web", "tier": "front"}}, "prod", true},
		{"one label missing", Selector{Namespace: "prod", Labels: map[string]string{"app": "web", "team": "a"}}, "prod", false},
		{"label value differs", Selector{Namespace: "prod", Labels: map[string]string{"app": "api"}}, "prod", false},
		{"wildcard value", Selector{Namespace: "prod", Labels: map[string]string{"app": "w?b"}}, "prod", true},
		{"wildcard key", Selector{Namespace: "prod", Labels: map[string]string{"app.kubernetes.io/*": "sh*"}}, "prod", true},
		{"wildcard key no value match", Selector{Namespace: "prod", Labels: map[string]string{"app.kubernetes.io/*": "x*"}}, "prod", false},
		{"empty value matches empty only", Selector{Namespace: "prod", Labels: map[string]string{"app": ""}}, "prod", false},
		{"wildcard namespace", Selector{Namespace: "pr*"}, "prod", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.sel.Matches(tc.ns, pod); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestChoose(t *testing.T) {
	profiles := []Profile{
		{Name: "zeta", Selectors: []Selector{{Namespace: "prod"}}},
		{Name: "alpha", Selectors: []Selector{{Namespace: "prod", Labels: map[string]string{"app": "web"}}}},
		{Name: "beta", Selectors: []Selector{{Namespace: "prod-*"}}, Status: StatusDeleting},
		{Name: "gamma", Selectors: []Selector{{Namespace: "other"}, {Namespace: "prod"}}},
	}
	for _, tc := range []struct {
		name   string
		ns     string
		labels map[string]string
		want   Choice
	}{
		{"alphanumeric first", "prod", map[string]string{"app": "web"},
			Choice{Profile: &profiles[1], Matching: []string{"alpha", "gamma", "zeta"}}},
		{"label chooses", "prod", map[string]string{"app": "web", ProfileLabel: "zeta"},
			Choice{Profile: &profiles[0], Matching: []string{"alpha", "gamma", "zeta"}, ByLabel: true}},
		{"label naming a non-matching profile is ignored", "prod", map[string]string{ProfileLabel: "alpha"},
			Choice{Profile: &profiles[3], Matching: []string{"gamma", "zeta"}}},
		{"deleting profile does not place pods", "prod-eu", nil, Choice{}},
		{"nothing matches", "dev", nil, Choice{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Choose(profiles, tc.ns, tc.labels)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Choose (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	many := make([]Selector, 6)
	for i := range many {
		many[i] = Selector{Namespace: "ns"}
	}
	six := map[string]string{"a": "", "b": "", "c": "", "d": "", "e": "", "f": ""}
	for _, tc := range []struct {
		name string
		p    Profile
		want []string // kind and field of each violation
	}{
		{"valid", Profile{Name: "web", Selectors: []Selector{{Namespace: "prod"}}}, nil},
		{"eks- prefix", Profile{Name: "eks-web", Selectors: []Selector{{Namespace: "prod"}}}, []string{"name-reserved fargateProfileName"}},
		{"no name", Profile{Selectors: []Selector{{Namespace: "prod"}}}, []string{"name-required fargateProfileName"}},
		{"a space in the name", Profile{Name: "my web", Selectors: []Selector{{Namespace: "prod"}}}, []string{"name-invalid fargateProfileName"}},
		{"no selectors", Profile{Name: "web"}, []string{"selector-required selectors"}},
		{"no namespace", Profile{Name: "web", Selectors: []Selector{{}, {Namespace: "a"}, {}}},
			[]string{"namespace-required selectors[0].namespace", "namespace-required selectors[2].namespace"}},
		{"six selectors", Profile{Name: "web", Selectors: many}, []string{"too-many-selectors selectors"}},
		{"six labels", Profile{Name: "web", Selectors: []Selector{{Namespace: "a"}, {Namespace: "a", Labels: six}}}, []string{"too-many-labels selectors[1].labels"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range tc.p.Validate(DefaultLimits) {
				got = append(got, string(v.Kind)+" "+v.Field)
				if v.Quota() != (v.Limit > 0) {
					t.Errorf("%s: quota %v with limit %d", v.Kind, v.Quota(), v.Limit)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if quotas := tc.p.Validate(Limits{}).Quotas(); len(quotas) > 0 {
				t.Errorf("zero limits are not checked, got %v", quotas)
			}
		})
	}
}

func TestValidateCluster(t *testing.T) {
	ps := make([]Profile, 11)
	if vs := ValidateCluster(ps, DefaultLimits); len(vs) != 1 || vs[0].Kind != TooManyProfiles || vs[0].Error() != "fargateProfiles has 11 profiles for one cluster, at most 10 are allowed" {
		t.Errorf("11 profiles: %v", vs)
	}
	if vs := ValidateCluster(ps[:10], DefaultLimits); vs != nil {
		t.Errorf("10 profiles: %v", vs)
	}
}

func TestPlace(t *testing.T) {
	profiles := []Profile{{Name: "web", Selectors: []Selector{{Namespace: "prod"}}}}
	notFargate := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
			{Key: ComputeTypeLabel, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"fargate"}},
		}}},
	}}}
	orFargate := notFargate.DeepCopy()
	orFargate.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = append(
		orFargate.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms,
		corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/os", Operator: corev1.NodeSelectorOpIn, Values: []string{"linux"}}}})
	for _, tc := range []struct {
		name     string
		profiles []Profile
		ns       string
		tmpl     corev1.PodTemplateSpec
		want     Placement
	}{
		{"matched", profiles, "prod", corev1.PodTemplateSpec{}, Placement{Fargate: true, Profile: "web", Matching: []string{"web"}}},
		{"not matched", profiles, "dev", corev1.PodTemplateSpec{}, Placement{Reason: ReasonNoProfile}},
		{"no profiles: candidate", nil, "dev", corev1.PodTemplateSpec{}, Placement{Fargate: true}},
		{"empty profile list: nothing on Fargate", []Profile{}, "dev", corev1.PodTemplateSpec{}, Placement{Reason: ReasonNoProfile}},
		{"ec2 annotation", profiles, "prod", corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ComputeTypeAnnotation: "ec2"}}},
			Placement{Reason: ReasonEC2Annotation}},
		{"fargate annotation is no opt-out", profiles, "prod", corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{ComputeTypeAnnotation: "fargate"}}},
			Placement{Fargate: true, Profile: "web", Matching: []string{"web"}}},
		{"affinity excludes fargate", nil, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{Affinity: notFargate}}, Placement{Reason: ReasonEC2Affinity}},
		{"with profiles, the webhook ignores node selection", profiles, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{Affinity: notFargate}},
			Placement{Fargate: true, Profile: "web", Matching: []string{"web"}}},
		{"a scheduler of its own", profiles, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: "volcano"}}, Placement{Reason: ReasonOwnScheduler}},
		{"default-scheduler named", profiles, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{SchedulerName: corev1.DefaultSchedulerName}},
			Placement{Fargate: true, Profile: "web", Matching: []string{"web"}}},
		{"affinity with a term allowing fargate", nil, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{Affinity: orFargate}}, Placement{Fargate: true}},
		{"node selector ec2", nil, "prod", corev1.PodTemplateSpec{Spec: corev1.PodSpec{NodeSelector: map[string]string{ComputeTypeLabel: "ec2"}}}, Placement{Reason: ReasonEC2Affinity}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Place(tc.profiles, tc.ns, &tc.tmpl)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Place (-want +got):\n%s", diff)
			}
		})
	}
}
