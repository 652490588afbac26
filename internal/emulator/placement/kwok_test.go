package placement

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

// TestResync: a bound pod that KWOK has not started gets ResyncAnnotation
// changed once per wait, until it starts; one that KWOK started, one bound
// elsewhere, one deleted and one whose image pull fails (KWOK wrote its
// containers' statuses) are left alone.
func TestResync(t *testing.T) {
	waits := []time.Duration{time.Millisecond, time.Millisecond, time.Millisecond}
	bound := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "apps", Name: "web"},
			Spec: corev1.PodSpec{NodeName: "fargate-ip-10-0-1-1.ec2.internal"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string // the annotation at the end
	}{
		{"not started", bound(nil), "3"},
		{"started", bound(func(p *corev1.Pod) { p.Status.Phase = corev1.PodRunning }), ""},
		{"image pull failing", bound(func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}
		}), ""},
		{"on another node", bound(func(p *corev1.Pod) { p.Spec.NodeName = "fargate-ip-10-0-1-2.ec2.internal" }), ""},
		// The informer has not seen the binding yet: asked again once it has
		// (here never, so never asked, but not given up either: see below).
		{"binding not seen", bound(func(p *corev1.Pod) { p.Spec.NodeName = "" }), ""},
		{"being deleted", bound(func(p *corev1.Pod) {
			p.DeletionTimestamp = &metav1.Time{Time: time.Now()}
			p.Finalizers = []string{"x"}
		}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset(tc.pod)
			s := &Scheduler{Client: client, Config: &clusterconfig.Config{}}
			s.resync(context.Background(), types.NamespacedName{Namespace: "apps", Name: "web"}, "fargate-ip-10-0-1-1.ec2.internal", waits, get(client))
			p, err := client.CoreV1().Pods("apps").Get(context.Background(), "web", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := p.Annotations[ResyncAnnotation]; got != tc.want {
				t.Errorf("%s = %q, want %q", ResyncAnnotation, got, tc.want)
			}
		})
	}
	t.Run("binding seen late", func(t *testing.T) {
		client := fake.NewClientset(bound(nil))
		s := &Scheduler{Client: client, Config: &clusterconfig.Config{}}
		calls := 0
		late := func(key types.NamespacedName) (*corev1.Pod, bool) {
			calls++
			p, ok := get(client)(key)
			if calls == 1 { // the informer's copy from before the binding
				p = p.DeepCopy()
				p.Spec.NodeName = ""
			}
			return p, ok
		}
		s.resync(context.Background(), types.NamespacedName{Namespace: "apps", Name: "web"}, "fargate-ip-10-0-1-1.ec2.internal", waits, late)
		p, _ := client.CoreV1().Pods("apps").Get(context.Background(), "web", metav1.GetOptions{})
		if got := p.Annotations[ResyncAnnotation]; got != "3" {
			t.Errorf("%s = %q, want 3: asked again once the binding was seen", ResyncAnnotation, got)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		client := fake.NewClientset()
		s := &Scheduler{Client: client, Config: &clusterconfig.Config{}}
		s.resync(context.Background(), types.NamespacedName{Namespace: "apps", Name: "web"}, "n", waits, get(client)) // returns, no panic
	})
}

// get reads a pod from the fake API server, as Run's informer would have it.
func get(client *fake.Clientset) func(types.NamespacedName) (*corev1.Pod, bool) {
	return func(key types.NamespacedName) (*corev1.Pod, bool) {
		p, err := client.CoreV1().Pods(key.Namespace).Get(context.Background(), key.Name, metav1.GetOptions{})
		return p, err == nil
	}
}
