package spread

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAvailability follows an AZ through an outage: a pod waits there past
// After and the AZ goes unavailable, the pod to be replaced; after Retry it
// is tried with one pod at a time; a pod that waits again keeps it out, one
// that starts brings it back.
func TestAvailability(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	a := &Availability{After: 2 * time.Minute, Retry: 5 * time.Minute, Excluded: map[string]bool{"us-east-1d": true}}
	running := []Placed{
		{Owner: "web", Namespace: "apps", Name: "old-a", Zone: "us-east-1a", Created: at(-time.Hour), Scheduled: true},
		{Owner: "web", Namespace: "apps", Name: "old-b", Zone: "us-east-1b", Created: at(-time.Hour), Scheduled: true},
	}
	waits := Placed{Owner: "web", Namespace: "apps", Name: "web-1", Zone: "us-east-1a", Created: at(-time.Minute)}
	steps := []struct {
		name    string
		now     time.Duration
		placed  []Placed
		recent  int // sent to us-east-1a, not seen yet
		changes []Change
		stuck   []Placed
		usable  bool // us-east-1a for a new pod
		balance bool // us-east-1a for the rebalancer
	}{
		{name: "a pod waits, for less than After", now: 0, placed: append(running, waits), usable: true, balance: true},
		{name: "it waited for After: unavailable", now: time.Minute, placed: append(running, waits),
			changes: []Change{{Zone: "us-east-1a", Pod: waits}}, stuck: []Placed{waits}},
		{name: "replaced; not yet Retry later", now: 5 * time.Minute, placed: running},
		{name: "Retry later: tried again", now: 6 * time.Minute, placed: running, usable: true, balance: true},
		{name: "one pod at a time: one sent", now: 6 * time.Minute, placed: running, recent: 1, balance: true},
		{name: "one pod at a time: it waits", now: 7 * time.Minute, balance: true,
			placed: append(running, Placed{Owner: "web", Namespace: "apps", Name: "web-2", Zone: "us-east-1a", Created: at(6 * time.Minute)})},
		{name: "it waited for After: out again", now: 8 * time.Minute,
			placed: append(running, Placed{Owner: "web", Namespace: "apps", Name: "web-2", Zone: "us-east-1a", Created: at(6 * time.Minute)}),
			stuck:  []Placed{{Owner: "web", Namespace: "apps", Name: "web-2", Zone: "us-east-1a", Created: at(6 * time.Minute)}}},
		{name: "Retry after that", now: 13 * time.Minute, placed: running, usable: true, balance: true},
		{name: "a pod started there before it was found unavailable says nothing", now: 13 * time.Minute, usable: true, balance: true,
			placed: append(running, Placed{Owner: "web", Namespace: "apps", Name: "web-0", Zone: "us-east-1a", Created: at(-time.Hour), Scheduled: true, ScheduledAt: at(7 * time.Minute)})},
		{name: "a pod sent then starts: available", now: 14 * time.Minute, usable: true, balance: true,
			placed:  append(running, Placed{Owner: "web", Namespace: "apps", Name: "web-3", Zone: "us-east-1a", Created: at(13 * time.Minute), Scheduled: true}),
			changes: []Change{{Zone: "us-east-1a", Available: true, Pod: Placed{Owner: "web", Namespace: "apps", Name: "web-3", Zone: "us-east-1a", Created: at(13 * time.Minute), Scheduled: true}}}},
	}
	for _, s := range steps {
		now := at(s.now)
		changes, stuck := a.Observe(s.placed, now)
		if diff := cmp.Diff(s.changes, changes); diff != "" {
			t.Errorf("%s: changes (-want +got):\n%s", s.name, diff)
		}
		if diff := cmp.Diff(s.stuck, stuck); diff != "" {
			t.Errorf("%s: pods to replace (-want +got):\n%s", s.name, diff)
		}
		if got := a.Usable("us-east-1a", now, s.recent); got != s.usable {
			t.Errorf("%s: us-east-1a usable %v, want %v", s.name, got, s.usable)
		}
		if got := a.Balanced("us-east-1a", now); got != s.balance {
			t.Errorf("%s: us-east-1a balanced over %v, want %v", s.name, got, s.balance)
		}
		if !a.Usable("us-east-1b", now, 0) || a.Usable("us-east-1d", now, 0) || a.Balanced("us-east-1d", now) || a.Available("us-east-1d") {
			t.Errorf("%s: us-east-1b must stay usable, the excluded us-east-1d never", s.name)
		}
	}
}

// TestAvailabilityRefused: a pod that waits because Fargate refuses it,
// whose owner runs in no AZ, says nothing of its AZ.
func TestAvailabilityRefused(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a := &Availability{After: time.Minute, Retry: 5 * time.Minute}
	refused := []Placed{
		{Owner: "privileged", Namespace: "apps", Name: "p-0", Zone: "us-east-1a", Created: now.Add(-time.Hour)},
		{Owner: "privileged", Namespace: "apps", Name: "p-1", Zone: "us-east-1b", Created: now.Add(-time.Hour)},
		{Namespace: "apps", Name: "bare", Zone: "us-east-1c", Created: now.Add(-time.Hour)},
	}
	changes, stuck := a.Observe(refused, now)
	if len(changes) != 0 || len(stuck) != 0 || !a.Available("us-east-1a") || !a.Available("us-east-1b") || !a.Available("us-east-1c") {
		t.Errorf("changes %v, to replace %v: want none, every AZ available", changes, stuck)
	}
}

// TestUsable: the options a pod may be sent to, or all when none may.
func TestUsable(t *testing.T) {
	opts := []Option{{Zone: "us-east-1a", Profile: "apps-a"}, {Zone: "us-east-1b", Profile: "apps-b"}}
	if got := Usable(opts, func(z string) bool { return z != "us-east-1a" }); !cmp.Equal(got, opts[1:]) {
		t.Errorf("us-east-1a out: %v", got)
	}
	if got := Usable(opts, func(string) bool { return false }); !cmp.Equal(got, opts) {
		t.Errorf("every AZ out: %v, want all of them", got)
	}
}

// TestAvailabilitySlowStart: a pod that waited past After, and so took its
// AZ out, brings the AZ back once it starts there: it was slow, not the AZ
// down.
func TestAvailabilitySlowStart(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	a := &Availability{After: time.Minute, Retry: 5 * time.Minute}
	other := Placed{Owner: "web", Namespace: "apps", Name: "web-0", Zone: "us-east-1b", Created: t0, Scheduled: true, ScheduledAt: t0}
	slow := Placed{Owner: "web", Namespace: "apps", Name: "web-1", Zone: "us-east-1a", Created: t0}
	if changes, _ := a.Observe([]Placed{other, slow}, t0.Add(time.Minute)); len(changes) != 1 || a.Available("us-east-1a") {
		t.Fatalf("changes %v: want us-east-1a out", changes)
	}
	slow.Scheduled, slow.ScheduledAt = true, t0.Add(90*time.Second)
	if changes, _ := a.Observe([]Placed{other, slow}, t0.Add(2*time.Minute)); len(changes) != 1 || !changes[0].Available || !a.Available("us-east-1a") {
		t.Errorf("changes %v: want us-east-1a back", changes)
	}
}
