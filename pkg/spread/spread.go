// Package spread decides where `fargatekit spread` puts Fargate pods so that
// each workload's replicas are balanced across AZs, and which pod its
// rebalancer evicts when they are not. It does no I/O.
//
// fargate-scheduler draws a pod's subnet at random among its profile's. With
// one profile per AZ (the same selectors, one subnet each), choosing the
// profile chooses the AZ, and a pod chooses its profile with the label
// eks.amazonaws.com/fargate-profile, which EKS's webhook honours. [Zones]
// finds, for a pod, the per-AZ profiles that match it; [Pick] chooses the
// least-loaded one.
package spread

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// Labels and annotations of spread.
const (
	// EnabledLabel opts a namespace or a pod (template) in, with "true".
	EnabledLabel = "spread.fargatekit.io/enabled"
	// ZoneAnnotation is the AZ spread chose for a pod.
	ZoneAnnotation = "spread.fargatekit.io/zone"
	// AdmissionAnnotation is the UID of the admission request that placed
	// a pod: it tells a pod the webhook placed moments ago from the same pod
	// seen in the cache, so that a burst is counted once.
	AdmissionAnnotation = "spread.fargatekit.io/admission"
)

// Option is one AZ a pod can go to, and the profile that sends it there.
type Option struct {
	Zone    string
	Profile string
}

// Method is how spread sends a pod to an AZ.
type Method string

// The methods.
const (
	// ByProfile labels the pod eks.amazonaws.com/fargate-profile with the
	// per-AZ profile of the AZ, which EKS documents it honours.
	ByProfile Method = "profile"
	// ByNodeSelector gives the pod the node selector
	// topology.kubernetes.io/zone of the AZ, on a profile with subnets in
	// several AZs. Unconfirmed on AWS (fargate.Settings.HonourZoneSelector).
	ByNodeSelector Method = "node-selector"
)

// ParseMethod reads a method; "" is ByProfile.
func ParseMethod(s string) (Method, error) {
	switch m := Method(s); m {
	case "":
		return ByProfile, nil
	case ByProfile, ByNodeSelector:
		return m, nil
	}
	return "", fmt.Errorf("%q is not a method (want %s or %s)", s, ByProfile, ByNodeSelector)
}

// Zones is what spread may choose among: the per-AZ Fargate profiles and
// their AZs (ByProfile), or the AZs of each profile (ByNodeSelector).
type Zones struct {
	profiles []fargate.Profile
	zone     map[string]string   // per-AZ profile → AZ
	azs      map[string][]string // ByNodeSelector: profile → its AZs
}

// NewZoneSelectors keeps the ACTIVE profiles and the AZs of their subnets
// that subnetAZ knows, for ByNodeSelector.
func NewZoneSelectors(profiles []fargate.Profile, subnetAZ map[string]string) Zones {
	z := Zones{zone: map[string]string{}, azs: map[string][]string{}}
	for _, p := range profiles {
		if !p.Active() {
			continue
		}
		var azs []string
		for _, id := range p.Subnets {
			if az := subnetAZ[id]; az != "" && !slices.Contains(azs, az) {
				azs = append(azs, az)
			}
		}
		slices.Sort(azs)
		z.profiles = append(z.profiles, p)
		z.azs[p.Name] = azs
	}
	slices.SortFunc(z.profiles, func(a, b fargate.Profile) int { return cmp.Compare(a.Name, b.Name) })
	return z
}

// Method says how a pod is sent to the AZ of an Option.
func (z Zones) Method() Method {
	if z.azs != nil {
		return ByNodeSelector
	}
	return ByProfile
}

// perAZ reports whether a profile can choose an AZ: ACTIVE, one subnet.
func perAZ(p *fargate.Profile) bool { return p.Active() && len(p.Subnets) == 1 }

// Subnets lists the subnets of the profiles that can choose an AZ, whose
// AZs NewZones needs.
func Subnets(profiles []fargate.Profile) []string {
	var out []string
	for i := range profiles {
		if perAZ(&profiles[i]) {
			out = append(out, profiles[i].Subnets[0])
		}
	}
	return out
}

