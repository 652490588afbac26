// Package live finds, in what was read of a running cluster, the incidents
// that check and plan predict: pods left off Fargate by a profile change,
// pods refused or unplaced, replicas piled into one AZ, kubelets behind the
// control plane, pods stuck Terminating, fargate-null nodes. It does no I/O:
// internal/cluster reads the Snapshot, and the findings are rules like
// check's, produced here rather than by the engine.
//
// Stability: part of fargatekit's engine, importable by other programs. Until
// fargatekit 1.0 its API may change in a minor release.
package live

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Snapshot is what was read of a running cluster.
type Snapshot struct {
	Cluster Cluster
	// Profiles are the cluster's Fargate profiles with their status; nil when
	// the EKS API could not be read.
	Profiles []fargate.Profile
	Nodes    []corev1.Node
	Pods     []corev1.Pod
	// Events are the pods' Warning events.
	Events []corev1.Event
	// Owners are the objects that own pods, as the API server returned them:
	// Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
	// Argo Rollouts.
	Owners []*object.Object
	// Now is when the snapshot was taken.
	Now time.Time
	// Autoscalers are the HorizontalPodAutoscalers: the most replicas of the
	// workloads they scale (LV011).
	Autoscalers []autoscalingv2.HorizontalPodAutoscaler
	// Foundation is what EC2 and IAM say about the cluster's VPC and pod
	// execution roles, for the foundation rules; nil when not read.
	Foundation *foundation.Foundation
	// Unread names what could not be read ("pods", "deployments", ...).
	// Analyze reports nothing from a snapshot with holes: a node list that
	// failed would make every Pending pod look unplaced.
	Unread []string
}

// Cluster is the EKS cluster a snapshot is of.
type Cluster struct {
	Name string
	// Version is the control plane's minor version, "1.35".
	Version string
	Region  string
	// VPCID is the cluster's VPC; empty when the EKS API could not be read.
	VPCID string
}

// Workload is the top of a set of pods' owner chain: a Deployment (not its
// ReplicaSets), a CronJob (not its Jobs), a StatefulSet, ..., or a pod that
// nothing read owns. Owners without pods are workloads too.
type Workload struct {
	Object *object.Object
	Pods   []*corev1.Pod
}

// Namespace is the workload's namespace.
func (w *Workload) Namespace() string { return w.Object.Ref.Namespace }

// podLabels are the labels of the workload's pod template.
func (w *Workload) podLabels() map[string]string {
	if w.Object.Pod == nil {
		return nil
	}
	return w.Object.Pod.Template.Labels
}

// Workloads groups the snapshot's pods under their workloads, in the order
// of namespace, kind and name.
func (s *Snapshot) Workloads() []*Workload {
	byUID := map[types.UID]*object.Object{}
	for _, o := range s.Owners {
		if m, ok := o.Typed.(metav1.Object); ok {
			byUID[m.GetUID()] = o
		}
	}
	// top follows controller references up to the first object nothing
	// read owns. Owner chains are short (Pod → ReplicaSet → Deployment);
	// the bound guards against a cycle in bad data.
	top := func(o *object.Object) *object.Object {
		for range 8 {
			m, ok := o.Typed.(metav1.Object)
			if !ok {
				return o
			}
			ref := controllerOf(m.GetOwnerReferences())
			if ref == nil || byUID[ref.UID] == nil {
				return o
			}
			o = byUID[ref.UID]
		}
		return o
	}
	index := map[*object.Object]*Workload{}
	var out []*Workload
	add := func(o *object.Object) *Workload {
		if w := index[o]; w != nil {
			return w
		}
		w := &Workload{Object: o}
		index[o] = w
		out = append(out, w)
		return w
	}
	for _, o := range s.Owners {
		if t := top(o); t == o {
			add(o)
		}
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		if ref := controllerOf(p.OwnerReferences); ref != nil && byUID[ref.UID] != nil {
			w := add(top(byUID[ref.UID]))
			w.Pods = append(w.Pods, p)
			continue
		}
		w := add(object.FromTyped(asCreated(p), "v1", "Pod", object.Source{}))
		w.Pods = append(w.Pods, p)
	}
	slices.SortFunc(out, func(a, b *Workload) int {
		return cmp.Or(cmp.Compare(a.Object.Ref.Namespace, b.Object.Ref.Namespace),
			cmp.Compare(a.Object.Ref.Kind, b.Object.Ref.Kind), cmp.Compare(a.Object.Ref.Name, b.Object.Ref.Name))
	})
	return out
}

func controllerOf(refs []metav1.OwnerReference) *metav1.OwnerReference {
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return &refs[i]
		}
	}
	return nil
}

