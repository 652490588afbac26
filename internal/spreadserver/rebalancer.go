package spreadserver

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// waitReplacement bounds how long the rebalancer waits for the replacement
// of a pod it evicted to be Ready before it looks at that workload afresh;
// backOff is how long it leaves a workload alone after an eviction that did
// not happen (a PodDisruptionBudget, an error, a dry run).
const (
	waitReplacement = 5 * time.Minute
	backOff         = time.Minute
)

// Rebalancer evicts, one pod at a time, from the fullest AZ of each
// opted-in workload whose Fargate pods are skewed by more than one.
type Rebalancer struct {
	Client kubernetes.Interface
	Placer *Placer
	// Namespaces is a cache of namespaces, for their opt-in label.
	Namespaces cache.Indexer
	// DryRun reports the evictions it would make (log, event, metric)
	// without making them.
	DryRun  bool
	Metrics *Metrics
	now     func() time.Time

	// waiting holds, per controller, what ends its wait after an eviction
	// or a back-off.
	waiting map[types.UID]wait
}

// wait is a workload left alone until a time, or until it has ready Ready
// pods again (the replacement of the pod evicted is Ready); ready 0 is a
// back-off.
type wait struct {
	ready int
	until time.Time
}

// group is the live pods of one opted-in controller.
type group struct {
	ns    string
	owner metav1.OwnerReference
	pods  []*corev1.Pod
}

// Pass looks at every workload once and evicts at most one pod. It returns
// whether it evicted one.
func (r *Rebalancer) Pass(ctx context.Context) bool {
	if r.waiting == nil {
		r.waiting = map[types.UID]wait{}
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	zones := r.Placer.Zones()
	r.Metrics.skew.Reset() // workloads gone since the last pass leave no series
	for _, g := range r.groups() {
		opts := zones.For(g.ns, g.pods[0].Labels)
		if opts == nil {
			continue
		}
		names := make([]string, len(opts))
		for i, o := range opts {
			names[i] = o.Zone
		}
		members := make([]spread.Member, 0, len(g.pods))
		load, ready := map[string]int{}, 0
		for _, p := range g.pods {
			m := spread.Member{Namespace: p.Namespace, Name: p.Name, Zone: r.Placer.ZoneOf(p), Ready: podutils.IsPodReady(p), Created: p.CreationTimestamp.Time}
			members = append(members, m)
			load[m.Zone]++
			if m.Ready {
				ready++
			}
		}
		ownerName := g.owner.Kind + "/" + g.owner.Name
		r.Metrics.skew.WithLabelValues(g.ns, ownerName).Set(float64(spread.Skew(load, names)))
		if r.waits(ctx, g, ready, now()) {
			continue // the replacement of the last eviction is not Ready yet, or backing off
		}
		delete(r.waiting, g.owner.UID)
		victim, ok := spread.Victim(members, names)
		if !ok {
			continue
		}
		ref, settled := r.workload(ctx, g)
		if !settled {
			continue // a rollout replaces these pods anyway
		}
		if r.evict(ctx, g, ref, victim, load) {
			r.waiting[g.owner.UID] = wait{ready: ready, until: now().Add(waitReplacement)}
			return true
		}
		// Not evicted: leave this workload alone for a while, go on with the others.
		r.waiting[g.owner.UID] = wait{until: now().Add(backOff)}
	}
	return false
}

// waits reports whether a workload with ready Ready pods is still left
// alone: backing off, or waiting for the replacement of the pod it evicted,
// unless it was scaled down meanwhile to what is Ready.
func (r *Rebalancer) waits(ctx context.Context, g group, ready int, now time.Time) bool {
	w, ok := r.waiting[g.owner.UID]
	switch {
	case !ok || !now.Before(w.until):
		return false
	case w.ready == 0:
		return true
	case ready >= w.ready:
		return false
	}
	want, ok := r.replicas(ctx, g)
	return !ok || ready < want
}

// replicas reads the replicas a ReplicaSet or StatefulSet wants.
func (r *Rebalancer) replicas(ctx context.Context, g group) (int, bool) {
	var n *int32
	switch g.owner.Kind {
	case "ReplicaSet":
		rs, err := r.Client.AppsV1().ReplicaSets(g.ns).Get(ctx, g.owner.Name, metav1.GetOptions{})
		if err != nil {
			return 0, false
		}
		n = rs.Spec.Replicas
	case "StatefulSet":
		ss, err := r.Client.AppsV1().StatefulSets(g.ns).Get(ctx, g.owner.Name, metav1.GetOptions{})
		if err != nil {
			return 0, false
		}
		n = ss.Spec.Replicas
	}
	if n == nil {
		return 0, false
	}
	return int(*n), true
}

// groups gathers the live pods of opted-in controllers by controller, in a
// fixed order.
func (r *Rebalancer) groups() []group {
	by := map[types.UID]*group{}
	for _, obj := range r.Placer.pods.List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || !live.Alive(p) || !r.optedIn(p) {
			continue
		}
		// Only replicas are rebalanced: an evicted Job pod loses its work
		// and counts against the Job's backoffLimit.
		c := metav1.GetControllerOfNoCopy(p)
		if c == nil || (c.Kind != "ReplicaSet" && c.Kind != "StatefulSet") {
			continue
		}
		g := by[c.UID]
		if g == nil {
			g = &group{ns: p.Namespace, owner: *c}
			by[c.UID] = g
		}
		g.pods = append(g.pods, p)
	}
	out := make([]group, 0, len(by))
	for _, g := range by {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.ns, b.ns), cmp.Compare(a.owner.Kind, b.owner.Kind), cmp.Compare(a.owner.Name, b.owner.Name))
	})
	return out
}

