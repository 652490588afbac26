package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/pager"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// LastAppliedAnnotation holds the object as `kubectl apply` last applied it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Declared is an object as its author wrote it: a live object's
// last-applied-configuration, or an object of a deployed Helm release.
type Declared struct {
	Object *object.Object
	// Live is the live object it declares; zero for a Helm release's objects.
	Live object.Ref
}

// Read is what was read of the cluster's Kubernetes API.
type Read struct {
	Snapshot live.Snapshot
	// Objects are the other objects check's rules read: Services, Ingresses,
	// IngressClasses, NetworkPolicies, PodDisruptionBudgets,
	// PersistentVolumeClaims, Namespaces and the aws-logging ConfigMap.
	Objects []*object.Object
	// Declared are the objects as written, for the removed-API rules.
	Declared []Declared
	// Errors are what could not be read, one line each.
	Errors []error
}

// ReadOptions say what to read.
type ReadOptions struct {
	// Helm reads the Secrets of Helm releases.
	Helm bool
}

// RolloutResource is Argo Rollouts' resource, read when its CRD is served.
var RolloutResource = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "rollouts"}

// ReadKube lists everything scan needs, every kind at once and each in pages
// (no request per object). A kind that cannot be listed becomes an error,
// none of its items is kept, and it is named in Snapshot.Unread; the rest is
// still read. The result does not depend on which list ends first.
func ReadKube(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, o ReadOptions) *Read {
	core, apps, batch, netv1, policy := client.CoreV1(), client.AppsV1(), client.BatchV1(), client.NetworkingV1(), client.PolicyV1()
	r := &Read{}
	snap := &r.Snapshot
	owner := func(apiVersion, kind string) func(runtime.Object) error {
		return func(o runtime.Object) error {
			obj := object.FromTyped(o, apiVersion, kind, object.Source{})
			snap.Owners = append(snap.Owners, obj)
			r.declare(obj)
			return nil
		}
	}
	other := func(apiVersion, kind string) func(runtime.Object) error {
		return func(o runtime.Object) error {
			obj := object.FromTyped(o, apiVersion, kind, object.Source{})
			r.Objects = append(r.Objects, obj)
			r.declare(obj)
			return nil
		}
	}
	listings := []*listing{
		{what: "nodes", list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Nodes().List(ctx, opts) },
			add: func(o runtime.Object) error { snap.Nodes = append(snap.Nodes, *o.(*corev1.Node)); return nil }},
		{what: "pods", list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Pods("").List(ctx, opts) },
			add: func(o runtime.Object) error { snap.Pods = append(snap.Pods, *o.(*corev1.Pod)); return nil }},
		{what: "events", list: func(opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = "type=Warning,involvedObject.kind=Pod"
			return core.Events("").List(ctx, opts)
		}, add: func(o runtime.Object) error { snap.Events = append(snap.Events, *o.(*corev1.Event)); return nil }},
		{what: "deployments", add: owner("apps/v1", "Deployment"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return apps.Deployments("").List(ctx, opts) }},
		{what: "replicasets", add: owner("apps/v1", "ReplicaSet"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return apps.ReplicaSets("").List(ctx, opts) }},
		{what: "statefulsets", add: owner("apps/v1", "StatefulSet"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return apps.StatefulSets("").List(ctx, opts) }},
		{what: "daemonsets", add: owner("apps/v1", "DaemonSet"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return apps.DaemonSets("").List(ctx, opts) }},
		{what: "jobs", add: owner("batch/v1", "Job"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return batch.Jobs("").List(ctx, opts) }},
		{what: "cronjobs", add: owner("batch/v1", "CronJob"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return batch.CronJobs("").List(ctx, opts) }},
		{what: "services", add: other("v1", "Service"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Services("").List(ctx, opts) }},
		{what: "persistentvolumeclaims", add: other("v1", "PersistentVolumeClaim"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return core.PersistentVolumeClaims("").List(ctx, opts)
			}},
		{what: "namespaces", add: other("v1", "Namespace"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Namespaces().List(ctx, opts) }},
		{what: "ingresses", add: other("networking.k8s.io/v1", "Ingress"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return netv1.Ingresses("").List(ctx, opts) }},
		{what: "ingressclasses", add: other("networking.k8s.io/v1", "IngressClass"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) { return netv1.IngressClasses().List(ctx, opts) }},
		{what: "networkpolicies", add: other("networking.k8s.io/v1", "NetworkPolicy"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return netv1.NetworkPolicies("").List(ctx, opts)
			}},
		{what: "poddisruptionbudgets", add: other("policy/v1", "PodDisruptionBudget"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return policy.PodDisruptionBudgets("").List(ctx, opts)
			}},
		{what: "horizontalpodautoscalers", optional: true,
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return client.AutoscalingV2().HorizontalPodAutoscalers("").List(ctx, opts)
			},
			add: func(o runtime.Object) error {
				snap.Autoscalers = append(snap.Autoscalers, *o.(*autoscalingv2.HorizontalPodAutoscaler))
				return nil
			}},
		{what: "configmaps in aws-observability", add: other("v1", "ConfigMap"),
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return core.ConfigMaps("aws-observability").List(ctx, opts)
			}},
	}
	if o.Helm {
		listings = append(listings, &listing{what: "Helm release Secrets (" + HelmSelector + ")",
			pageSize: 50, // a release Secret may hold up to 1 MiB
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				opts.LabelSelector = HelmSelector
				return core.Secrets("").List(ctx, opts)
			},
			add: func(o runtime.Object) error {
				decl, err := releaseObjects(o.(*corev1.Secret))
				r.Declared = append(r.Declared, decl...)
				return err
			}})
	}
	if dyn != nil && served(client, RolloutResource) {
		listings = append(listings, &listing{what: "rollouts.argoproj.io",
			list: func(opts metav1.ListOptions) (runtime.Object, error) {
				return dyn.Resource(RolloutResource).List(ctx, opts)
			},
			add: func(o runtime.Object) error {
				obj, err := fromUnstructured(o.(*unstructured.Unstructured))
				if err == nil {
					snap.Owners = append(snap.Owners, obj)
				}
				return err
			}})
	}
	var wg sync.WaitGroup
	for _, l := range listings {
		wg.Go(func() { l.read(ctx) })
	}
	wg.Wait()
	for _, l := range listings { // in a fixed order, whatever ended first
		if l.err != nil {
			r.Errors = append(r.Errors, listError(l.what, l.err))
			if !l.optional {
				snap.Unread = append(snap.Unread, l.what)
			}
			continue
		}
		for _, o := range l.items {
			if err := l.add(o); err != nil {
				r.Errors = append(r.Errors, err) // one object: the others of the kind still count
			}
		}
	}
	snap.Now = time.Now()
	return r
}

