package spreadserver

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
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

// The caps on evictions, unless set otherwise (--workload-evictions-per-hour,
// --evictions-per-minute): a workload that comes back skewed whatever is
// evicted (a wrong mapping of profiles to AZs, a webhook that is down) is
// evicted a few times an hour, not forever.
const (
	DefaultWorkloadEvictionsPerHour = 6
	DefaultEvictionsPerMinute       = 5
)

// Why the rebalancer leaves a skewed workload alone: the values of the
// reason label of fargatekit_spread_rebalance_skipped_total.
const (
	skipPinned       = "pinned"        // its template chooses its profile or zone: the webhook leaves its pods alone
	skipRollout      = "rollout"       // a rollout is replacing its pods
	skipUnknownOwner = "unknown-owner" // its ReplicaSet's controller is not a Deployment (Argo Rollouts, ...)
	skipMisplaced    = "misplaced"     // a pod runs in another AZ than spread sent it to
	skipWorkloadCap  = "workload-cap"  // evicted WorkloadEvictionsPerHour times in the last hour
	skipClusterCap   = "cluster-cap"   // EvictionsPerMinute evictions in the last minute
	skipUnreadable   = "unreadable"    // its controller cannot be read
)

// skipReasons are the reasons, for the metric's series.
var skipReasons = []string{skipPinned, skipRollout, skipUnknownOwner, skipMisplaced, skipWorkloadCap, skipClusterCap, skipUnreadable}

// Rebalancer evicts, one pod at a time, from the fullest AZ of each
// workload of an opted-in namespace whose Fargate pods are skewed by more
// than one.
type Rebalancer struct {
	Client kubernetes.Interface
	Placer *Placer
	// Namespaces is a cache of namespaces, for their opt-in label: only
	// the pods of opted-in namespaces are rebalanced.
	Namespaces cache.Indexer
	// DryRun reports the evictions it would make (log, event, metric)
	// without making them.
	DryRun  bool
	Metrics *Metrics
	// WorkloadEvictionsPerHour caps a workload's evictions in any hour,
	// EvictionsPerMinute the cluster's in any minute; 0 means the default.
	WorkloadEvictionsPerHour, EvictionsPerMinute int
	now                                          func() time.Time

	// waiting holds, per controller, what ends its wait after an eviction
	// or a back-off.
	waiting map[types.UID]wait
	// evicted holds when each controller's pods were evicted in the last
	// hour, and all holds the cluster's evictions of the last minute.
	evicted map[types.UID][]time.Time
	all     []time.Time
	// misplaced holds the controllers a pod of which runs away from the AZ
	// spread sent it to: spread stops acting on them until it restarts.
	misplaced map[types.UID]bool
	// unreplaced holds, by namespace/name, when a waiting pod's replacement
	// failed or was only said (a dry run): it is left alone for backOff.
	unreplaced map[string]time.Time
}

// wait is a workload left alone until a time, or until it has ready Ready
// pods again (the replacement of the pod evicted is Ready); ready 0 is a
// back-off.
type wait struct {
	ready int
	until time.Time
}

// group is the live pods of one controller of an opted-in namespace.
type group struct {
	ns    string
	owner metav1.OwnerReference
	pods  []*corev1.Pod
}