// optedIn reports whether a pod or its namespace carries the opt-in label.
func (r *Rebalancer) optedIn(p *corev1.Pod) bool {
	if p.Labels[spread.EnabledLabel] == "true" {
		return true
	}
	if r.Namespaces == nil {
		return false
	}
	obj, ok, _ := r.Namespaces.GetByKey(p.Namespace)
	return ok && obj.(*corev1.Namespace).Labels[spread.EnabledLabel] == "true"
}

// evict evicts the victim through the Eviction API, so that
// PodDisruptionBudgets hold, and records an event on the workload ref. It
// returns whether the pod was evicted.
func (r *Rebalancer) evict(ctx context.Context, g group, ref corev1.ObjectReference, victim spread.Member, load map[string]int) bool {
	msg := fmt.Sprintf("evicting pod %s from %s to balance AZs %v", victim.Name, victim.Zone, load)
	result := "evicted"
	if r.DryRun {
		result, msg = "dry-run", "would be "+msg+" (dry run)"
	} else {
		err := r.Client.PolicyV1().Evictions(victim.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: victim.Name, Namespace: victim.Namespace},
		})
		switch {
		case apierrors.IsTooManyRequests(err):
			result, msg = "blocked", fmt.Sprintf("a PodDisruptionBudget does not allow evicting pod %s from %s now", victim.Name, victim.Zone)
		case apierrors.IsNotFound(err):
			return false
		case err != nil:
			result, msg = "failed", fmt.Sprintf("cannot evict pod %s: %v", victim.Name, err)
		}
	}
	r.Metrics.evictions.WithLabelValues(result).Inc()
	slog.Info("spread rebalancer", "namespace", g.ns, "owner", g.owner.Kind+"/"+g.owner.Name, "result", result, "message", msg)
	r.event(ctx, g.ns, ref, result, msg)
	return result == "evicted"
}

// workload returns the top of a group's owner chain (a Deployment rather
// than its ReplicaSet), and whether it is settled: not in the middle of a
// rollout, which replaces the pods anyway (and whose old ReplicaSet's pods
// must not be rebalanced).
func (r *Rebalancer) workload(ctx context.Context, g group) (corev1.ObjectReference, bool) {
	ref := corev1.ObjectReference{Kind: g.owner.Kind, APIVersion: g.owner.APIVersion, Name: g.owner.Name, Namespace: g.ns, UID: g.owner.UID}
	if g.owner.Kind != "ReplicaSet" {
		return ref, true
	}
	rs, err := r.Client.AppsV1().ReplicaSets(g.ns).Get(ctx, g.owner.Name, metav1.GetOptions{})
	if err != nil {
		return ref, false
	}
	c := metav1.GetControllerOfNoCopy(rs)
	if c == nil {
		return ref, true
	}
	ref = corev1.ObjectReference{Kind: c.Kind, APIVersion: c.APIVersion, Name: c.Name, Namespace: g.ns, UID: c.UID}
	if c.Kind != "Deployment" {
		return ref, true
	}
	d, err := r.Client.AppsV1().Deployments(g.ns).Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil {
		return ref, false
	}
	want := *d.Spec.Replicas
	settled := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.Replicas == want &&
		rs.Spec.Replicas != nil && *rs.Spec.Replicas == want
	return ref, settled
}

// event records an event on the workload.
func (r *Rebalancer) event(ctx context.Context, ns string, ref corev1.ObjectReference, result, msg string) {
	typ, reason := corev1.EventTypeNormal, "SpreadRebalance"
	if result == "blocked" || result == "failed" {
		typ = corev1.EventTypeWarning
	}
	now := metav1.Now()
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: ref.Name + ".", Namespace: ns},
		InvolvedObject: ref, Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "fargatekit-spread"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := r.Client.CoreV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		slog.Warn("spread rebalancer cannot record an event", "namespace", ns, "owner", ref.Name, "err", err)
	}
}