// listing is one kind to list.
type listing struct {
	what string
	list listFunc
	// pageSize is the page size; 0 is the pager's (500).
	pageSize int64
	// optional: when the kind cannot be listed, the findings that use it do
	// without (an error says so), rather than every finding being left out.
	optional bool
	// add takes one listed item into the Read.
	add   func(runtime.Object) error
	items []runtime.Object
	err   error
}

func (l *listing) read(ctx context.Context) {
	p := pager.New(pager.SimplePageFunc(l.list))
	if l.pageSize > 0 {
		p.PageSize = l.pageSize
	}
	l.err = p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error {
		_, _ = Strip(o)
		l.items = append(l.items, o)
		return nil
	})
	if l.err != nil {
		l.items = nil
	}
}

// Strip removes from a listed object what no rule reads, in place: its
// managedFields, often its largest part, which kept would double what a
// large cluster's read holds. It is an informer's transform too.
func Strip(o any) (any, error) {
	if m, err := meta.Accessor(o); err == nil {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// NewRead is a Read of objects listed elsewhere (watch's caches): the
// snapshot, and the other objects check's rules read; it records their
// last-applied configurations.
func NewRead(snap live.Snapshot, objects []*object.Object) *Read {
	r := &Read{Snapshot: snap, Objects: objects}
	for _, o := range snap.Owners {
		r.declare(o)
	}
	for _, o := range objects {
		r.declare(o)
	}
	return r
}

// declare records an object's last-applied-configuration.
func (r *Read) declare(obj *object.Object) {
	if d, ok := lastApplied(obj); ok {
		r.Declared = append(r.Declared, d)
	}
}

// served reports whether the API server serves a resource (a CRD's).
func served(client kubernetes.Interface, gvr schema.GroupVersionResource) bool {
	list, err := client.Discovery().ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return true
		}
	}
	return false
}

func fromUnstructured(u *unstructured.Unstructured) (*object.Object, error) {
	data, err := u.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("reading %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	obj, err := object.Decode(u.GetAPIVersion(), u.GetKind(), data, object.Source{}, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return obj, nil
}

// lastApplied decodes an object's last-applied-configuration.
func lastApplied(obj *object.Object) (Declared, bool) {
	data := obj.Annotations[LastAppliedAnnotation]
	if data == "" || !json.Valid([]byte(data)) {
		return Declared{}, false
	}
	d, err := object.Decode("", "", []byte(data), object.Source{}, nil)
	if d == nil || err != nil && d.Ref.APIVersion == "" {
		return Declared{}, false
	}
	return Declared{Object: d, Live: obj.Ref}, true
}

// listError words a failed list in one line.
func listError(what string, err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("not allowed to list %s: %s", what, apierrors.ReasonForError(err))
	case apierrors.IsNotFound(err):
		return fmt.Errorf("listing %s: the API server does not serve them", what)
	}
	return fmt.Errorf("listing %s: %w", what, err)
}

type listFunc func(metav1.ListOptions) (runtime.Object, error)

// releaseObjects decodes a Helm release Secret into the objects of its
// manifest, each placed in "helm release NAMESPACE/NAME".
func releaseObjects(s *corev1.Secret) ([]Declared, error) {
	rel, err := DecodeRelease(s)
	if err != nil {
		return nil, err
	}
	file := fmt.Sprintf("helm release %s/%s", rel.Namespace, rel.Name)
	var out []Declared
	var errs []error
	manifest.Parse(file, []byte(rel.Manifest), func(o *object.Object) {
		if o.Ref.Namespace == "" {
			o.Ref.Namespace = rel.Namespace
		}
		out = append(out, Declared{Object: o})
	}, func(e manifest.Error) { errs = append(errs, e) })
	return out, errors.Join(errs...)
}
