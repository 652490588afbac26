package spread

import (
	"slices"
	"time"
)

// Availability is what spread knows of the AZs fargate-scheduler can start
// pods in. An AZ where a pod spread sent has waited unscheduled for After,
// while a pod of the same owner runs in another AZ, is unavailable (an
// outage, a subnet with no free address, a profile that no longer works);
// a pod Fargate refuses, whose owner runs nowhere, says nothing of its AZ.
// [Usable] leaves an unavailable AZ out, the pods waiting there are to be
// replaced, and after Retry it is tried again with one pod at a time,
// available again once one is scheduled there. Excluded AZs are left out
// for good.
type Availability struct {
	After, Retry time.Duration
	Excluded     map[string]bool
	// down is when each unavailable AZ went so, or was last tried in vain.
	down map[string]time.Time
	// waiting counts, by AZ, the pods spread sent there that are not
	// scheduled yet, as the last Observe saw them.
	waiting map[string]int
}

// Placed is a live pod spread sent to an AZ, as Observe sees it.
type Placed struct {
	Namespace, Name, Zone string
	// Owner is the pod's controller (its UID); "" for a bare pod.
	Owner   string
	Created time.Time
	// Scheduled says the pod is bound to a node, since ScheduledAt (zero
	// when not known).
	Scheduled   bool
	ScheduledAt time.Time
}

// Change is an AZ that went unavailable, or available again, and the pod
// that showed it.
type Change struct {
	Zone      string
	Available bool
	Pod       Placed
}

// Observe updates the availability from the pods spread placed, at now. It
// returns what changed, and the pods that have waited for After in an
// unavailable AZ: those to replace.
func (a *Availability) Observe(placed []Placed, now time.Time) (changes []Change, stuck []Placed) {
	if a.down == nil {
		a.down = map[string]time.Time{}
	}
	a.waiting = map[string]int{}
	// The oldest first, so that the pod named in a change is the one that
	// waited longest.
	placed = slices.Clone(placed)
	slices.SortFunc(placed, func(x, y Placed) int { return x.Created.Compare(y.Created) })
	runs := map[string]map[string]bool{} // owner → the AZs it has pods scheduled in
	for _, p := range placed {
		if p.Scheduled && p.Owner != "" {
			if runs[p.Owner] == nil {
				runs[p.Owner] = map[string]bool{}
			}
			runs[p.Owner][p.Zone] = true
		}
	}
	elsewhere := func(p Placed) bool {
		for z := range runs[p.Owner] {
			if z != p.Zone {
				return true
			}
		}
		return false
	}
	var waited []Placed
	for _, p := range placed {
		since, down := a.down[p.Zone]
		switch {
		case p.Scheduled && down && (p.Created.After(since) || p.ScheduledAt.After(since)):
			// Sent there, or started there, after it was found
			// unavailable: it works again.
			delete(a.down, p.Zone)
			changes = append(changes, Change{Zone: p.Zone, Available: true, Pod: p})
		case p.Scheduled:
		case now.Sub(p.Created) < a.After:
			a.waiting[p.Zone]++
		default:
			a.waiting[p.Zone]++
			waited = append(waited, p)
			if elsewhere(p) && (!down || now.Sub(since) >= a.Retry) {
				// Newly unavailable, or tried again in vain.
				a.down[p.Zone] = now
				if !down {
					changes = append(changes, Change{Zone: p.Zone, Pod: p})
				}
			}
		}
	}
	for _, p := range waited {
		if _, down := a.down[p.Zone]; down {
			stuck = append(stuck, p)
		}
	}
	return changes, stuck
}

// Available says whether the AZ is neither excluded nor found unavailable.
func (a *Availability) Available(zone string) bool {
	_, down := a.down[zone]
	return !a.Excluded[zone] && !down
}

// Usable says whether a pod may be sent to the AZ at now: it is available,
// or it has been unavailable for Retry and no pod spread sent there waits
// (recent counts those sent that Observe has not seen yet): it is tried
// again with one pod at a time.
func (a *Availability) Usable(zone string, now time.Time, recent int) bool {
	if a.Excluded[zone] {
		return false
	}
	since, down := a.down[zone]
	return !down || now.Sub(since) >= a.Retry && a.waiting[zone]+recent == 0
}

// Balanced says whether the rebalancer balances over the AZ at now: it is
// available, or being tried again, so that a pod evicted from the fullest
// AZ goes there.
func (a *Availability) Balanced(zone string, now time.Time) bool {
	if a.Excluded[zone] {
		return false
	}
	since, down := a.down[zone]
	return !down || now.Sub(since) >= a.Retry
}

// Usable keeps the options a pod may be sent to (see
// [Availability.Usable]); all of them when none is, so that a pod is
// still placed as well as can be when every AZ is down.
func Usable(opts []Option, usable func(zone string) bool) []Option {
	out := slices.DeleteFunc(slices.Clone(opts), func(o Option) bool { return !usable(o.Zone) })
	if len(out) == 0 {
		return opts
	}
	return out
}
