// Package spreadserver runs `fargatekit spread serve`: a mutating admission
// webhook that sends each opted-in Fargate pod to the AZ where its
// workload has the fewest pods (through the per-AZ profile the label
// eks.amazonaws.com/fargate-profile names), a rebalancer that evicts pods
// from the fullest AZ of a workload that is skewed anyway, and their
// Prometheus metrics. The decisions are pkg/spread's; this package reads
// the cluster and acts.
package spreadserver

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// DefaultRecent is how long the placer remembers its own admissions: longer
// than the pod cache takes to see a pod created.
const DefaultRecent = 30 * time.Second

// Defaults of spread.Availability: how long a pod spread sent to an AZ may
// wait unscheduled (a Fargate pod starts in about a minute) before the AZ
// counts as unavailable, and how long it is then left out before it is
// tried again.
const (
	DefaultUnavailableAfter = 3 * time.Minute
	DefaultZoneRetry        = 5 * time.Minute
)

// byController indexes pods by the UID of their controller.
const byController = "controller"

// Placer decides the AZ of each pod the webhook is asked about. It counts
// a workload's pods per AZ from a cache of pods, plus the pods it admitted
// that the cache has not seen yet: a ReplicaSet creates replicas faster
// than any cache is updated.
type Placer struct {
	pods  cache.Indexer
	nodes cache.Indexer
	zones atomic.Pointer[spread.Zones]
	// Recent is how long an admission is remembered; DefaultRecent if 0.
	Recent time.Duration
	// Synced, if set, says whether the pod cache has synced; until it has,
	// pods are left as they are (counting an empty cache would skew them).
	Synced  func() bool
	now     func() time.Time
	metrics *Metrics

	mu        sync.Mutex
	recent    map[types.UID][]admitted
	lastSweep time.Time
	avail     spread.Availability
}

// admitted is one pod the placer sent to an AZ.
type admitted struct {
	token, zone string
	at          time.Time
}

// NewPlacer returns a placer over caches of pods and nodes (see Indexers).
func NewPlacer(pods, nodes cache.Indexer, m *Metrics) *Placer {
	p := &Placer{pods: pods, nodes: nodes, now: time.Now, metrics: m, recent: map[types.UID][]admitted{},
		avail: spread.Availability{After: DefaultUnavailableAfter, Retry: DefaultZoneRetry}}
	p.SetZones(spread.Zones{})
	return p
}

// SetAvailability sets how AZs are found unavailable and tried again, and
// the AZs left out by hand (excludeZones); a zero duration keeps its
// default. Call it before the webhook serves.
func (p *Placer) SetAvailability(after, retry time.Duration, excluded []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.avail.After, p.avail.Retry = cmp.Or(after, DefaultUnavailableAfter), cmp.Or(retry, DefaultZoneRetry)
	p.avail.Excluded = map[string]bool{}
	for _, z := range excluded {
		p.avail.Excluded[z] = true
	}
}

// Observe updates what the placer knows of the AZs' availability from the
// live pods it sent to an AZ (spread.Availability), and returns what
// changed and the pods to replace, which wait in an unavailable AZ.
func (p *Placer) Observe() ([]spread.Change, []spread.Placed) {
	var placed []spread.Placed
	for _, obj := range p.pods.List() {
		pod, ok := obj.(*corev1.Pod)
		if !ok || !live.Alive(pod) || pod.Annotations[spread.ZoneAnnotation] == "" {
			continue
		}
		pl := spread.Placed{Namespace: pod.Namespace, Name: pod.Name, Zone: pod.Annotations[spread.ZoneAnnotation],
			Created: pod.CreationTimestamp.Time, Scheduled: pod.Spec.NodeName != ""}
		if c := metav1.GetControllerOfNoCopy(pod); c != nil {
			pl.Owner = string(c.UID)
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
				pl.ScheduledAt = c.LastTransitionTime.Time
			}
		}
		placed = append(placed, pl)
	}
	p.mu.Lock()
	changes, stuck := p.avail.Observe(placed, p.now())
	for _, z := range p.Zones().AZs() {
		p.metrics.available.WithLabelValues(z).Set(map[bool]float64{true: 1}[p.avail.Available(z)])
	}
	p.mu.Unlock()
	for _, c := range changes {
		slog.Warn("spread: AZ availability changed", "zone", c.Zone, "available", c.Available, "pod", c.Pod.Namespace+"/"+c.Pod.Name)
	}
	return changes, stuck
}

// availability returns how long a pod waits before its AZ is found
// unavailable, and how long the AZ is then left out.
func (p *Placer) availability() (after, retry time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.avail.After, p.avail.Retry
}