// Pass looks at every workload once and evicts at most one pod. It returns
// whether it evicted one.
func (r *Rebalancer) Pass(ctx context.Context) bool {
	if r.waiting == nil {
		r.waiting, r.evicted, r.misplaced = map[types.UID]wait{}, map[types.UID][]time.Time{}, map[types.UID]bool{}
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	changes, stuck := r.Placer.Observe()
	for _, c := range changes {
		r.zoneEvent(ctx, c)
	}
	if r.replace(ctx, stuck, now()) {
		return true
	}
	zones := r.Placer.Zones()
	r.Metrics.skew.Reset() // workloads gone since the last pass leave no series
	for _, g := range r.groups() {
		opts := zones.For(g.ns, g.pods[0].Labels)
		if opts == nil {
			continue
		}
		// Balanced over the AZs that start pods: none is evicted towards an
		// unavailable one.
		names := make([]string, 0, len(opts))
		for _, o := range opts {
			if r.Placer.Balanced(o.Zone) {
				names = append(names, o.Zone)
			}
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
		if r.misplaced[g.owner.UID] {
			r.skip(skipMisplaced)
			continue
		}
		if pod, sent, runs := r.misplacedPod(g); pod != "" {
			r.misplaced[g.owner.UID] = true
			r.skip(skipMisplaced)
			ref, _ := r.workload(ctx, g)
			r.event(ctx, ref, "misplaced", fmt.Sprintf("pod %s was sent to %s and runs in %s: the per-AZ profiles (or --zones) do not place pods where spread chooses; spread stops rebalancing this workload until it restarts", pod, sent, runs))
			continue
		}
		if r.waits(ctx, g, ready, now()) {
			continue // the replacement of the last eviction is not Ready yet, or backing off
		}
		delete(r.waiting, g.owner.UID)
		victim, ok := spread.Victim(members, names)
		if !ok {
			continue
		}
		ref, why := r.workload(ctx, g)
		if why == "" {
			why = r.capped(g.owner.UID, now())
		}
		if why != "" {
			r.skip(why)
			continue
		}
		if r.evict(ctx, g, ref, victim, load) {
			r.waiting[g.owner.UID] = wait{ready: ready, until: now().Add(waitReplacement)}
			r.evicted[g.owner.UID] = append(r.evicted[g.owner.UID], now())
			r.all = append(r.all, now())
			return true
		}
		// Not evicted: leave this workload alone for a while, go on with the others.
		r.waiting[g.owner.UID] = wait{until: now().Add(backOff)}
	}
	return false
}

// replace evicts, within the cluster's cap, one pod that waits in an
// unavailable AZ, so that its controller replaces it and the webhook sends
// the new pod elsewhere; a Pending pod's eviction passes its
// PodDisruptionBudget. It returns whether it evicted one.
func (r *Rebalancer) replace(ctx context.Context, stuck []spread.Placed, now time.Time) bool {
	if r.unreplaced == nil {
		r.unreplaced = map[string]time.Time{}
	}
	maps.DeleteFunc(r.unreplaced, func(_ string, at time.Time) bool { return now.Sub(at) >= backOff })
	for _, p := range stuck {
		if _, tried := r.unreplaced[p.Namespace+"/"+p.Name]; tried || !r.optedIn(p.Namespace) {
			continue
		}
		if r.capped("", now) != "" {
			r.skip(skipClusterCap)
			return false
		}
		ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: p.Namespace, Name: p.Name}
		msg := fmt.Sprintf("replacing pod %s: it has waited %s in %s, which spread leaves out until it starts pods again",
			p.Name, now.Sub(p.Created).Round(time.Second), p.Zone)
		result := "replaced"
		if r.DryRun {
			result, msg = "dry-run", "would be "+msg+" (dry run)"
		} else if err := r.Client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}}); apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			result, msg = "failed", fmt.Sprintf("cannot replace pod %s, waiting in %s: %v", p.Name, p.Zone, err)
		}
		r.Metrics.evictions.WithLabelValues(result).Inc()
		slog.Info("spread rebalancer", "namespace", p.Namespace, "pod", p.Name, "result", result, "message", msg)
		r.record(ctx, ref, corev1.EventTypeWarning, "SpreadReplace", msg)
		if result == "replaced" {
			r.all = append(r.all, now)
			return true
		}
		r.unreplaced[p.Namespace+"/"+p.Name] = now
	}
	return false
}

// zoneEvent records, on the pod that showed it, that an AZ went
// unavailable or came back.
func (r *Rebalancer) zoneEvent(ctx context.Context, c spread.Change) {
	ref := corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: c.Pod.Namespace, Name: c.Pod.Name}
	if c.Available {
		r.record(ctx, ref, corev1.EventTypeNormal, "SpreadZoneAvailable", fmt.Sprintf("%s starts spread's pods again: this pod started there", c.Zone))
		return
	}
	after, retry := r.Placer.availability()
	r.record(ctx, ref, corev1.EventTypeWarning, "SpreadZoneUnavailable",
		fmt.Sprintf("spread leaves %s out: this pod has waited there unscheduled for %s; it tries the AZ again with one pod in %s", c.Zone, after, retry))
}

// skip counts a skewed workload left alone, by reason.
func (r *Rebalancer) skip(reason string) { r.Metrics.skipped.WithLabelValues(reason).Inc() }

// misplacedPod returns a pod of g that runs on a node of another AZ than
// the one spread sent it to, with both AZs; "" when there is none.
func (r *Rebalancer) misplacedPod(g group) (pod, sent, runs string) {
	for _, p := range g.pods {
		sent, runs := p.Annotations[spread.ZoneAnnotation], r.Placer.nodeZone(p)
		if sent != "" && runs != "" && sent != runs {
			return p.Name, sent, runs
		}
	}
	return "", "", ""
}

