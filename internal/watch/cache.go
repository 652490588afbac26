package watch

import (
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// kind is one kind of object the caches hold: an informer, and what its
// objects are to the analysis.
type kind struct {
	what     string
	informer cache.SharedIndexInformer
	// apiVersion and kind name the objects for check's rules; owner says
	// they own pods (the snapshot's Owners), else they are the Read's
	// Objects. Both "" for the kinds the snapshot holds typed.
	apiVersion, kind string
	owner            bool
}

// caches are informers on what scan lists, kept up to date by watches
// instead of listed at each analysis. Each object loses what no rule reads
// as it arrives: its managedFields (cluster.Strip), and most of a node's
// or a pod's status (live.Trim).
type caches struct {
	factories                        []informers.SharedInformerFactory
	kinds                            []*kind
	nodes, pods, events, autoscalers cache.SharedIndexInformer
}

// newCaches sets up the informers; changed is called on every change of
// any object, from the informers' goroutines.
func newCaches(client kubernetes.Interface, changed func()) (*caches, error) {
	strip := informers.WithTransform(transform)
	all := informers.NewSharedInformerFactoryWithOptions(client, 0, strip)
	// The pods' Warning events, as scan lists them.
	warnings := informers.NewSharedInformerFactoryWithOptions(client, 0, strip, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "type=Warning,involvedObject.kind=Pod"
	}))
	// The logging ConfigMap's namespace only.
	observability := informers.NewSharedInformerFactoryWithOptions(client, 0, strip, informers.WithNamespace("aws-observability"))
	c := &caches{
		factories:   []informers.SharedInformerFactory{all, warnings, observability},
		nodes:       all.Core().V1().Nodes().Informer(),
		pods:        all.Core().V1().Pods().Informer(),
		events:      warnings.Core().V1().Events().Informer(),
		autoscalers: all.Autoscaling().V2().HorizontalPodAutoscalers().Informer(),
	}
	c.kinds = []*kind{
		{what: "nodes", informer: c.nodes},
		{what: "pods", informer: c.pods},
		{what: "events", informer: c.events},
		{what: "horizontalpodautoscalers", informer: c.autoscalers},
		{what: "deployments", informer: all.Apps().V1().Deployments().Informer(), apiVersion: "apps/v1", kind: "Deployment", owner: true},
		{what: "replicasets", informer: all.Apps().V1().ReplicaSets().Informer(), apiVersion: "apps/v1", kind: "ReplicaSet", owner: true},
		{what: "statefulsets", informer: all.Apps().V1().StatefulSets().Informer(), apiVersion: "apps/v1", kind: "StatefulSet", owner: true},
		{what: "daemonsets", informer: all.Apps().V1().DaemonSets().Informer(), apiVersion: "apps/v1", kind: "DaemonSet", owner: true},
		{what: "jobs", informer: all.Batch().V1().Jobs().Informer(), apiVersion: "batch/v1", kind: "Job", owner: true},
		{what: "cronjobs", informer: all.Batch().V1().CronJobs().Informer(), apiVersion: "batch/v1", kind: "CronJob", owner: true},
		{what: "services", informer: all.Core().V1().Services().Informer(), apiVersion: "v1", kind: "Service"},
		{what: "persistentvolumeclaims", informer: all.Core().V1().PersistentVolumeClaims().Informer(), apiVersion: "v1", kind: "PersistentVolumeClaim"},
		{what: "namespaces", informer: all.Core().V1().Namespaces().Informer(), apiVersion: "v1", kind: "Namespace"},
		{what: "ingresses", informer: all.Networking().V1().Ingresses().Informer(), apiVersion: "networking.k8s.io/v1", kind: "Ingress"},
		{what: "ingressclasses", informer: all.Networking().V1().IngressClasses().Informer(), apiVersion: "networking.k8s.io/v1", kind: "IngressClass"},
		{what: "networkpolicies", informer: all.Networking().V1().NetworkPolicies().Informer(), apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy"},
		{what: "poddisruptionbudgets", informer: all.Policy().V1().PodDisruptionBudgets().Informer(), apiVersion: "policy/v1", kind: "PodDisruptionBudget"},
		{what: "configmaps in aws-observability", informer: observability.Core().V1().ConfigMaps().Informer(), apiVersion: "v1", kind: "ConfigMap"},
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	}
	for _, k := range c.kinds {
		if _, err := k.informer.AddEventHandler(handler); err != nil {
			return nil, fmt.Errorf("watching %s: %w", k.what, err)
		}
	}
	return c, nil
}

// transform is what the caches keep of an object.
func transform(o any) (any, error) {
	o, err := cluster.Strip(o)
	return live.Trim(o), err
}

// start starts the informers until stop is closed.
func (c *caches) start(stop <-chan struct{}) {
	for _, f := range c.factories {
		f.Start(stop)
	}
}

// synced reports whether every informer has listed once.
func (c *caches) synced() bool {
	for _, k := range c.kinds {
		if !k.informer.HasSynced() {
			return false
		}
	}
	return true
}

// read assembles, from the caches, what scan's read of the Kubernetes API
// holds. Objects are copied: the analysis sets their type, and the caches
// are shared with the informers.
func (c *caches) read(now time.Time) *cluster.Read {
	var snap live.Snapshot
	nodes, pods := c.nodes.GetStore().List(), c.pods.GetStore().List()
	snap.Nodes, snap.Pods = make([]corev1.Node, 0, len(nodes)), make([]corev1.Pod, 0, len(pods))
	for _, o := range nodes {
		snap.Nodes = append(snap.Nodes, *o.(*corev1.Node))
	}
	for _, o := range pods {
		snap.Pods = append(snap.Pods, *o.(*corev1.Pod))
	}
	for _, o := range c.events.GetStore().List() {
		snap.Events = append(snap.Events, *o.(*corev1.Event))
	}
	for _, o := range c.autoscalers.GetStore().List() {
		snap.Autoscalers = append(snap.Autoscalers, *o.(*autoscalingv2.HorizontalPodAutoscaler))
	}
	var objects []*object.Object
	for _, k := range c.kinds {
		if k.kind == "" {
			continue
		}
		for _, o := range k.informer.GetStore().List() {
			obj := object.FromTyped(o.(runtime.Object).DeepCopyObject(), k.apiVersion, k.kind, object.Source{})
			if k.owner {
				snap.Owners = append(snap.Owners, obj)
			} else {
				objects = append(objects, obj)
			}
		}
	}
	snap.Now = now
	return cluster.NewRead(snap, objects)
}
