package plan

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Diff compares two sets of profiles by name, as eksctl applies a new
// ClusterConfig: a profile whose definition changed is replaced, deleting
// first (EKS refuses a second profile of the same name, and eksctl cannot
// update one). It returns the changes, sorted by name, and the profiles
// that stay as they are.
func Diff(before, after []fargate.Profile) (changes []Change, unchanged []fargate.Profile) {
	old := map[string]fargate.Profile{}
	for _, p := range before {
		old[p.Name] = p
	}
	seen := map[string]bool{}
	for _, p := range after {
		seen[p.Name] = true
		if o, ok := old[p.Name]; !ok {
			changes = append(changes, Change{Address: p.Name, After: &p})
		} else if !sameProfile(o, p) {
			changes = append(changes, Change{Address: p.Name, Before: &o, After: &p})
		} else {
			unchanged = append(unchanged, p)
		}
	}
	for _, p := range before {
		if !seen[p.Name] {
			changes = append(changes, Change{Address: p.Name, Before: &p})
		}
	}
	slices.SortStableFunc(changes, func(a, b Change) int { return cmp.Compare(a.Address, b.Address) })
	return changes, unchanged
}

// sameProfile compares what EKS would compare: selectors (in any order, no
// labels and empty labels alike), subnets (in any order) and the pod
// execution role. Any difference means replacing the profile.
func sameProfile(a, b fargate.Profile) bool {
	norm := func(p fargate.Profile) fargate.Profile {
		p.Subnets = slices.Sorted(slices.Values(p.Subnets))
		p.Status, p.Source = "", object.Source{}
		sels := slices.Clone(p.Selectors)
		for i := range sels {
			if len(sels[i].Labels) == 0 {
				sels[i].Labels = nil
			}
		}
		slices.SortFunc(sels, func(x, y fargate.Selector) int { return cmp.Compare(selectorKey(x), selectorKey(y)) })
		p.Selectors = sels
		return p
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

func selectorKey(s fargate.Selector) string {
	keys := slices.Sorted(maps.Keys(s.Labels))
	var b strings.Builder
	b.WriteString(s.Namespace)
	for _, k := range keys {
		b.WriteString("\x00" + k + "=" + s.Labels[k])
	}
	return b.String()
}
