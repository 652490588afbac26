package emulator

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// TestFargatePatch: a patch evicts the Fargate pods created before it (or
// in its second, from the next one), AZ by AZ, and nothing else; a pod whose eviction a budget refuses for the
// retry gets its termination scheduled, with an event, and is deleted once
// its time has come; the patch is done once every AZ is.
func TestFargatePatch(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	// Notified a second before clock; "new" created in the second after.
	before, after := metav1.NewTime(clock.Add(-time.Hour)), metav1.NewTime(clock)
	node := func(name, zone string, onFargate bool) *corev1.Node {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
		if onFargate {
			n.Labels[fargate.ComputeTypeLabel] = "fargate"
		}
		return n
	}
	pod := func(name, node string, created metav1.Time) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps", UID: k8stypes.UID("uid-" + name), CreationTimestamp: created},
			Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	}
	client := fake.NewClientset(
		node("fargate-a1", "us-east-1a", true), node("fargate-a2", "us-east-1a", true), node("fargate-b", "us-east-1b", true), node("ec2-a", "us-east-1a", false),
		pod("evicted-a", "fargate-a1", before), pod("same-second", "fargate-a1", metav1.NewTime(clock.Add(-time.Second))), pod("held", "fargate-a2", before), pod("evicted-b", "fargate-b", before),
		pod("new", "fargate-b", after), pod("on-ec2", "ec2-a", before), pod("waiting", "", before),
	)
	var evicted []string
	client.PrependReactor("create", "pods", func(action clienttesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "eviction" {
			return false, nil, nil
		}
		e := action.(clienttesting.CreateAction).GetObject().(*policyv1.Eviction)
		if e.Name == "held" {
			return true, nil, apierrors.NewTooManyRequests("Cannot evict pod as it would violate the pod's disruption budget.", 10)
		}
		evicted = append(evicted, e.Name)
		return true, nil, client.Tracker().Delete(corev1.SchemeGroupVersion.WithResource("pods"), e.Namespace, e.Name)
	})
	o := &Options{StateDir: t.TempDir(), Config: clusterconfig.Default()}
	if _, err := o.StartFargatePatch(time.Minute, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	// Notified at the clock's time.
	if err := updateFaults(o.StateDir, func(f *Faults) (bool, error) { f.FargatePatch.Notified = clock.Add(-time.Second); return true, nil }); err != nil {
		t.Fatal(err)
	}
	p := &patcher{stateDir: o.StateDir, client: client, zones: o.Config.AvailabilityZones, now: func() time.Time { return clock }}
	step := func() Faults {
		t.Helper()
		if err := p.step(ctx); err != nil {
			t.Fatal(err)
		}
		f, err := ReadFaults(o.StateDir)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	exists := func(name string) bool {
		_, err := client.CoreV1().Pods("apps").Get(ctx, name, metav1.GetOptions{})
		return err == nil
	}

	// Nothing in the second of the notification.
	clock = clock.Add(-500 * time.Millisecond)
	if step(); len(evicted) != 0 {
		t.Fatalf("evicted %v in the second of the notification", evicted)
	}
	clock = clock.Add(500 * time.Millisecond)
	// us-east-1a first: one pod evicted, the other refused, tried again
	// for 10 seconds, then scheduled for deletion.
	if f := step(); len(f.FargatePatch.Patched) != 0 || !cmp.Equal(evicted, []string{"evicted-a", "same-second"}) {
		t.Fatalf("first step: patched %v, evicted %v; want evicted-a and same-second only", f.FargatePatch.Patched, evicted)
	}
	clock = clock.Add(9 * time.Second)
	step()
	if events, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{}); len(events.Items) != 0 {
		t.Fatalf("refused for 9s, under the retry: events %+v", events.Items)
	}
	clock = clock.Add(time.Second)
	step()
	held, err := client.CoreV1().Pods("apps").Get(ctx, "held", metav1.GetOptions{})
	if err != nil || held.Annotations[ScheduledTerminationAnnotation] != "2026-11-29T10:01:10Z" {
		t.Fatalf("held: %v, annotations %v; want its termination scheduled a minute on", err, held.Annotations)
	}
	events, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
	if len(events.Items) != 1 || events.Items[0].Reason != ScheduledTerminationReason || events.Items[0].Type != corev1.EventTypeWarning ||
		!strings.HasPrefix(events.Items[0].Message, "EKS Fargate Pod Scheduled Termination: ") ||
		!strings.Contains(events.Items[0].Message, "disruption budget") || !strings.Contains(events.Items[0].Message, "2026-11-29T10:01:10Z") {
		t.Fatalf("events %+v; want one Warning event of the scheduled termination, its cause and date", events.Items)
	}
	// Refused until its time: no new event, the pod runs.
	clock = clock.Add(59 * time.Second)
	if f := step(); len(f.FargatePatch.Patched) != 0 || !exists("held") {
		t.Fatalf("before its time: patched %v, held exists %v", f.FargatePatch.Patched, exists("held"))
	}
	if events, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{}); len(events.Items) != 1 {
		t.Errorf("%d events, want the one", len(events.Items))
	}
	clock = clock.Add(time.Second)
	step()
	if exists("held") {
		t.Fatal("held runs at its scheduled termination")
	}
	// us-east-1a is done; then us-east-1b, whose new pod stays; then
	// us-east-1c, with no Fargate pod.
	if f := step(); !cmp.Equal(f.FargatePatch.Patched, []string{"us-east-1a"}) {
		t.Fatalf("patched %v, want us-east-1a", f.FargatePatch.Patched)
	}
	if f := step(); len(f.FargatePatch.Patched) != 1 || !cmp.Equal(evicted, []string{"evicted-a", "same-second", "evicted-b"}) {
		t.Fatalf("patched %v, evicted %v; want evicted-b evicted in us-east-1b", f.FargatePatch.Patched, evicted)
	}
	if f := step(); !cmp.Equal(f.FargatePatch.Patched, []string{"us-east-1a", "us-east-1b"}) || f.FargatePatch.Done != nil {
		t.Fatalf("patch %+v, want us-east-1a and us-east-1b patched", f.FargatePatch)
	}
	f := step()
	if !cmp.Equal(f.FargatePatch.Patched, o.Config.AvailabilityZones) || f.FargatePatch.Done == nil {
		t.Errorf("patch %+v, want every AZ patched and done", f.FargatePatch)
	}
	for _, name := range []string{"new", "on-ec2", "waiting"} {
		if !exists(name) {
			t.Errorf("%s is gone: only Fargate pods created before the patch are recycled", name)
		}
	}
	// A second patch may start once one is done.
	if started, err := o.StartFargatePatch(time.Minute, time.Second); err != nil || !started {
		t.Errorf("a patch after one done: %v, %v", started, err)
	}
}