// NewZones keeps, of the given profiles, the ACTIVE ones with exactly one
// subnet whose AZ subnetAZ knows: the per-AZ profiles. A profile with
// several subnets cannot choose an AZ and is left out.
func NewZones(profiles []fargate.Profile, subnetAZ map[string]string) Zones {
	z := Zones{zone: map[string]string{}}
	for _, p := range profiles {
		if !perAZ(&p) {
			continue
		}
		if az, ok := subnetAZ[p.Subnets[0]]; ok && az != "" {
			z.profiles = append(z.profiles, p)
			z.zone[p.Name] = az
		}
	}
	slices.SortFunc(z.profiles, func(a, b fargate.Profile) int { return cmp.Compare(a.Name, b.Name) })
	return z
}

// Assigned is NewZones for AZs given by hand, profile → AZ (serve's
// --zones file), checked against the cluster's profiles: a profile that
// does not exist or has other than one subnet is an error naming it as
// the field profiles.<name>. Only the assigned profiles are per-AZ ones.
func Assigned(profiles []fargate.Profile, azOf map[string]string) (Zones, error) {
	byName := map[string]fargate.Profile{}
	for _, p := range profiles {
		byName[p.Name] = p
	}
	var chosen []fargate.Profile
	subnetAZ := map[string]string{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(azOf)) {
		p, ok := byName[name]
		switch {
		case azOf[name] == "":
			errs = append(errs, fmt.Errorf("profiles.%s: no AZ given", name))
		case !ok:
			errs = append(errs, fmt.Errorf("profiles.%s: the cluster has no Fargate profile %s", name, name))
		case len(p.Subnets) != 1:
			errs = append(errs, fmt.Errorf("profiles.%s: the profile has %d subnets; a per-AZ profile has exactly one (fargatekit spread profiles prints them)", name, len(p.Subnets)))
		case subnetAZ[p.Subnets[0]] != "" && subnetAZ[p.Subnets[0]] != azOf[name]:
			errs = append(errs, fmt.Errorf("profiles.%s: its subnet %s is given another AZ, %s, through another profile", name, p.Subnets[0], subnetAZ[p.Subnets[0]]))
		default:
			chosen = append(chosen, p)
			subnetAZ[p.Subnets[0]] = azOf[name]
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Zones{}, err
	}
	return NewZones(chosen, subnetAZ), nil
}

// Len is the number of per-AZ profiles.
func (z Zones) Len() int { return len(z.profiles) }

// AZs lists, sorted, the AZs spread may send pods to.
func (z Zones) AZs() []string {
	var out []string
	for _, az := range z.zone {
		out = append(out, az)
	}
	for _, azs := range z.azs {
		out = append(out, azs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Zone returns the AZ of a per-AZ profile.
func (z Zones) Zone(profile string) (string, bool) {
	az, ok := z.zone[profile]
	return az, ok
}

// For returns the AZs a pod of namespace ns with these labels can be sent
// to, in AZ order: one option per AZ, through the per-AZ profile that
// matches the pod (the first by name when several in one AZ do). It returns
// nil when fewer than two AZs are on offer: there is nothing to balance.
func (z Zones) For(ns string, labels map[string]string) []Option {
	if z.azs != nil {
		return z.forSelector(ns, labels)
	}
	byZone := map[string]string{}
	for _, p := range z.profiles {
		az := z.zone[p.Name]
		if _, taken := byZone[az]; !taken && p.Matches(ns, labels) {
			byZone[az] = p.Name
		}
	}
	if len(byZone) < 2 {
		return nil
	}
	out := make([]Option, 0, len(byZone))
	for _, az := range slices.Sorted(maps.Keys(byZone)) {
		out = append(out, Option{Zone: az, Profile: byZone[az]})
	}
	return out
}

// forSelector returns the AZs of the profile EKS gives the pod
// (fargate.Choose), when it has subnets in two AZs or more.
func (z Zones) forSelector(ns string, labels map[string]string) []Option {
	c := fargate.Choose(z.profiles, ns, labels)
	if c.Profile == nil || len(z.azs[c.Profile.Name]) < 2 {
		return nil
	}
	azs := z.azs[c.Profile.Name]
	out := make([]Option, len(azs))
	for i, az := range azs {
		out[i] = Option{Zone: az, Profile: c.Profile.Name}
	}
	return out
}

// Pick returns the option whose AZ holds the fewest of the owner's pods
// (load, by AZ). Ties go to the first AZ in a rotation of the options that
// starts at a place fixed by the owner's key, so that the first replicas of
// different workloads do not all go to the same AZ, and the same owner with
// the same load always gets the same answer.
func Pick(opts []Option, load map[string]int, owner string) Option {
	start := int(hash(owner) % uint32(len(opts)))
	best := opts[start]
	for i := 1; i < len(opts); i++ {
		o := opts[(start+i)%len(opts)]
		if load[o.Zone] < load[best.Zone] {
			best = o
		}
	}
	return best
}

func hash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// Skew is max − min of the load over the given AZs (an AZ without pods
// counts 0).
func Skew(load map[string]int, zones []string) int {
	if len(zones) == 0 {
		return 0
	}
	lo, hi := load[zones[0]], load[zones[0]]
	for _, z := range zones[1:] {
		lo, hi = min(lo, load[z]), max(hi, load[z])
	}
	return hi - lo
}

// Pinned reports whether a pod (or a pod template) with these labels and
// node selector chose its own profile (or, with ByNodeSelector, its own
// zone): the webhook leaves such a pod as it is, so evicting it to
// rebalance would only bring it back where it was.
func Pinned(m Method, labels, nodeSelector map[string]string) bool {
	if m == ByNodeSelector {
		_, ok := nodeSelector[corev1.LabelTopologyZone]
		return ok
	}
	_, ok := labels[fargate.ProfileLabel]
	return ok
}

// Member is one pod of an owner, as the rebalancer sees it.
type Member struct {
	Namespace, Name string
	Zone            string
	// Ready is the pod's Ready condition.
	Ready   bool
	Created time.Time
}

// Victim returns the pod whose eviction brings the owner's pods closer to
// balance over zones, or false when there is none to evict: the skew is at
// most 1, or a pod is not Ready (a rollout, or a replacement that has not
// started yet: the rebalancer evicts one pod at a time and waits). The
// victim is the youngest pod of the fullest AZ (the first such AZ in
// order), which has the least warm state to lose.
func Victim(members []Member, zones []string) (Member, bool) {
	load := map[string]int{}
	for _, m := range members {
		if !m.Ready {
			return Member{}, false
		}
		load[m.Zone]++
	}
	if len(members) == 0 || Skew(load, zones) <= 1 {
		return Member{}, false
	}
	fullest := zones[0]
	for _, z := range zones[1:] {
		if load[z] > load[fullest] {
			fullest = z
		}
	}
	var victim *Member
	for i := range members {
		m := &members[i]
		if m.Zone != fullest {
			continue
		}
		if victim == nil || m.Created.After(victim.Created) || (m.Created.Equal(victim.Created) && m.Name > victim.Name) {
			victim = m
		}
	}
	return *victim, true
}

// Split returns the per-AZ profiles that replace p for spread: one per AZ
// of its subnets, named "<p>-<AZ>", with p's selectors and pod execution
// role and the AZ's subnet (the first by ID when p has several in one AZ).
// subnets are p's subnets, or the cluster's private subnets when p names
// none. It returns nil for a profile that already has one subnet, and an
// error when the subnets, or the AZ of one, are unknown.
func Split(p fargate.Profile, subnets []string, subnetAZ map[string]string) ([]fargate.Profile, error) {
	if len(p.Subnets) > 0 {
		subnets = p.Subnets
	}
	switch len(subnets) {
	case 0:
		return nil, fmt.Errorf("profile %s: its subnets are unknown (it names none, and the cluster's private subnets are not given)", p.Name)
	case 1:
		return nil, nil
	}
	byZone := map[string]string{}
	var unknown []string
	for _, id := range subnets {
		az, ok := subnetAZ[id]
		switch {
		case !ok || az == "":
			unknown = append(unknown, id)
		case byZone[az] == "" || id < byZone[az]:
			byZone[az] = id
		}
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("profile %s: the AZ of subnet %s is unknown", p.Name, strings.Join(unknown, ", "))
	}
	if len(byZone) < 2 {
		return nil, nil // one AZ: nothing to choose
	}
	out := make([]fargate.Profile, 0, len(byZone))
	for _, az := range slices.Sorted(maps.Keys(byZone)) {
		out = append(out, fargate.Profile{Name: p.Name + "-" + az, Selectors: p.Selectors, Subnets: []string{byZone[az]},
			PodExecutionRoleARN: p.PodExecutionRoleARN})
	}
	return out, nil
}
