package spread

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

var subnetAZ = map[string]string{"subnet-a": "us-east-1a", "subnet-b": "us-east-1b", "subnet-c": "us-east-1c"}

func oneSubnet(name, subnet string, sel ...fargate.Selector) fargate.Profile {
	return fargate.Profile{Name: name, Selectors: sel, Subnets: []string{subnet}, Status: fargate.StatusActive}
}

var apps = fargate.Selector{Namespace: "apps"}

func TestZonesFor(t *testing.T) {
	three := []fargate.Profile{oneSubnet("apps-c", "subnet-c", apps), oneSubnet("apps-a", "subnet-a", apps), oneSubnet("apps-b", "subnet-b", apps)}
	tests := []struct {
		name     string
		profiles []fargate.Profile
		ns       string
		labels   map[string]string
		want     []Option
	}{
		{"one profile per AZ", three, "apps", nil,
			[]Option{{"us-east-1a", "apps-a"}, {"us-east-1b", "apps-b"}, {"us-east-1c", "apps-c"}}},
		{"another namespace", three, "web", nil, nil},
		{"a multi-subnet profile is no per-AZ profile", append(three[:1:1], fargate.Profile{Name: "apps", Selectors: []fargate.Selector{apps}, Subnets: []string{"subnet-a", "subnet-b"}}), "apps", nil, nil},
		{"a profile being created does not count", []fargate.Profile{three[0], three[1], {Name: "apps-b", Selectors: []fargate.Selector{apps}, Subnets: []string{"subnet-b"}, Status: fargate.StatusCreating}}, "apps", nil,
			[]Option{{"us-east-1a", "apps-a"}, {"us-east-1c", "apps-c"}}},
		{"a subnet of unknown AZ does not count", []fargate.Profile{three[0], oneSubnet("apps-x", "subnet-x", apps)}, "apps", nil, nil},
		{"two in one AZ: the first by name", []fargate.Profile{oneSubnet("z-apps-a", "subnet-a", apps), oneSubnet("b-apps-a", "subnet-a", apps), three[0]}, "apps", nil,
			[]Option{{"us-east-1a", "b-apps-a"}, {"us-east-1c", "apps-c"}}},
		{"selectors with labels", []fargate.Profile{
			oneSubnet("web-a", "subnet-a", fargate.Selector{Namespace: "apps", Labels: map[string]string{"tier": "web"}}),
			oneSubnet("web-b", "subnet-b", fargate.Selector{Namespace: "apps", Labels: map[string]string{"tier": "web"}}),
		}, "apps", map[string]string{"tier": "web"}, []Option{{"us-east-1a", "web-a"}, {"us-east-1b", "web-b"}}},
		{"selectors with labels the pod lacks", []fargate.Profile{
			oneSubnet("web-a", "subnet-a", fargate.Selector{Namespace: "apps", Labels: map[string]string{"tier": "web"}}),
			oneSubnet("web-b", "subnet-b", fargate.Selector{Namespace: "apps", Labels: map[string]string{"tier": "web"}}),
		}, "apps", map[string]string{"tier": "db"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewZones(tt.profiles, subnetAZ).For(tt.ns, tt.labels)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("For (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPickBurst: counting each admission as it is made, 30 replicas land
// 10/10/10 and every prefix of the burst is balanced within 1.
func TestPickBurst(t *testing.T) {
	opts := []Option{{"us-east-1a", "a"}, {"us-east-1b", "b"}, {"us-east-1c", "c"}}
	zones := []string{"us-east-1a", "us-east-1b", "us-east-1c"}
	load := map[string]int{}
	for i := range 30 {
		load[Pick(opts, load, "uid-1").Zone]++
		if s := Skew(load, zones); s > 1 {
			t.Fatalf("after %d pods the load is %v: skew %d", i+1, load, s)
		}
	}
	if diff := cmp.Diff(map[string]int{"us-east-1a": 10, "us-east-1b": 10, "us-east-1c": 10}, load); diff != "" {
		t.Errorf("load (-want +got):\n%s", diff)
	}
}

// TestPickTies: the least-loaded AZ wins; ties are broken by the owner's
// key, the same way every time, and single-replica workloads do not all
// go to the first AZ.
func TestPickTies(t *testing.T) {
	opts := []Option{{"us-east-1a", "a"}, {"us-east-1b", "b"}, {"us-east-1c", "c"}}
	if got := Pick(opts, map[string]int{"us-east-1a": 2, "us-east-1b": 1, "us-east-1c": 2}, "x"); got.Zone != "us-east-1b" {
		t.Errorf("Pick = %s, want the least-loaded us-east-1b", got.Zone)
	}
	first := map[string]int{}
	for i := range 30 {
		owner := fmt.Sprintf("uid-%d", i)
		z := Pick(opts, nil, owner).Zone
		if again := Pick(opts, nil, owner).Zone; again != z {
			t.Fatalf("owner %s: %s then %s", owner, z, again)
		}
		first[z]++
	}
	for _, o := range opts {
		if first[o.Zone] == 0 {
			t.Errorf("no single-replica workload of 30 went to %s: %v", o.Zone, first)
		}
	}
}

func TestSkew(t *testing.T) {
	zones := []string{"a", "b", "c"}
	for _, tt := range []struct {
		load map[string]int
		want int
	}{
		{map[string]int{"a": 3}, 3},
		{map[string]int{"a": 1, "b": 1, "c": 1}, 0},
		{map[string]int{"a": 2, "b": 1, "c": 1}, 1},
		{map[string]int{"a": 2, "b": 2, "x": 9}, 2},
		{nil, 0},
	} {
		if got := Skew(tt.load, zones); got != tt.want {
			t.Errorf("Skew(%v) = %d, want %d", tt.load, got, tt.want)
		}
	}
}

func TestVictim(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	m := func(name, zone string, age time.Duration) Member {
		return Member{Namespace: "apps", Name: name, Zone: zone, Ready: true, Created: t0.Add(-age)}
	}
	zones := []string{"a", "b", "c"}
	tests := []struct {
		name    string
		members []Member
		want    string // "" for none
	}{
		{"the youngest of the fullest AZ", []Member{m("p1", "a", 3*time.Hour), m("p2", "a", time.Hour), m("p3", "a", 2*time.Hour), m("p4", "b", 0)}, "p2"},
		{"balanced within 1", []Member{m("p1", "a", 0), m("p2", "a", 0), m("p3", "b", 0), m("p4", "c", 0)}, ""},
		{"one not Ready: wait", []Member{m("p1", "a", 0), m("p2", "a", 0), m("p3", "a", 0), {Name: "p4", Zone: "b"}}, ""},
		{"an empty AZ counts", []Member{m("p1", "a", 0), m("p2", "a", 0)}, "p2"},
		{"no pods", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := Victim(tt.members, zones)
			if got := map[bool]string{true: v.Name}[ok]; got != tt.want {
				t.Errorf("Victim = %q (%v), want %q", v.Name, ok, tt.want)
			}
		})
	}
}

// FuzzPick: whatever the profiles and loads, For offers distinct AZs in
// order and Pick returns one of them with the least load.
func FuzzPick(f *testing.F) {
	f.Add("apps", "apps", "subnet-a", "subnet-b", "tier", "web", 3, 1, "uid")
	f.Add("a*", "apps", "subnet-a", "subnet-a", "", "", 0, 0, "")
	f.Fuzz(func(t *testing.T, selNS, ns, s1, s2, k, v string, la, lb int, owner string) {
		sel := fargate.Selector{Namespace: selNS}
		if k != "" {
			sel.Labels = map[string]string{k: v}
		}
		z := NewZones([]fargate.Profile{oneSubnet("p1", s1, sel), oneSubnet("p2", s2, sel), oneSubnet("p3", "subnet-c", sel)}, subnetAZ)
		opts := z.For(ns, map[string]string{k: v})
		if opts == nil {
			return
		}
		for i := 1; i < len(opts); i++ {
			if opts[i-1].Zone >= opts[i].Zone {
				t.Fatalf("options not in AZ order: %v", opts)
			}
		}
		load := map[string]int{"us-east-1a": la, "us-east-1b": lb}
		got := Pick(opts, load, owner)
		for _, o := range opts {
			if load[o.Zone] < load[got.Zone] {
				t.Fatalf("Pick chose %v with load %d over %v with %d", got, load[got.Zone], o, load[o.Zone])
			}
		}
	})
}

func TestSplit(t *testing.T) {
	azs := map[string]string{"subnet-a": "us-east-1a", "subnet-a2": "us-east-1a", "subnet-b": "us-east-1b"}
	web := fargate.Profile{Name: "web", Selectors: []fargate.Selector{apps}, PodExecutionRoleARN: "arn:role"}
	twin := func(az, subnet string) fargate.Profile {
		return fargate.Profile{Name: "web-" + az, Selectors: []fargate.Selector{apps}, Subnets: []string{subnet}, PodExecutionRoleARN: "arn:role"}
	}
	withSubnets := func(ids ...string) fargate.Profile { p := web; p.Subnets = ids; return p }
	tests := []struct {
		name    string
		p       fargate.Profile
		private []string
		want    []fargate.Profile
		err     string
	}{
		{"its own subnets", withSubnets("subnet-b", "subnet-a"), nil, []fargate.Profile{twin("us-east-1a", "subnet-a"), twin("us-east-1b", "subnet-b")}, ""},
		{"the private subnets", web, []string{"subnet-a", "subnet-b"}, []fargate.Profile{twin("us-east-1a", "subnet-a"), twin("us-east-1b", "subnet-b")}, ""},
		{"two in one AZ: the first by ID", withSubnets("subnet-a2", "subnet-a", "subnet-b"), nil, []fargate.Profile{twin("us-east-1a", "subnet-a"), twin("us-east-1b", "subnet-b")}, ""},
		{"one subnet", withSubnets("subnet-a"), nil, nil, ""},
		{"one AZ", withSubnets("subnet-a", "subnet-a2"), nil, nil, ""},
		{"unknown AZ", withSubnets("subnet-a", "subnet-x"), nil, nil, "the AZ of subnet subnet-x is unknown"},
		{"no subnets known", web, nil, nil, "its subnets are unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Split(tt.p, tt.private, azs)
			if (err != nil) != (tt.err != "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Split (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAssigned(t *testing.T) {
	profiles := []fargate.Profile{
		oneSubnet("apps-a", "subnet-x", apps), oneSubnet("apps-b", "subnet-y", apps), oneSubnet("apps-c", "subnet-z", apps),
		{Name: "apps", Selectors: []fargate.Selector{apps}, Subnets: []string{"subnet-x", "subnet-y"}, Status: fargate.StatusActive},
	}
	tests := []struct {
		name string
		azOf map[string]string
		want []Option // for a pod of apps
		err  string
	}{
		{"the AZs given, not EC2's", map[string]string{"apps-a": "eu-west-1a", "apps-b": "eu-west-1b"}, []Option{{"eu-west-1a", "apps-a"}, {"eu-west-1b", "apps-b"}}, ""},
		{"only the profiles given are per-AZ", map[string]string{"apps-a": "eu-west-1a"}, nil, ""},
		{"a profile with several subnets", map[string]string{"apps-a": "eu-west-1a", "apps": "eu-west-1b"}, nil, "profiles.apps: the profile has 2 subnets"},
		{"an unknown profile", map[string]string{"apps-a": "eu-west-1a", "nope": "eu-west-1b"}, nil, "profiles.nope: the cluster has no Fargate profile nope"},
		{"no AZ", map[string]string{"apps-a": ""}, nil, "profiles.apps-a: no AZ given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z, err := Assigned(profiles, tt.azOf)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Assigned: %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, z.For("apps", nil)); diff != "" {
				t.Errorf("For (-want +got):\n%s", diff)
			}
		})
	}
	shared := []fargate.Profile{oneSubnet("one", "subnet-x", apps), oneSubnet("two", "subnet-x", apps)}
	if _, err := Assigned(shared, map[string]string{"one": "a", "two": "b"}); err == nil || !strings.Contains(err.Error(), "profiles.two: its subnet subnet-x is given another AZ, a") {
		t.Errorf("one subnet in two AZs: %v", err)
	}
}

func TestZoneSelectors(t *testing.T) {
	multi := func(name string, sel fargate.Selector, subnets ...string) fargate.Profile {
		return fargate.Profile{Name: name, Selectors: []fargate.Selector{sel}, Subnets: subnets, Status: fargate.StatusActive}
	}
	tests := []struct {
		name     string
		profiles []fargate.Profile
		want     []Option
	}{
		{"the AZs of the profile's subnets", []fargate.Profile{multi("apps", apps, "subnet-c", "subnet-a", "subnet-b")},
			[]Option{{"us-east-1a", "apps"}, {"us-east-1b", "apps"}, {"us-east-1c", "apps"}}},
		{"one AZ: nothing to balance", []fargate.Profile{multi("apps", apps, "subnet-a")}, nil},
		{"subnets of unknown AZ do not count", []fargate.Profile{multi("apps", apps, "subnet-a", "subnet-x")}, nil},
		{"the profile EKS gives the pod: the first by name", []fargate.Profile{multi("b-apps", apps, "subnet-a", "subnet-b"), multi("a-apps", apps, "subnet-c")}, nil},
		{"a profile being created does not count", []fargate.Profile{{Name: "a", Selectors: []fargate.Selector{apps}, Subnets: []string{"subnet-a"}, Status: fargate.StatusCreating}, multi("b", apps, "subnet-a", "subnet-b")},
			[]Option{{"us-east-1a", "b"}, {"us-east-1b", "b"}}},
		{"another namespace", []fargate.Profile{multi("web", fargate.Selector{Namespace: "web"}, "subnet-a", "subnet-b")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := NewZoneSelectors(tt.profiles, subnetAZ)
			if z.Method() != ByNodeSelector {
				t.Errorf("Method = %s", z.Method())
			}
			if diff := cmp.Diff(tt.want, z.For("apps", nil)); diff != "" {
				t.Errorf("For (-want +got):\n%s", diff)
			}
		})
	}
	if m := NewZones(nil, nil).Method(); m != ByProfile {
		t.Errorf("NewZones: Method = %s", m)
	}
	for in, want := range map[string]Method{"": ByProfile, "profile": ByProfile, "node-selector": ByNodeSelector} {
		if got, err := ParseMethod(in); err != nil || got != want {
			t.Errorf("ParseMethod(%q) = %s, %v", in, got, err)
		}
	}
	if _, err := ParseMethod("nodeSelector"); err == nil {
		t.Error("ParseMethod accepts nodeSelector")
	}
}

// TestPinned checks which pods choose their own profile or zone, by method.
func TestPinned(t *testing.T) {
	profile := map[string]string{fargate.ProfileLabel: "apps-us-east-1a"}
	zone := map[string]string{"topology.kubernetes.io/zone": "us-east-1a"}
	for _, tc := range []struct {
		name             string
		method           Method
		labels, selector map[string]string
		want             bool
	}{
		{"a profile label", ByProfile, profile, nil, true},
		{"near miss: other labels", ByProfile, map[string]string{"app": "web"}, nil, false},
		{"near miss: a zone selector, by profile", ByProfile, nil, zone, false},
		{"a zone selector", ByNodeSelector, nil, zone, true},
		{"near miss: a profile label, by node selector", ByNodeSelector, profile, nil, false},
	} {
		if got := Pinned(tc.method, tc.labels, tc.selector); got != tc.want {
			t.Errorf("%s: Pinned = %v, want %v", tc.name, got, tc.want)
		}
	}
}
