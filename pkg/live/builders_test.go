package live_test

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// now is when every test snapshot is taken.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Node names used across the tests.
const (
	fgA  = "fargate-ip-10-0-1-10.ec2.internal" // Fargate, us-east-1a
	fgA2 = "fargate-ip-10-0-1-11.ec2.internal" // Fargate, us-east-1a
	fgB  = "fargate-ip-10-0-2-10.ec2.internal" // Fargate, us-east-1b
	fgC  = "fargate-ip-10-0-3-10.ec2.internal" // Fargate, us-east-1c
	ec2A = "ip-10-0-1-200.ec2.internal"        // EC2, us-east-1a
)

// node builds a node in a zone. Fargate nodes carry the compute-type label.
func node(name, zone string, isFargate bool, kubelet string, labels ...string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
	if isFargate {
		n.Labels[fargate.ComputeTypeLabel] = "fargate"
	}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels[labels[i]] = labels[i+1]
	}
	n.Status.NodeInfo.KubeletVersion = kubelet
	return n
}

// fgNodes are four Fargate nodes in three AZs at kubelet 1.34.
func fgNodes() []corev1.Node {
	return []corev1.Node{
		node(fgA, "us-east-1a", true, "v1.34.0-eks-fargate"),
		node(fgA2, "us-east-1a", true, "v1.34.0-eks-fargate"),
		node(fgB, "us-east-1b", true, "v1.34.0-eks-fargate"),
		node(fgC, "us-east-1c", true, "v1.34.0-eks-fargate"),
	}
}

func ec2Node() corev1.Node { return node(ec2A, "us-east-1a", false, "v1.34.2-eks-1234567") }

type podOpt func(*corev1.Pod)

// pod builds a Running pod with label app=<name up to the last dash>, a UID
// and the default scheduler, unbound until an option binds it.
func pod(ns, name string, opts ...podOpt) corev1.Pod {
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name), Labels: map[string]string{}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, o := range opts {
		o(&p)
	}
	return p
}

// onFargate binds the pod to a Fargate node as EKS does: fargate-scheduler
// and the profile label.
func onFargate(nodeName, profile string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = nodeName
		p.Spec.SchedulerName = fargate.SchedulerName
		p.Labels[fargate.ProfileLabel] = profile
	}
}

// onNode binds the pod to a node with the default scheduler.
func onNode(nodeName string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = nodeName
		p.Spec.SchedulerName = corev1.DefaultSchedulerName
	}
}

// pendingWith leaves the pod Pending, unbound, with a scheduler.
func pendingWith(scheduler string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.NodeName = ""
		p.Spec.SchedulerName = scheduler
		p.Status.Phase = corev1.PodPending
	}
}

func withLabels(kv ...string) podOpt {
	return func(p *corev1.Pod) {
		for i := 0; i+1 < len(kv); i += 2 {
			p.Labels[kv[i]] = kv[i+1]
		}
	}
}

func annotated(k, v string) podOpt {
	return func(p *corev1.Pod) {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[k] = v
	}
}

func phase(ph corev1.PodPhase) podOpt { return func(p *corev1.Pod) { p.Status.Phase = ph } }

// deleted marks the pod deleted: its deletion timestamp (the end of its grace
// period) at ts, with a grace period in seconds and finalizers.
func deleted(ts time.Time, grace int64, finalizers ...string) podOpt {
	return func(p *corev1.Pod) {
		t := metav1.NewTime(ts)
		p.DeletionTimestamp = &t
		p.DeletionGracePeriodSeconds = &grace
		p.Finalizers = finalizers
	}
}

func requests(cpu, mem string) podOpt {
	return func(p *corev1.Pod) {
		p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		}
	}
}

// ownedBy makes o the pod's controller.
func ownedBy(o *object.Object) podOpt {
	return func(p *corev1.Pod) { p.OwnerReferences = []metav1.OwnerReference{controllerRef(o)} }
}

func controllerRef(o *object.Object) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: o.Ref.APIVersion, Kind: o.Ref.Kind, Name: o.Ref.Name,
		UID: o.Typed.(metav1.Object).GetUID(), Controller: &yes}
}

func meta(ns, name string, owner *object.Object) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + ns + "-" + name)}
	if owner != nil {
		m.OwnerReferences = []metav1.OwnerReference{controllerRef(owner)}
	}
	return m
}

