package spreadserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// skewed adds n Ready pods of a controller, all in us-east-1a.
func skewed(t *testing.T, pods cache.Indexer, kind, name string, n int) {
	t.Helper()
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: "apps", Labels: map[string]string{spread.EnabledLabel: "true"},
				Annotations:       map[string]string{spread.ZoneAnnotation: "us-east-1a"},
				OwnerReferences:   []metav1.OwnerReference{{Kind: kind, Name: name, UID: types.UID(name), Controller: new(true)}},
				CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC))},
			Spec:   corev1.PodSpec{NodeName: fmt.Sprintf("fargate-%s-%d", name, i)},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
}

// appsNamespace is a namespace cache holding "apps", with the opt-in label
// set to enabled ("" for none).
func appsNamespace(t *testing.T, enabled string) cache.Indexer {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{"team": "shop"}}}
	if enabled != "" {
		ns.Labels[spread.EnabledLabel] = enabled
	}
	namespaces := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := namespaces.Add(ns); err != nil {
		t.Fatal(err)
	}
	return namespaces
}

// TestRebalancerOptedInNamespaces: spread evicts only in namespaces that
// opted in; pods opted in by their own label are placed, never evicted.
func TestRebalancerOptedInNamespaces(t *testing.T) {
	for _, tc := range []struct {
		enabled string
		evicts  bool
	}{{"true", true}, {"false", false}, {"", false}} {
		p, pods, now := newPlacer(t)
		skewed(t, pods, "StatefulSet", "w", 3) // opted in by their own label
		client := fake.NewClientset(statefulSet("w", 3))
		evicted := recordEvictions(client)
		r := &Rebalancer{Client: client, Placer: p, Namespaces: appsNamespace(t, tc.enabled), Metrics: p.metrics, now: func() time.Time { return *now }}
		if got := r.Pass(context.Background()); got != tc.evicts || len(*evicted) != map[bool]int{true: 1}[tc.evicts] {
			t.Errorf("namespace labelled %s=%q: evicted %v, want an eviction %v", spread.EnabledLabel, tc.enabled, *evicted, tc.evicts)
		}
	}
}

// recordEvictions makes the client's evictions succeed, and records the
// names of the pods evicted.
func recordEvictions(client *fake.Clientset) *[]string {
	var evicted []string
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			evicted = append(evicted, a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name)
		}
		return true, nil, nil
	})
	return &evicted
}

// TestRebalancerPass: a workload whose eviction a PodDisruptionBudget
// refuses is left alone for a while and the next one is evicted in the same
// pass; Job pods are never evicted; a workload waits for its replacement.
func TestRebalancerPass(t *testing.T) {
	p, pods, now := newPlacer(t)
	skewed(t, pods, "Job", "batch", 3)
	skewed(t, pods, "StatefulSet", "a-held", 3)
	skewed(t, pods, "StatefulSet", "b-free", 3)
	client := fake.NewClientset()
	var evicted []string
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		if e.Name[:6] == "a-held" {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		evicted = append(evicted, e.Name)
		// The pod is gone, as the informer would tell, and no replacement yet.
		obj, _, _ := pods.GetByKey("apps/" + e.Name)
		return true, nil, pods.Delete(obj)
	})
	ctx := context.Background()
	for _, name := range []string{"a-held", "b-free"} {
		if _, err := client.AppsV1().StatefulSets("apps").Create(ctx, statefulSet(name, 3), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	r := &Rebalancer{Client: client, Placer: p, Namespaces: appsNamespace(t, "true"), Metrics: p.metrics, now: func() time.Time { return *now }}
	blocked := func() float64 { return testutil.ToFloat64(p.metrics.evictions.WithLabelValues("blocked")) }
	if !r.Pass(ctx) || len(evicted) != 1 || evicted[0] != "b-free-2" || blocked() != 1 {
		t.Fatalf("first pass: evicted %v, %v blocked; want a-held refused, then b-free-2 (the youngest) evicted", evicted, blocked())
	}
	if r.Pass(ctx) || blocked() != 1 {
		t.Errorf("second pass: evicted %v, %v blocked; want nothing while a-held backs off and b-free's replacement is not Ready", evicted, blocked())
	}
	*now = now.Add(backOff + time.Second)
	if r.Pass(ctx) || blocked() != 2 || len(evicted) != 1 {
		t.Errorf("after the back-off: evicted %v, %v blocked; want a-held tried (and refused) again", evicted, blocked())
	}
	// b-free is scaled down to its two Ready pods before the replacement
	// came: the wait is over, and its skew (both in one AZ) is evened out.
	if _, err := client.AppsV1().StatefulSets("apps").Update(ctx, statefulSet("b-free", 2), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !r.Pass(ctx) || len(evicted) != 2 || evicted[1] != "b-free-1" {
		t.Errorf("after b-free's scale-down: evicted %v; want b-free-1 evicted", evicted)
	}
	if got := testutil.ToFloat64(p.metrics.skew.WithLabelValues("apps", "StatefulSet/a-held")); got != 3 {
		t.Errorf("skew of a-held = %v, want 3", got)
	}
}

// statefulSet is a settled StatefulSet of n replicas: every replica at its
// current revision.
func statefulSet(name string, n int32) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", Generation: 1},
		Spec:       appsv1.StatefulSetSpec{Replicas: &n},
		Status: appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: n, UpdatedReplicas: n,
			CurrentRevision: name + "-1", UpdateRevision: name + "-1"},
	}
}

