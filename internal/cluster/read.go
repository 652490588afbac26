package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
// and the rest is still read.
func ReadKube(ctx context.Context, client kubernetes.Interface, dyn dynamic.Interface, o ReadOptions) *Read {
	r := &Read{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	fail := func(err error) {
		mu.Lock()
		r.Errors = append(r.Errors, err)
		mu.Unlock()
	}
	// Each list collects into its own slice; they are joined in a fixed order below.
	type listing struct {
		what  string
		list  listFunc
		each  func(runtime.Object)
		owner []*object.Object
		other []*object.Object
		decl  []Declared
	}
	core, apps, batch, netv1, policy := client.CoreV1(), client.AppsV1(), client.BatchV1(), client.NetworkingV1(), client.PolicyV1()
	var nodes []corev1.Node
	var pods []corev1.Pod
	var events []corev1.Event
	var releases []Declared
	listings := []*listing{
		{what: "nodes", list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Nodes().List(ctx, opts) },
			each: func(o runtime.Object) { nodes = append(nodes, *o.(*corev1.Node)) }},
		{what: "pods", list: func(opts metav1.ListOptions) (runtime.Object, error) { return core.Pods("").List(ctx, opts) },
			each: func(o runtime.Object) { pods = append(pods, *o.(*corev1.Pod)) }},
		{what: "events", list: func(opts metav1.ListOptions) (runtime.Object, error) {
			opts.FieldSelector = "type=Warning,involvedObject.kind=Pod"
			return core.Events("").List(ctx, opts)
		}, each: func(o runtime.Object) { events = append(events, *o.(*corev1.Event)) }},
	}
	typed := func(what, apiVersion, kind string, owner bool, list listFunc) {
		l := &listing{what: what, list: list}
		l.each = func(o runtime.Object) {
			obj := object.FromTyped(o, apiVersion, kind, object.Source{})
			if owner {
				l.owner = append(l.owner, obj)
			} else {
				l.other = append(l.other, obj)
			}
			if d, ok := lastApplied(obj); ok {
				l.decl = append(l.decl, d)
			}
		}
		listings = append(listings, l)
	}
	typed("deployments", "apps/v1", "Deployment", true, func(opts metav1.ListOptions) (runtime.Object, error) { return apps.Deployments("").List(ctx, opts) })
	typed("replicasets", "apps/v1", "ReplicaSet", true, func(opts metav1.ListOptions) (runtime.Object, error) { return apps.ReplicaSets("").List(ctx, opts) })
	typed("statefulsets", "apps/v1", "StatefulSet", true, func(opts metav1.ListOptions) (runtime.Object, error) { return apps.StatefulSets("").List(ctx, opts) })
	typed("daemonsets", "apps/v1", "DaemonSet", true, func(opts metav1.ListOptions) (runtime.Object, error) { return apps.DaemonSets("").List(ctx, opts) })
	typed("jobs", "batch/v1", "Job", true, func(opts metav1.ListOptions) (runtime.Object, error) { return batch.Jobs("").List(ctx, opts) })
	typed("cronjobs", "batch/v1", "CronJob", true, func(opts metav1.ListOptions) (runtime.Object, error) { return batch.CronJobs("").List(ctx, opts) })
	typed("services", "v1", "Service", false, func(opts metav1.ListOptions) (runtime.Object, error) { return core.Services("").List(ctx, opts) })
	typed("persistentvolumeclaims", "v1", "PersistentVolumeClaim", false, func(opts metav1.ListOptions) (runtime.Object, error) {
		return core.PersistentVolumeClaims("").List(ctx, opts)
	})
	typed("namespaces", "v1", "Namespace", false, func(opts metav1.ListOptions) (runtime.Object, error) { return core.Namespaces().List(ctx, opts) })
	typed("ingresses", "networking.k8s.io/v1", "Ingress", false, func(opts metav1.ListOptions) (runtime.Object, error) { return netv1.Ingresses("").List(ctx, opts) })
	typed("ingressclasses", "networking.k8s.io/v1", "IngressClass", false, func(opts metav1.ListOptions) (runtime.Object, error) {
		return netv1.IngressClasses().List(ctx, opts)
	})
	typed("networkpolicies", "networking.k8s.io/v1", "NetworkPolicy", false, func(opts metav1.ListOptions) (runtime.Object, error) {
		return netv1.NetworkPolicies("").List(ctx, opts)
	})
	typed("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", false, func(opts metav1.ListOptions) (runtime.Object, error) {
		return policy.PodDisruptionBudgets("").List(ctx, opts)
	})
	typed("configmaps in aws-observability", "v1", "ConfigMap", false, func(opts metav1.ListOptions) (runtime.Object, error) {
		return core.ConfigMaps("aws-observability").List(ctx, opts)
	})
	if o.Helm {
		listings = append(listings, &listing{what: "Helm release Secrets (" + HelmSelector + ")", list: func(opts metav1.ListOptions) (runtime.Object, error) {
			opts.LabelSelector = HelmSelector
			return core.Secrets("").List(ctx, opts)
		}, each: func(o runtime.Object) {
			decl, err := releaseObjects(o.(*corev1.Secret))
			if err != nil {
				fail(err)
			}
			releases = append(releases, decl...)
		}})
	}
	if dyn != nil && served(client, RolloutResource) {
		l := &listing{what: "rollouts.argoproj.io"}
		l.list = func(opts metav1.ListOptions) (runtime.Object, error) {
			return dyn.Resource(RolloutResource).List(ctx, opts)
		}
		l.each = func(o runtime.Object) {
			obj, err := fromUnstructured(o.(*unstructured.Unstructured))
			if err != nil {
				fail(err)
				return
			}
			l.owner = append(l.owner, obj)
		}
		listings = append(listings, l)
	}
	for _, l := range listings {
		wg.Go(func() {
			p := pager.New(pager.SimplePageFunc(l.list))
			if err := p.EachListItem(ctx, metav1.ListOptions{}, func(o runtime.Object) error { l.each(o); return nil }); err != nil {
				fail(listError(l.what, err))
			}
		})
	}
	wg.Wait()
	r.Snapshot = live.Snapshot{Nodes: nodes, Pods: pods, Events: events, Now: time.Now()}
	for _, l := range listings {
		r.Snapshot.Owners = append(r.Snapshot.Owners, l.owner...)
		r.Objects = append(r.Objects, l.other...)
		r.Declared = append(r.Declared, l.decl...)
	}
	r.Declared = append(r.Declared, releases...)
	return r
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