// Balanced says whether the rebalancer balances over the AZ now
// (spread.Availability.Balanced).
func (p *Placer) Balanced(zone string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.avail.Balanced(zone, p.now())
}

// usable keeps the options a pod may be sent to now
// (spread.Availability.Usable), counting the recent admissions to each AZ
// that the cache has not seen. The caller holds p.mu.
func (p *Placer) usable(opts []spread.Option) []spread.Option {
	now := p.now()
	return spread.Usable(opts, func(zone string) bool {
		recent := 0
		for _, as := range p.recent {
			for _, a := range as {
				if a.zone == zone && now.Sub(a.at) <= p.recentFor() {
					recent++
				}
			}
		}
		return p.avail.Usable(zone, now, recent)
	})
}

// Indexers are what the pod cache needs.
var Indexers = cache.Indexers{byController: func(obj any) ([]string, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return nil, nil
	}
	if c := metav1.GetControllerOfNoCopy(pod); c != nil {
		return []string{string(c.UID)}, nil
	}
	return nil, nil
}}

// SetZones replaces the per-AZ profiles.
func (p *Placer) SetZones(z spread.Zones) { p.zones.Store(&z) }

// Zones returns the per-AZ profiles in use.
func (p *Placer) Zones() spread.Zones { return *p.zones.Load() }

// Mutate is the webhook's decision for a pod being created: the patch that
// labels it with the per-AZ profile of its workload's least-loaded AZ (or,
// ByNodeSelector, gives it a node selector on that AZ), or nil to leave it
// as it is (a pod that chose its profile, or its zone, itself, or that no
// two AZs are on offer for).
func (p *Placer) Mutate(req *admissionv1.AdmissionRequest, pod *corev1.Pod) ([]admission.PatchOp, error) {
	start := time.Now()
	defer func() { p.metrics.latency.Observe(time.Since(start).Seconds()) }()
	zones := p.Zones()
	if spread.Pinned(zones.Method(), pod.Labels, pod.Spec.NodeSelector) || (p.Synced != nil && !p.Synced()) {
		p.metrics.admissions.WithLabelValues("untouched").Inc()
		return nil, nil
	}
	opts := zones.For(pod.Namespace, pod.Labels)
	if opts == nil {
		p.metrics.admissions.WithLabelValues("untouched").Inc()
		return nil, nil
	}
	owner := metav1.GetControllerOfNoCopy(pod)
	key := pod.Namespace + "/" + pod.GenerateName + pod.Name
	var choice spread.Option
	p.mu.Lock()
	opts = p.usable(opts)
	if owner == nil {
		choice = spread.Pick(opts, nil, key) // a bare pod: nothing to balance with
	} else {
		key = string(owner.UID)
		load, err := p.load(owner.UID)
		if err != nil {
			p.mu.Unlock()
			p.metrics.admissions.WithLabelValues("error").Inc()
			return nil, err
		}
		choice = spread.Pick(opts, load, key)
	}
	p.recent[types.UID(key)] = append(p.recent[types.UID(key)], admitted{token: string(req.UID), zone: choice.Zone, at: p.now()})
	p.sweep()
	p.mu.Unlock()
	p.metrics.admissions.WithLabelValues("placed").Inc()
	p.metrics.placements.WithLabelValues(choice.Zone).Inc()
	slog.Debug("spread placed a pod", "namespace", pod.Namespace, "pod", key, "zone", choice.Zone, "profile", choice.Profile)
	ops := admission.MapEntry("/metadata/labels", pod.Labels, fargate.ProfileLabel, choice.Profile)
	if zones.Method() == spread.ByNodeSelector {
		ops = admission.MapEntry("/spec/nodeSelector", pod.Spec.NodeSelector, corev1.LabelTopologyZone, choice.Zone)
	}
	return append(ops, admission.MapEntries("/metadata/annotations", pod.Annotations,
		spread.ZoneAnnotation, choice.Zone, spread.AdmissionAnnotation, string(req.UID))...), nil
}

// sweep forgets, every Recent, the expired admissions of every controller:
// a rollout's old ReplicaSets are never admitted again. The caller holds p.mu.
func (p *Placer) sweep() {
	now := p.now()
	if now.Sub(p.lastSweep) < p.recentFor() {
		return
	}
	p.lastSweep = now
	for uid, as := range p.recent {
		if len(as) > 0 && now.Sub(as[len(as)-1].at) > p.recentFor() {
			delete(p.recent, uid)
		}
	}
}