// ActiveProfiles returns the ACTIVE profiles: those that place new pods.
// nil when the profiles are not known.
func (s *Snapshot) ActiveProfiles() []fargate.Profile {
	if s.Profiles == nil {
		return nil
	}
	out := []fargate.Profile{}
	for _, p := range s.Profiles {
		if p.Active() {
			out = append(out, p)
		}
	}
	return out
}

// view is a snapshot indexed for the checks.
type view struct {
	*Snapshot
	nodes map[string]*corev1.Node
	// events holds the newest fargate-scheduler Warning per pod.
	events    map[types.UID]*corev1.Event
	workloads []*Workload
	active    []fargate.Profile
	ec2Nodes  int
	// status and placing hold each profile's status and whether it places
	// pods; zones the AZs of the Fargate nodes of each profile's pods.
	status  map[string]string
	placing map[string]bool
	zones   map[string]map[string]bool
}

func newView(s *Snapshot) *view {
	v := &view{Snapshot: s, nodes: map[string]*corev1.Node{}, events: map[types.UID]*corev1.Event{}, workloads: s.Workloads(), active: s.ActiveProfiles()}
	for i := range s.Nodes {
		n := &s.Nodes[i]
		v.nodes[n.Name] = n
		if !IsFargateNode(n) {
			v.ec2Nodes++
		}
	}
	v.status, v.placing, v.zones = map[string]string{}, map[string]bool{}, map[string]map[string]bool{}
	for _, p := range s.Profiles {
		v.status[p.Name], v.placing[p.Name] = p.Status, p.Active()
	}
	for i := range s.Pods {
		p := &s.Pods[i]
		name, az := p.Labels[fargate.ProfileLabel], v.zone(p)
		if name == "" || az == "" || !v.onFargate(p) {
			continue
		}
		if v.zones[name] == nil {
			v.zones[name] = map[string]bool{}
		}
		v.zones[name][az] = true
	}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Type != corev1.EventTypeWarning || e.Source.Component != fargate.SchedulerName && e.ReportingController != fargate.SchedulerName {
			continue
		}
		if old := v.events[e.InvolvedObject.UID]; old == nil || eventTime(e).After(eventTime(old)) {
			v.events[e.InvolvedObject.UID] = e
		}
	}
	return v
}

func eventTime(e *corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.FirstTimestamp.Time
}

// IsFargateNode reports whether a node is a Fargate node.
func IsFargateNode(n *corev1.Node) bool {
	return n.Labels[fargate.ComputeTypeLabel] == "fargate"
}

// onFargate reports whether the pod runs on a Fargate node.
func (v *view) onFargate(p *corev1.Pod) bool {
	if p.Spec.NodeName == "" {
		return false
	}
	if n := v.nodes[p.Spec.NodeName]; n != nil {
		return IsFargateNode(n)
	}
	return strings.HasPrefix(p.Spec.NodeName, "fargate-") // its node is gone: Fargate nodes are named fargate-*
}

// zone returns the AZ of the pod's node, "" when unknown.
func (v *view) zone(p *corev1.Pod) string {
	if n := v.nodes[p.Spec.NodeName]; n != nil {
		return n.Labels[corev1.LabelTopologyZone]
	}
	return ""
}

// Alive reports whether a pod is meant to be running: not finished and not
// being deleted. spread counts the same pods in a workload's balance.
func Alive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// pending reports whether a live pod is bound to no node.
func pending(p *corev1.Pod) bool { return Alive(p) && p.Spec.NodeName == "" }

// asCreated returns a copy of a pod as it was created, before EKS's Fargate
// webhook gave it fargate-scheduler and the label of its profile: what a
// pod recreated from the same manifest looks like to the webhook.
func asCreated(p *corev1.Pod) *corev1.Pod {
	c := *p
	if c.Spec.SchedulerName == fargate.SchedulerName {
		c.Spec.SchedulerName = ""
	}
	if _, ok := c.Labels[fargate.ProfileLabel]; ok {
		c.Labels = maps.Clone(c.Labels)
		delete(c.Labels, fargate.ProfileLabel)
	}
	return &c
}

// template is the pod as a template, for fargate.Place.
func template(p *corev1.Pod) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{ObjectMeta: p.ObjectMeta, Spec: p.Spec}
}

// kubeletMinor returns the minor version of a node's kubelet ("1.34"), ""
// when it cannot be read.
func kubeletMinor(n *corev1.Node) string {
	m, err := eks.ParseMinor(n.Status.NodeInfo.KubeletVersion)
	if err != nil {
		return ""
	}
	return m
}
