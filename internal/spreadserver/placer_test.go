package spreadserver

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

var perAZ = spread.NewZones([]fargate.Profile{
	{Name: "apps-a", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-a"}},
	{Name: "apps-b", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-b"}},
	{Name: "apps-c", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-c"}},
}, map[string]string{"subnet-a": "us-east-1a", "subnet-b": "us-east-1b", "subnet-c": "us-east-1c"})

func newPlacer(t *testing.T) (*Placer, cache.Indexer, *time.Time) {
	t.Helper()
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers)
	p := NewPlacer(pods, cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{}), NewMetrics(prometheus.NewRegistry()))
	p.SetZones(perAZ)
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	return p, pods, &now
}

var rs = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid", Controller: new(true)}

func replica(labels map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "web-1-", Namespace: "apps", Labels: labels, OwnerReferences: []metav1.OwnerReference{rs}}}
}

// admit runs Mutate and applies its patch to the pod as the API server would.
func admit(t *testing.T, p *Placer, pod *corev1.Pod, uid string) (string, []admission.PatchOp) {
	t.Helper()
	ops, err := p.Mutate(&admissionv1.AdmissionRequest{UID: types.UID(uid)}, pod)
	if err != nil {
		t.Fatal(err)
	}
	return pod.Annotations[spread.ZoneAnnotation] + zoneOfPatch(ops), ops
}

func zoneOfPatch(ops []admission.PatchOp) string {
	for _, op := range ops {
		switch v := op.Value.(type) {
		case map[string]string:
			if z, ok := v[spread.ZoneAnnotation]; ok {
				return z
			}
		case string:
			if op.Path == "/metadata/annotations/spread.fargatekit.io~1zone" {
				return v
			}
		}
	}
	return ""
}

// TestMutateBurst: 30 replicas admitted before the cache sees any land
// 10/10/10, and once the cache holds them they are not counted twice.
func TestMutateBurst(t *testing.T) {
	p, pods, now := newPlacer(t)
	load, zoneOf := map[string]int{}, []string{}
	for i := range 30 {
		z, _ := admit(t, p, replica(map[string]string{"app": "web"}), fmt.Sprint("req-", i))
		load[z]++
		zoneOf = append(zoneOf, z)
	}
	want := map[string]int{"us-east-1a": 10, "us-east-1b": 10, "us-east-1c": 10}
	if diff := cmp.Diff(want, load); diff != "" {
		t.Fatalf("burst of 30 (-want +got):\n%s", diff)
	}
	cached := func(i int) *corev1.Pod {
		pod := replica(map[string]string{"app": "web"})
		pod.Name = fmt.Sprint("web-1-", i)
		pod.Annotations = map[string]string{spread.ZoneAnnotation: zoneOf[i], spread.AdmissionAnnotation: fmt.Sprint("req-", i)}
		if err := pods.Add(pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	// The cache catches up with the first six before its event handler has
	// run: they are not counted twice.
	for i := range 6 {
		cached(i)
	}
	got, err := p.load("rs-uid")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("load once the cache holds some (-want +got):\n%s", diff)
	}
	// The next six are seen, and three of them deleted (a scale-down) before
	// any pod is admitted again: their admissions do not count again.
	for i := 6; i < 12; i++ {
		p.Seen(cached(i))
	}
	for i := 6; i < 9; i++ {
		if err := pods.Delete(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("web-1-", i), Namespace: "apps"}}); err != nil {
			t.Fatal(err)
		}
	}
	got, _ = p.load("rs-uid")
	wantAfter := maps.Clone(want)
	for _, z := range zoneOf[6:9] {
		wantAfter[z]--
	}
	if diff := cmp.Diff(wantAfter, got); diff != "" {
		t.Errorf("load once three seen pods are deleted (-want +got):\n%s", diff)
	}
	// Admissions the cache never saw (the pods' creation failed) are forgotten.
	*now = now.Add(DefaultRecent + time.Second)
	got, _ = p.load("rs-uid")
	wantCached := map[string]int{}
	for _, z := range slices.Concat(zoneOf[:6], zoneOf[9:12]) {
		wantCached[z]++
	}
	if diff := cmp.Diff(wantCached, got); diff != "" {
		t.Errorf("load after the recent admissions expire (-want +got):\n%s", diff)
	}
}

func TestMutateLeavesAlone(t *testing.T) {
	p, _, _ := newPlacer(t)
	tests := []struct {
		name string
		pod  *corev1.Pod
	}{
		{"a profile chosen by the pod", replica(map[string]string{fargate.ProfileLabel: "apps-b"})},
		{"no per-AZ profiles match", func() *corev1.Pod { pod := replica(nil); pod.Namespace = "web"; return pod }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ops := admit(t, p, tt.pod, "x"); ops != nil {
				t.Errorf("patch %v, want none", ops)
			}
		})
	}
}

// TestMutatePatch: the patch adds the profile label and the annotations,
// whether or not the pod has labels and annotations already.
func TestMutatePatch(t *testing.T) {
	p, _, _ := newPlacer(t)
	bare := replica(nil)
	_, ops := admit(t, p, bare, "u1")
	if len(ops) != 2 || ops[0].Path != "/metadata/labels" || ops[1].Path != "/metadata/annotations" {
		t.Errorf("pod without labels: %v", ops)
	}
	full := replica(map[string]string{"app": "web"})
	full.Annotations = map[string]string{"a": "b"}
	_, ops = admit(t, p, full, "u2")
	var paths []string
	for _, op := range ops {
		paths = append(paths, op.Path)
	}
	want := []string{"/metadata/labels/eks.amazonaws.com~1fargate-profile", "/metadata/annotations/spread.fargatekit.io~1zone", "/metadata/annotations/spread.fargatekit.io~1admission"}
	if diff := cmp.Diff(want, paths); diff != "" {
		t.Errorf("pod with labels (-want +got):\n%s", diff)
	}
}