// Seen is the pod cache's event handler for added and updated pods: once
// the cache has a pod the placer admitted, its admission stops counting
// (the pod counts instead), so that when the pod is deleted (a scale-down,
// an eviction) it is not counted again.
func (p *Placer) Seen(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	token, owner := pod.Annotations[spread.AdmissionAnnotation], metav1.GetControllerOfNoCopy(pod)
	if token == "" || owner == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	as := p.recent[owner.UID]
	if i := slices.IndexFunc(as, func(a admitted) bool { return a.token == token }); i >= 0 {
		p.recent[owner.UID] = slices.Delete(as, i, i+1)
	}
}

// load counts, by AZ, the live pods of the controller with this UID, and
// its recent admissions the cache has not seen yet (those it has, Seen may
// not have been told of yet). The caller holds p.mu.
func (p *Placer) load(uid types.UID) (map[string]int, error) {
	load := map[string]int{}
	seen := map[string]bool{}
	objs, err := p.pods.ByIndex(byController, string(uid))
	if err != nil {
		return nil, fmt.Errorf("counting the pods of controller %s: %w", uid, err)
	}
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		seen[pod.Annotations[spread.AdmissionAnnotation]] = true
		if !live.Alive(pod) {
			continue
		}
		if z := p.ZoneOf(pod); z != "" {
			load[z]++
		}
	}
	now, keep := p.now(), p.recent[uid][:0]
	for _, a := range p.recent[uid] {
		if seen[a.token] || now.Sub(a.at) > p.recentFor() {
			continue
		}
		keep = append(keep, a)
		load[a.zone]++
	}
	if len(keep) == 0 {
		delete(p.recent, uid)
	} else {
		p.recent[uid] = keep
	}
	return load, nil
}

func (p *Placer) recentFor() time.Duration {
	if p.Recent > 0 {
		return p.Recent
	}
	return DefaultRecent
}

// ZoneOf returns a pod's AZ: its node's once it is scheduled (where it
// runs, whatever was asked), else the one spread chose, else its per-AZ
// profile's; "" when none is known yet.
func (p *Placer) ZoneOf(pod *corev1.Pod) string {
	if z := p.nodeZone(pod); z != "" {
		return z
	}
	if z := pod.Annotations[spread.ZoneAnnotation]; z != "" {
		return z
	}
	z, _ := p.Zones().Zone(pod.Labels[fargate.ProfileLabel])
	return z
}

// nodeZone is the zone of the node a pod runs on, "" when not known.
func (p *Placer) nodeZone(pod *corev1.Pod) string {
	if pod.Spec.NodeName == "" || p.nodes == nil {
		return ""
	}
	obj, ok, _ := p.nodes.GetByKey(pod.Spec.NodeName)
	if !ok {
		return ""
	}
	return obj.(*corev1.Node).Labels[corev1.LabelTopologyZone]
}

// StripNode keeps of a node what the placer reads, its zone: on Fargate
// there is a node per pod, and a whole node (its images, conditions,
// managed fields) weighs several kilobytes.
func StripNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	return &corev1.Node{ObjectMeta: identityAndLabel(node.ObjectMeta, corev1.LabelTopologyZone)}, nil
}

// StripNamespace keeps of a namespace what the rebalancer reads, its
// opt-in label.
func StripNamespace(obj any) (any, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return obj, nil
	}
	return &corev1.Namespace{ObjectMeta: identityAndLabel(ns.ObjectMeta, spread.EnabledLabel)}, nil
}

// identityAndLabel keeps of a cluster-scoped object's metadata its name, UID,
// resource version and the label key.
func identityAndLabel(m metav1.ObjectMeta, key string) metav1.ObjectMeta {
	out := metav1.ObjectMeta{Name: m.Name, UID: m.UID, ResourceVersion: m.ResourceVersion}
	if v, ok := m.Labels[key]; ok {
		out.Labels = map[string]string{key: v}
	}
	return out
}

// StripPod keeps of a pod what the placer and the rebalancer read, so
// that a cache of every pod of a large cluster stays small.
func StripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	out := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
			Labels: pod.Labels, OwnerReferences: pod.OwnerReferences, CreationTimestamp: pod.CreationTimestamp,
			DeletionTimestamp: pod.DeletionTimestamp,
		},
		Spec:   corev1.PodSpec{NodeName: pod.Spec.NodeName},
		Status: corev1.PodStatus{Phase: pod.Status.Phase, Conditions: pod.Status.Conditions},
	}
	for _, k := range []string{spread.ZoneAnnotation, spread.AdmissionAnnotation} {
		if v, ok := pod.Annotations[k]; ok {
			if out.Annotations == nil {
				out.Annotations = map[string]string{}
			}
			out.Annotations[k] = v
		}
	}
	return out, nil
}
