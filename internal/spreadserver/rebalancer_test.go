package spreadserver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/pkg/spread"
)

// skewed adds n Ready pods of a controller, all in us-east-1a.
func skewed(t *testing.T, pods cache.Indexer, kind, name string, n int) {
	t.Helper()
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i), Namespace: "apps", Labels: map[string]string{spread.EnabledLabel: "true"},
				Annotations:       map[string]string{spread.ZoneAnnotation: "us-east-1a"},
				OwnerReferences:   []metav1.OwnerReference{{Kind: kind, Name: name, UID: types.UID(name), Controller: new(true)}},
				CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 1, 0, i, 0, 0, time.UTC))},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
		}
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRebalancerPass: a workload whose eviction a PodDisruptionBudget
// refuses is left alone for a while and the next one is evicted in the same
// pass; Job pods are never evicted; a workload waits for its replacement.
func TestRebalancerPass(t *testing.T) {
	p, pods, now := newPlacer(t)
	skewed(t, pods, "Job", "batch", 3)
	skewed(t, pods, "StatefulSet", "a-held", 3)
	skewed(t, pods, "StatefulSet", "b-free", 3)
	client := fake.NewClientset()
	var evicted []string
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e := a.(k8stesting.CreateAction).GetObject().(*policyv1.Eviction)
		if e.Name[:6] == "a-held" {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 0)
		}
		evicted = append(evicted, e.Name)
		// The pod is gone, as the informer would tell, and no replacement yet.
		obj, _, _ := pods.GetByKey("apps/" + e.Name)
		return true, nil, pods.Delete(obj)
	})
	r := &Rebalancer{Client: client, Placer: p, Metrics: p.metrics, now: func() time.Time { return *now }}
	ctx := context.Background()
	blocked := func() float64 { return testutil.ToFloat64(p.metrics.evictions.WithLabelValues("blocked")) }
	if !r.Pass(ctx) || len(evicted) != 1 || evicted[0] != "b-free-2" || blocked() != 1 {
		t.Fatalf("first pass: evicted %v, %v blocked; want a-held refused, then b-free-2 (the youngest) evicted", evicted, blocked())
	}
	if r.Pass(ctx) || blocked() != 1 {
		t.Errorf("second pass: evicted %v, %v blocked; want nothing while a-held backs off and b-free's replacement is not Ready", evicted, blocked())
	}
	*now = now.Add(backOff + time.Second)
	if r.Pass(ctx) || blocked() != 2 || len(evicted) != 1 {
		t.Errorf("after the back-off: evicted %v, %v blocked; want a-held tried (and refused) again", evicted, blocked())
	}
	// b-free is scaled down to its two Ready pods before the replacement
	// came: the wait is over, and its skew (both in one AZ) is evened out.
	two := int32(2)
	if _, err := client.AppsV1().StatefulSets("apps").Create(ctx, &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "b-free", Namespace: "apps"},
		Spec: appsv1.StatefulSetSpec{Replicas: &two}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !r.Pass(ctx) || len(evicted) != 2 || evicted[1] != "b-free-1" {
		t.Errorf("after b-free's scale-down: evicted %v; want b-free-1 evicted", evicted)
	}
	if got := testutil.ToFloat64(p.metrics.skew.WithLabelValues("apps", "StatefulSet/a-held")); got != 3 {
		t.Errorf("skew of a-held = %v, want 3", got)
	}
}