// TestRebalancerRefuses checks each skewed workload the rebalancer must
// leave alone, with the reason it counts, beside the near misses it
// evicts from.
func TestRebalancerRefuses(t *testing.T) {
	pinned := map[string]string{fargate.ProfileLabel: "apps-us-east-1a"}
	tests := []struct {
		name   string
		kind   string // of the pods' controller
		object func() runtime.Object
		setup  func(t *testing.T, r *Rebalancer, p *Placer, pods cache.Indexer)
		skip   string // the reason counted; "" when a pod is evicted
	}{{
		name: "a StatefulSet, settled", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("w", 3) },
	}, {
		name: "a StatefulSet whose template pins its profile", kind: "StatefulSet",
		object: func() runtime.Object {
			ss := statefulSet("w", 3)
			ss.Spec.Template.Labels = pinned
			return ss
		},
		skip: skipPinned,
	}, {
		name: "a StatefulSet mid-update (OnDelete)", kind: "StatefulSet",
		object: func() runtime.Object {
			ss := statefulSet("w", 3)
			ss.Spec.UpdateStrategy.Type = appsv1.OnDeleteStatefulSetStrategyType
			ss.Status.UpdateRevision, ss.Status.UpdatedReplicas = "w-2", 1
			return ss
		},
		skip: skipRollout,
	}, {
		name: "a StatefulSet not yet observed", kind: "StatefulSet",
		object: func() runtime.Object {
			ss := statefulSet("w", 3)
			ss.Generation = 2
			return ss
		},
		skip: skipRollout,
	}, {
		name: "a ReplicaSet of its own", kind: "ReplicaSet",
		object: func() runtime.Object { return replicaSet(nil, nil) },
	}, {
		name: "a ReplicaSet whose template pins its profile", kind: "ReplicaSet",
		object: func() runtime.Object { return replicaSet(pinned, nil) },
		skip:   skipPinned,
	}, {
		name: "a ReplicaSet of an Argo Rollout", kind: "ReplicaSet",
		object: func() runtime.Object {
			return replicaSet(nil, &metav1.OwnerReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "w", UID: "rollout", Controller: new(true)})
		},
		skip: skipUnknownOwner,
	}, {
		name: "a StatefulSet that cannot be read", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("other", 3) },
		skip:   skipUnreadable,
	}, {
		name: "a pod running away from the AZ spread sent it to", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("w", 3) },
		setup: func(t *testing.T, _ *Rebalancer, p *Placer, pods cache.Indexer) {
			if err := p.nodes.Add(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fargate-b", Labels: map[string]string{corev1.LabelTopologyZone: "us-east-1b"}}}); err != nil {
				t.Fatal(err)
			}
			obj, _, _ := pods.GetByKey("apps/w-0")
			pod := obj.(*corev1.Pod).DeepCopy()
			pod.Spec.NodeName = "fargate-b" // sent to us-east-1a (the annotation), runs in us-east-1b
			if err := pods.Update(pod); err != nil {
				t.Fatal(err)
			}
		},
		skip: skipMisplaced,
	}, {
		name: "a workload evicted as often as an hour allows", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("w", 3) },
		setup: func(t *testing.T, r *Rebalancer, _ *Placer, _ cache.Indexer) {
			r.WorkloadEvictionsPerHour = 2
			r.evicted = map[types.UID][]time.Time{"w": {r.now().Add(-59 * time.Minute), r.now().Add(-time.Minute)}}
		},
		skip: skipWorkloadCap,
	}, {
		name: "near miss: the oldest of those evictions an hour ago", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("w", 3) },
		setup: func(t *testing.T, r *Rebalancer, _ *Placer, _ cache.Indexer) {
			r.WorkloadEvictionsPerHour = 2
			r.evicted = map[types.UID][]time.Time{"w": {r.now().Add(-time.Hour), r.now().Add(-time.Minute)}}
		},
	}, {
		name: "a cluster that evicted as often as a minute allows", kind: "StatefulSet",
		object: func() runtime.Object { return statefulSet("w", 3) },
		setup: func(t *testing.T, r *Rebalancer, _ *Placer, _ cache.Indexer) {
			r.EvictionsPerMinute = 1
			r.all = []time.Time{r.now().Add(-30 * time.Second)}
		},
		skip: skipClusterCap,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, pods, now := newPlacer(t)
			skewed(t, pods, tc.kind, "w", 3)
			client := fake.NewClientset(tc.object())
			var evicted []string
			client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if a.GetSubresource() == "eviction" {
					evicted = append(evicted, a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction).Name)
				}
				return true, nil, nil
			})
			r := &Rebalancer{Client: client, Placer: p, Namespaces: appsNamespace(t, "true"), Metrics: p.metrics, now: func() time.Time { return *now },
				waiting: map[types.UID]wait{}, evicted: map[types.UID][]time.Time{}, misplaced: map[types.UID]bool{}}
			if tc.setup != nil {
				tc.setup(t, r, p, pods)
			}
			ctx := context.Background()
			got := r.Pass(ctx)
			if tc.skip == "" {
				if !got || len(evicted) != 1 {
					t.Errorf("evicted %v, want one pod", evicted)
				}
				return
			}
			if got || len(evicted) != 0 {
				t.Errorf("evicted %v, want none", evicted)
			}
			if n := testutil.ToFloat64(p.metrics.skipped.WithLabelValues(tc.skip)); n != 1 {
				t.Errorf("skipped %s = %v, want 1", tc.skip, n)
			}
			if tc.skip == skipMisplaced {
				events, err := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
				if err != nil || len(events.Items) != 1 || events.Items[0].Reason != "SpreadMisplaced" || events.Items[0].Type != corev1.EventTypeWarning {
					t.Errorf("events %+v (%v), want one Warning SpreadMisplaced", events, err)
				}
				*now = now.Add(time.Hour)
				if r.Pass(ctx) || len(evicted) != 0 {
					t.Errorf("an hour later: evicted %v; spread stops acting on the workload", evicted)
				}
				if events, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{}); len(events.Items) != 1 {
					t.Errorf("an hour later: %d events, want the one", len(events.Items))
				}
			}
		})
	}
}

