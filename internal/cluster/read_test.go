package cluster

import (
	"context"
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestReadKubeOptional: HorizontalPodAutoscalers are read, and when they
// cannot be, an error says so but the snapshot has no hole (Unread), so
// that scan still reports; a kind that is not optional leaves a hole.
func TestReadKubeOptional(t *testing.T) {
	hpa := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 10}}
	r := ReadKube(context.Background(), fake.NewClientset(hpa), nil, ReadOptions{})
	if len(r.Snapshot.Autoscalers) != 1 || len(r.Snapshot.Unread) != 0 || len(r.Errors) != 0 {
		t.Errorf("autoscalers %v, unread %v, errors %v", r.Snapshot.Autoscalers, r.Snapshot.Unread, r.Errors)
	}
	forbid := func(resource string) *fake.Clientset {
		client := fake.NewClientset()
		client.PrependReactor("list", resource, func(k8stesting.Action) (bool, runtime.Object, error) {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: resource}, "", nil)
		})
		return client
	}
	r = ReadKube(context.Background(), forbid("horizontalpodautoscalers"), nil, ReadOptions{})
	if len(r.Snapshot.Unread) != 0 || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Error(), "horizontalpodautoscalers") {
		t.Errorf("autoscalers forbidden: unread %v, errors %v", r.Snapshot.Unread, r.Errors)
	}
	r = ReadKube(context.Background(), forbid("deployments"), nil, ReadOptions{})
	if len(r.Snapshot.Unread) != 1 || r.Snapshot.Unread[0] != "deployments" {
		t.Errorf("deployments forbidden: unread %v", r.Snapshot.Unread)
	}
}

// TestReadKubeDropsManagedFields: what is read keeps no managedFields,
// which no rule reads, and everything else.
func TestReadKubeDropsManagedFields(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", Labels: map[string]string{"app": "web"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate}}},
		Spec: corev1.PodSpec{NodeName: "fargate-ip-10-0-1-10"}}
	r := ReadKube(context.Background(), fake.NewClientset(pod), nil, ReadOptions{})
	if len(r.Snapshot.Pods) != 1 {
		t.Fatalf("pods %v, errors %v", r.Snapshot.Pods, r.Errors)
	}
	got := r.Snapshot.Pods[0]
	if got.ManagedFields != nil || got.Labels["app"] != "web" || got.Spec.NodeName != "fargate-ip-10-0-1-10" {
		t.Errorf("the pod read: managed fields %v, labels %v, node %q; want no managed fields and the rest", got.ManagedFields, got.Labels, got.Spec.NodeName)
	}
}