// template is a pod template with labels and, optionally, annotations (k, v pairs).
func template(labels map[string]string, annotations ...string) corev1.PodTemplateSpec {
	t := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	for i := 0; i+1 < len(annotations); i += 2 {
		if t.Annotations == nil {
			t.Annotations = map[string]string{}
		}
		t.Annotations[annotations[i]] = annotations[i+1]
	}
	return t
}

func deployment(ns, name string, tmpl corev1.PodTemplateSpec) *object.Object {
	return object.FromTyped(&appsv1.Deployment{ObjectMeta: meta(ns, name, nil), Spec: appsv1.DeploymentSpec{Template: tmpl}},
		"apps/v1", "Deployment", object.Source{})
}

func replicaSet(ns, name string, owner *object.Object) *object.Object {
	return object.FromTyped(&appsv1.ReplicaSet{ObjectMeta: meta(ns, name, owner)}, "apps/v1", "ReplicaSet", object.Source{})
}

func daemonSet(ns, name string) *object.Object {
	return object.FromTyped(&appsv1.DaemonSet{ObjectMeta: meta(ns, name, nil)}, "apps/v1", "DaemonSet", object.Source{})
}

func statefulSet(ns, name string) *object.Object {
	return object.FromTyped(&appsv1.StatefulSet{ObjectMeta: meta(ns, name, nil)}, "apps/v1", "StatefulSet", object.Source{})
}

func cronJob(ns, name string) *object.Object {
	return object.FromTyped(&batchv1.CronJob{ObjectMeta: meta(ns, name, nil)}, "batch/v1", "CronJob", object.Source{})
}

func job(ns, name string, owner *object.Object) *object.Object {
	return object.FromTyped(&batchv1.Job{ObjectMeta: meta(ns, name, owner)}, "batch/v1", "Job", object.Source{})
}

// web is the Deployment shop/web with its ReplicaSet; its pods are owned by the ReplicaSet.
func web() (dep, rs *object.Object) {
	dep = deployment("shop", "web", template(map[string]string{"app": "web"}))
	return dep, replicaSet("shop", "web-7d4b9", dep)
}

// webPod is a pod of web's ReplicaSet labelled app=web.
func webPod(rs *object.Object, name string, opts ...podOpt) corev1.Pod {
	return pod("shop", name, append([]podOpt{ownedBy(rs), withLabels("app", "web")}, opts...)...)
}

func profile(name, status string, namespaces ...string) fargate.Profile {
	p := fargate.Profile{Name: name, Status: status}
	for _, ns := range namespaces {
		p.Selectors = append(p.Selectors, fargate.Selector{Namespace: ns})
	}
	return p
}

func active(name string, namespaces ...string) fargate.Profile {
	return profile(name, fargate.StatusActive, namespaces...)
}

// warning is a Warning event about a pod from a component at a time.
func warning(p corev1.Pod, component, message string, at time.Time) corev1.Event {
	return corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: p.Namespace, Name: p.Name + "." + at.Format("150405")},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Type:           corev1.EventTypeWarning, Reason: "FailedScheduling", Message: message,
		Source: corev1.EventSource{Component: component}, LastTimestamp: metav1.NewTime(at),
	}
}

// snap is a snapshot of cluster prod (1.34) taken at now.
func snap(profiles []fargate.Profile, nodes []corev1.Node, pods []corev1.Pod, owners ...*object.Object) *live.Snapshot {
	return &live.Snapshot{
		Cluster:  live.Cluster{Name: "prod", Version: "1.34", Region: "us-east-1", VPCID: "vpc-0abc"},
		Profiles: profiles, Nodes: nodes, Pods: pods, Owners: owners, Now: now,
	}
}

func ref(kind, ns, name string) object.Ref {
	api := map[string]string{"Deployment": "apps/v1", "DaemonSet": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1",
		"CronJob": "batch/v1", "Job": "batch/v1", "Pod": "v1", "Node": "v1"}[kind]
	return object.Ref{APIVersion: api, Kind: kind, Namespace: ns, Name: name}
}

func restartDeployment(ns, name string) string {
	return "kubectl rollout restart -n " + ns + " deployment/" + name + " && kubectl rollout status -n " + ns + " deployment/" + name
}