// replicaSet is the ReplicaSet w of 3 replicas with a template of these
// labels, controlled by owner (none when nil).
func replicaSet(labels map[string]string, owner *metav1.OwnerReference) *appsv1.ReplicaSet {
	n := int32(3)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "apps"},
		Spec: appsv1.ReplicaSetSpec{Replicas: &n, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}}}
	if owner != nil {
		rs.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return rs
}

// TestRebalancerUnavailableZone: a pod that waits unscheduled in
// us-east-1a past the threshold makes the AZ unavailable (an event on the
// pod, the metric at 0); the rebalancer replaces that pod, the webhook
// sends the new one elsewhere, and no pod is evicted towards us-east-1a; an
// excluded AZ is never chosen.
func TestRebalancerUnavailableZone(t *testing.T) {
	ctx := context.Background()
	p, pods, now := newPlacer(t)
	p.SetAvailability(time.Minute, 10*time.Minute, []string{"us-east-1c"})
	owner := metav1.OwnerReference{Kind: "StatefulSet", Name: "w", UID: "w", Controller: new(true)}
	add := func(name, zone string, created time.Duration, scheduled bool) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", Annotations: map[string]string{spread.ZoneAnnotation: zone},
				OwnerReferences: []metav1.OwnerReference{owner}, CreationTimestamp: metav1.NewTime(now.Add(created))},
			Status: corev1.PodStatus{Phase: corev1.PodPending},
		}
		if scheduled {
			pod.Spec.NodeName = "fargate-" + name
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		}
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	add("w-0", "us-east-1b", -time.Hour, true)
	add("w-1", "us-east-1b", -time.Hour, true)
	add("w-2", "us-east-1a", -2*time.Minute, false) // waits past the minute
	client := fake.NewClientset(statefulSet("w", 3))
	evicted := recordEvictions(client)
	r := &Rebalancer{Client: client, Placer: p, Namespaces: appsNamespace(t, "true"), Metrics: p.metrics, now: func() time.Time { return *now }}
	if !r.Pass(ctx) || !slices.Equal(*evicted, []string{"w-2"}) {
		t.Fatalf("evicted %v, want w-2, which waits in us-east-1a", *evicted)
	}
	if got := testutil.ToFloat64(p.metrics.available.WithLabelValues("us-east-1a")); got != 0 {
		t.Errorf("fargatekit_spread_zone_available{zone=us-east-1a} = %v, want 0", got)
	}
	events, err := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, e := range events.Items {
		reasons = append(reasons, e.InvolvedObject.Name+" "+e.Reason)
	}
	slices.Sort(reasons)
	if want := []string{"w-2 SpreadReplace", "w-2 SpreadZoneUnavailable"}; !slices.Equal(reasons, want) {
		t.Errorf("events %v, want %v", reasons, want)
	}
	// The replacement goes to us-east-1b (us-east-1a is out, us-east-1c
	// excluded), though us-east-1a holds none of the workload's pods.
	obj, _, _ := pods.GetByKey("apps/w-2")
	if err := pods.Delete(obj); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "w-2", Namespace: "apps", OwnerReferences: []metav1.OwnerReference{owner}}}
	if zone, _ := admit(t, p, pod, "uid-w-2"); zone != "us-east-1b" {
		t.Errorf("the replacement was sent to %q, want us-east-1b", zone)
	}
	// Running 3/0/0 in us-east-1b: balanced over the AZs that start pods.
	add("w-2", "us-east-1b", 0, true)
	*evicted = nil
	if r.Pass(ctx) || len(*evicted) != 0 {
		t.Errorf("evicted %v, want none towards us-east-1a or us-east-1c", *evicted)
	}
}

