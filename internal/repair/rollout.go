package repair

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// get reads a workload of a kind fix restarts, and its pod selector.
func get(ctx context.Context, client kubernetes.Interface, ref object.Ref) (runtime.Object, *metav1.LabelSelector, error) {
	apps := client.AppsV1()
	var obj runtime.Object
	var sel *metav1.LabelSelector
	var err error
	switch ref.Kind {
	case "Deployment":
		var d *appsv1.Deployment
		if d, err = apps.Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	case "StatefulSet":
		var d *appsv1.StatefulSet
		if d, err = apps.StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	default:
		return nil, nil, fmt.Errorf("%s: fix restarts Deployments and StatefulSets", ref)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return obj, sel, nil
}

// patchRestart patches the pod template as `kubectl rollout restart` does,
// with kubectl's own restarter. It returns the undo: the patch that gives
// the template back what it had, as `kubectl rollout undo` would (the
// controller then brings back the pods of the template before).
func patchRestart(ctx context.Context, client kubernetes.Interface, ref object.Ref) (undo func(context.Context) error, err error) {
	obj, _, err := get(ctx, client, ref)
	if err != nil {
		return nil, err
	}
	before, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("restarting %s: %w", ref, err)
	}
	after, err := polymorphichelpers.ObjectRestarterFn(obj.DeepCopyObject())
	if err != nil {
		return nil, fmt.Errorf("restarting %s: %w", ref, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(before, after, obj)
	if err != nil {
		return nil, fmt.Errorf("restarting %s: %w", ref, err)
	}
	back, err := strategicpatch.CreateTwoWayMergePatch(after, before, obj)
	if err != nil {
		return nil, fmt.Errorf("restarting %s: %w", ref, err)
	}
	if err := patchWorkload(ctx, client, ref, patch); err != nil {
		return nil, fmt.Errorf("restarting %s: %w", ref, err)
	}
	return func(ctx context.Context) error {
		if err := patchWorkload(ctx, client, ref, back); err != nil {
			return fmt.Errorf("undoing the restart of %s: %w", ref, err)
		}
		return nil
	}, nil
}

// patchWorkload sends a strategic merge patch to a Deployment or a
// StatefulSet. The typed clients send the request kubectl sends; the fake
// clientset of the tests serves them (its RESTClient is nil).
func patchWorkload(ctx context.Context, client kubernetes.Interface, ref object.Ref, patch []byte) error {
	apps := client.AppsV1()
	var err error
	if ref.Kind == "Deployment" {
		_, err = apps.Deployments(ref.Namespace).Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	} else {
		_, err = apps.StatefulSets(ref.Namespace).Patch(ctx, ref.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	}
	return err
}

// rolledOut reports, as `kubectl rollout status` does, whether the
// workload's rollout is complete, and what it waits for.
func rolledOut(ctx context.Context, client kubernetes.Interface, ref object.Ref) (string, bool, error) {
	viewer, err := polymorphichelpers.StatusViewerFor(schema.GroupKind{Group: "apps", Kind: ref.Kind})
	if err != nil {
		return "", false, err
	}
	obj, _, err := get(ctx, client, ref)
	if err != nil {
		return "", false, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", false, err
	}
	msg, done, err := viewer.Status(&unstructured.Unstructured{Object: m}, 0)
	return strings.TrimSpace(msg), done, err
}

// placed says which of the workload's live pods (those selector selects)
// still wait for a node, and which run off Fargate; both "" when every one
// runs on Fargate.
func placed(ctx context.Context, client kubernetes.Interface, ref object.Ref, selector string) (waiting, elsewhere string, err error) {
	pods, err := client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", "", fmt.Errorf("listing the pods of %s: %w", ref, err)
	}
	var wait, off []string
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case p.Spec.SchedulerName != fargate.SchedulerName && p.Spec.NodeName != "":
			off = append(off, fmt.Sprintf("%s on %s", p.Name, p.Spec.NodeName))
		case p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning:
			wait = append(wait, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
		}
	}
	return strings.Join(wait, ", "), strings.Join(off, ", "), nil
}

// refusedPod returns fargate-scheduler's refusal of one of the workload's
// pods (those selector selects) created since the restart, as its
// FailedScheduling event words it; "" when none was refused. Such a pod
// stays Pending for good, and the rollout waits for it: the restart fails
// at once instead of at its timeout. A pod waiting for an address or an AZ
// is not refused (fargate.IsRefusalEvent). since is the restart's time on
// this machine's clock, to the second.
func refusedPod(ctx context.Context, client kubernetes.Interface, ref object.Ref, selector string, since time.Time) (string, error) {
	events, err := client.CoreV1().Events(ref.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.Set{"reason": "FailedScheduling", "source": fargate.SchedulerName}.String()})
	if err != nil {
		return "", fmt.Errorf("listing fargate-scheduler's events in %s: %w", ref.Namespace, err)
	}
	refused := map[string]string{}
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "Pod" && e.Source.Component == fargate.SchedulerName && fargate.IsRefusalEvent(e.Message) {
			refused[e.InvolvedObject.Name] = e.Message
		}
	}
	if len(refused) == 0 {
		return "", nil
	}
	pods, err := client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", fmt.Errorf("listing the pods of %s: %w", ref, err)
	}
	for _, p := range pods.Items {
		if msg, ok := refused[p.Name]; ok && p.Spec.NodeName == "" && !p.CreationTimestamp.Time.Before(since.Truncate(time.Second)) {
			return fmt.Sprintf("fargate-scheduler refused new pod %s: %s", p.Name, msg), nil
		}
	}
	return "", nil
}