// TestZoneOf: spread's annotation, else the per-AZ profile, else the node.
func TestZoneOf(t *testing.T) {
	p, _, _ := newPlacer(t)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "fargate-ip-1", Labels: map[string]string{corev1.LabelTopologyZone: "us-east-1c"}}}
	if err := p.nodes.Add(node); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		pod  corev1.Pod
		want string
	}{
		{"annotation", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{spread.ZoneAnnotation: "us-east-1b"}}}, "us-east-1b"},
		{"profile", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{fargate.ProfileLabel: "apps-a"}}}, "us-east-1a"},
		{"node", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{fargate.ProfileLabel: "apps"}}, Spec: corev1.PodSpec{NodeName: "fargate-ip-1"}}, "us-east-1c"},
		{"unknown", corev1.Pod{}, ""},
	} {
		if got := p.ZoneOf(&tt.pod); got != tt.want {
			t.Errorf("%s: ZoneOf = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// BenchmarkMutate: one admission among 3,000 cached pods of 1,000
// workloads, the ReplicaSet's own 30 included.
func BenchmarkMutate(b *testing.B) {
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, Indexers)
	p := NewPlacer(pods, nil, NewMetrics(prometheus.NewRegistry()))
	p.SetZones(perAZ)
	p.Recent = time.Nanosecond // admissions of earlier iterations do not pile up
	for i := range 3000 {
		owner := rs
		if i >= 30 {
			owner.UID = types.UID(fmt.Sprint("rs-", i%1000))
		}
		pod := replica(map[string]string{fargate.ProfileLabel: []string{"apps-a", "apps-b", "apps-c"}[i%3]})
		pod.Name, pod.OwnerReferences = fmt.Sprint("pod-", i), []metav1.OwnerReference{owner}
		if err := pods.Add(pod); err != nil {
			b.Fatal(err)
		}
	}
	req := &admissionv1.AdmissionRequest{UID: "req"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Mutate(req, replica(map[string]string{"app": "web"})); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMutateNodeSelector: ByNodeSelector balances a workload over the AZs
// of its multi-subnet profile with a zone node selector, and leaves alone a
// pod that names its zone itself.
func TestMutateNodeSelector(t *testing.T) {
	p, _, _ := newPlacer(t)
	p.SetZones(spread.NewZoneSelectors([]fargate.Profile{
		{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-a", "subnet-b", "subnet-c"}, Status: fargate.StatusActive},
	}, map[string]string{"subnet-a": "us-east-1a", "subnet-b": "us-east-1b", "subnet-c": "us-east-1c"}))
	load := map[string]int{}
	for i := range 9 {
		pod := replica(nil)
		pod.Spec.NodeSelector = map[string]string{"kubernetes.io/os": "linux"}
		z, ops := admit(t, p, pod, fmt.Sprint("req-", i))
		load[z]++
		want := admission.PatchOp{Op: "add", Path: "/spec/nodeSelector/topology.kubernetes.io~1zone", Value: z}
		if len(ops) == 0 || !cmp.Equal(ops[0], want) {
			t.Fatalf("patch %+v, want first %+v", ops, want)
		}
		for _, op := range ops {
			if op.Path == "/metadata/labels" || op.Path == "/metadata/labels/eks.amazonaws.com~1fargate-profile" {
				t.Errorf("ByNodeSelector set the profile label: %+v", op)
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"us-east-1a": 3, "us-east-1b": 3, "us-east-1c": 3}, load); diff != "" {
		t.Errorf("9 replicas (-want +got):\n%s", diff)
	}
	own := replica(nil)
	own.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1a"}
	if _, ops := admit(t, p, own, "req-own"); ops != nil {
		t.Errorf("a pod with its own zone selector was changed: %+v", ops)
	}
}

// TestStripKeepsWhatIsRead checks that the caches' transforms keep what the
// placer and the rebalancer read of nodes and namespaces, and nothing else.
func TestStripKeepsWhatIsRead(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "fargate-ip-10-0-1-10", ResourceVersion: "7",
			Labels:        map[string]string{corev1.LabelTopologyZone: "us-east-1b", "eks.amazonaws.com/compute-type": "fargate"},
			Annotations:   map[string]string{"node.alpha.kubernetes.io/ttl": "0"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Status: corev1.NodeStatus{Images: []corev1.ContainerImage{{Names: []string{"app:1"}, SizeBytes: 1 << 30}}},
	}
	got, err := StripNode(node)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, ResourceVersion: "7", Labels: map[string]string{corev1.LabelTopologyZone: "us-east-1b"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("StripNode (-want +got):\n%s", diff)
	}
	p, _, _ := newPlacer(t)
	if err := p.nodes.Add(got); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "apps"}, Spec: corev1.PodSpec{NodeName: node.Name}}
	if z := p.ZoneOf(pod); z != "us-east-1b" {
		t.Errorf("ZoneOf a pod on the stripped node = %q, want us-east-1b", z)
	}

	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{spread.EnabledLabel: "true", "team": "shop"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}}}
	gotNS, err := StripNamespace(ns)
	if err != nil {
		t.Fatal(err)
	}
	wantNS := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{spread.EnabledLabel: "true"}}}
	if diff := cmp.Diff(wantNS, gotNS); diff != "" {
		t.Errorf("StripNamespace (-want +got):\n%s", diff)
	}
	if plain, _ := StripNamespace(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: map[string]string{"team": "x"}}}); plain.(*corev1.Namespace).Labels != nil {
		t.Errorf("a namespace not opted in keeps labels %v", plain.(*corev1.Namespace).Labels)
	}
}