// TestRebalancerReplaceBacksOff: a waiting pod whose replacement fails is
// tried again only after the back-off, not at every pass.
func TestRebalancerReplaceBacksOff(t *testing.T) {
	ctx := context.Background()
	p, pods, now := newPlacer(t)
	p.SetAvailability(time.Minute, 10*time.Minute, nil)
	owner := metav1.OwnerReference{Kind: "StatefulSet", Name: "w", UID: "w", Controller: new(true)}
	for _, pod := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "w-0", Namespace: "apps", Annotations: map[string]string{spread.ZoneAnnotation: "us-east-1b"},
			OwnerReferences: []metav1.OwnerReference{owner}, CreationTimestamp: metav1.NewTime(now.Add(-time.Hour))},
			Spec: corev1.PodSpec{NodeName: "fargate-w-0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}},
		{ObjectMeta: metav1.ObjectMeta{Name: "w-1", Namespace: "apps", Annotations: map[string]string{spread.ZoneAnnotation: "us-east-1a"},
			OwnerReferences: []metav1.OwnerReference{owner}, CreationTimestamp: metav1.NewTime(now.Add(-2 * time.Minute))},
			Status: corev1.PodStatus{Phase: corev1.PodPending}},
	} {
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
	client := fake.NewClientset(statefulSet("w", 2))
	tries := 0
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			tries++
			return true, nil, apierrors.NewForbidden(policyv1.Resource("evictions"), "w-1", errors.New("denied"))
		}
		return false, nil, nil
	})
	r := &Rebalancer{Client: client, Placer: p, Namespaces: appsNamespace(t, "true"), Metrics: p.metrics, now: func() time.Time { return *now }}
	for range 3 {
		r.Pass(ctx)
	}
	if failed := testutil.ToFloat64(p.metrics.evictions.WithLabelValues("failed")); tries != 1 || failed != 1 {
		t.Errorf("three passes: %d tries, %v failed, want one of each", tries, failed)
	}
	*now = now.Add(backOff)
	r.Pass(ctx)
	if tries != 2 {
		t.Errorf("after the back-off: %d tries, want 2", tries)
	}
}