// capped returns why an eviction from the controller uid now would pass a
// cap, "" when it would not; it forgets evictions older than the caps look.
func (r *Rebalancer) capped(uid types.UID, now time.Time) string {
	recent := func(ts []time.Time, d time.Duration) []time.Time {
		return slices.DeleteFunc(ts, func(t time.Time) bool { return now.Sub(t) >= d })
	}
	r.all = recent(r.all, time.Minute)
	r.evicted[uid] = recent(r.evicted[uid], time.Hour)
	if len(r.evicted[uid]) == 0 {
		delete(r.evicted, uid)
	}
	switch {
	case len(r.evicted[uid]) >= cmp.Or(r.WorkloadEvictionsPerHour, DefaultWorkloadEvictionsPerHour):
		return skipWorkloadCap
	case len(r.all) >= cmp.Or(r.EvictionsPerMinute, DefaultEvictionsPerMinute):
		return skipClusterCap
	}
	return ""
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

// groups gathers the live pods of controllers in opted-in namespaces by
// controller, in a fixed order.
func (r *Rebalancer) groups() []group {
	by := map[types.UID]*group{}
	for _, obj := range r.Placer.pods.List() {
		p, ok := obj.(*corev1.Pod)
		if !ok || !live.Alive(p) || !r.optedIn(p.Namespace) {
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

// optedIn reports whether the namespace carries the opt-in label: spread
// evicts only there (a pod opted in by its own label is placed, never
// evicted), as the chart's policy enforces.
func (r *Rebalancer) optedIn(ns string) bool {
	if r.Namespaces == nil {
		return false
	}
	obj, ok, _ := r.Namespaces.GetByKey(ns)
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
	r.event(ctx, ref, result, msg)
	return result == "evicted"
}

// workload returns the top of a group's owner chain (a Deployment rather
// than its ReplicaSet), and why its pods must not be evicted, "" when they
// may: its template pins their profile or zone (the webhook would send the
// replacement back where it was); a rollout is replacing them (and an old
// ReplicaSet's pods must not be rebalanced; a StatefulSet mid-update,
// OnDelete above all, would be updated by the eviction); or its
// ReplicaSet's controller is one spread does not know (Argo Rollouts),
// whose rollouts it cannot see.
func (r *Rebalancer) workload(ctx context.Context, g group) (corev1.ObjectReference, string) {
	ref := corev1.ObjectReference{Kind: g.owner.Kind, APIVersion: g.owner.APIVersion, Name: g.owner.Name, Namespace: g.ns, UID: g.owner.UID}
	method := r.Placer.Zones().Method()
	if g.owner.Kind == "StatefulSet" {
		ss, err := r.Client.AppsV1().StatefulSets(g.ns).Get(ctx, g.owner.Name, metav1.GetOptions{})
		switch {
		case err != nil || ss.Spec.Replicas == nil:
			return ref, skipUnreadable
		case spread.Pinned(method, ss.Spec.Template.Labels, ss.Spec.Template.Spec.NodeSelector):
			return ref, skipPinned
		}
		want := *ss.Spec.Replicas
		if ss.Status.ObservedGeneration < ss.Generation || ss.Status.UpdateRevision != ss.Status.CurrentRevision ||
			ss.Status.UpdatedReplicas != want || ss.Status.Replicas != want {
			return ref, skipRollout
		}
		return ref, ""
	}
	rs, err := r.Client.AppsV1().ReplicaSets(g.ns).Get(ctx, g.owner.Name, metav1.GetOptions{})
	if err != nil {
		return ref, skipUnreadable
	}
	if spread.Pinned(method, rs.Spec.Template.Labels, rs.Spec.Template.Spec.NodeSelector) {
		return ref, skipPinned
	}
	c := metav1.GetControllerOfNoCopy(rs)
	if c == nil {
		return ref, "" // a ReplicaSet of its own
	}
	ref = corev1.ObjectReference{Kind: c.Kind, APIVersion: c.APIVersion, Name: c.Name, Namespace: g.ns, UID: c.UID}
	if c.Kind != "Deployment" {
		return ref, skipUnknownOwner
	}
	d, err := r.Client.AppsV1().Deployments(g.ns).Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil || d.Spec.Replicas == nil {
		return ref, skipUnreadable
	}
	want := *d.Spec.Replicas
	settled := d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want && d.Status.Replicas == want &&
		rs.Spec.Replicas != nil && *rs.Spec.Replicas == want
	if !settled {
		return ref, skipRollout
	}
	return ref, ""
}

// event records an event on the workload.
func (r *Rebalancer) event(ctx context.Context, ref corev1.ObjectReference, result, msg string) {
	typ, reason := corev1.EventTypeNormal, "SpreadRebalance"
	switch result {
	case "blocked", "failed":
		typ = corev1.EventTypeWarning
	case "misplaced":
		typ, reason = corev1.EventTypeWarning, "SpreadMisplaced"
	}
	r.record(ctx, ref, typ, reason, msg)
}

// record records an event on the object ref, in its namespace.
func (r *Rebalancer) record(ctx context.Context, ref corev1.ObjectReference, typ, reason, msg string) {
	now := metav1.Now()
	ev := &corev1.Event{
		// Named as client-go's recorder names events.
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, time.Now().UnixNano()), Namespace: ref.Namespace},
		InvolvedObject: ref, Reason: reason, Message: msg, Type: typ,
		Source:         corev1.EventSource{Component: "fargatekit-spread"},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := r.Client.CoreV1().Events(ref.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		slog.Warn("spread rebalancer cannot record an event", "namespace", ref.Namespace, "object", ref.Kind+"/"+ref.Name, "err", err)
	}
}
