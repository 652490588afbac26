package fargate

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/fargatekit/fargatekit/internal/emulator/config"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

var profiles = []fargate.Profile{
	{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1", "subnet-private2", "subnet-private3"}},
	{Name: "b-web", Selectors: []fargate.Selector{{Namespace: "web"}}, Subnets: []string{"subnet-private1"}},
	{Name: "a-web", Selectors: []fargate.Selector{{Namespace: "web", Labels: map[string]string{"tier": "front"}}}, Subnets: []string{"subnet-private2"}},
}

func pod(ns string, labels, annotations map[string]string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}
}

func TestMutate(t *testing.T) {
	w := &Webhook{Profiles: func() []fargate.Profile { return profiles }}
	for _, tc := range []struct {
		name    string
		ns      string
		pod     *corev1.Pod
		profile string
		ops     []string
	}{
		{"no profile", "other", pod("other", nil, nil), "", nil},
		{"matched, no labels yet", "apps", pod("", nil, nil), "apps", []string{
			"add /spec/schedulerName fargate-scheduler",
			"add /metadata/labels map[eks.amazonaws.com/fargate-profile:apps]",
			"add /metadata/annotations map[eks.amazonaws.com/compute-type:fargate]"}},
		{"alphanumeric first", "web", pod("web", map[string]string{"tier": "front"}, map[string]string{"a": "b"}), "a-web", []string{
			"add /spec/schedulerName fargate-scheduler",
			"add /metadata/labels/eks.amazonaws.com~1fargate-profile a-web",
			"add /metadata/annotations/eks.amazonaws.com~1compute-type fargate"}},
		{"the pod's label chooses", "web", pod("web", map[string]string{"tier": "front", fargate.ProfileLabel: "b-web"}, nil), "b-web", nil},
		{"compute-type ec2 stays off", "apps", pod("apps", nil, map[string]string{fargate.ComputeTypeAnnotation: "ec2"}), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, profile := w.Mutate(tc.ns, tc.pod)
			if profile != tc.profile {
				t.Errorf("profile %q, want %q", profile, tc.profile)
			}
			if tc.ops == nil {
				return
			}
			var got []string
			for _, o := range ops {
				got = append(got, o.String())
			}
			if diff := cmp.Diff(tc.ops, got); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestServeHTTP(t *testing.T) {
	w := &Webhook{Profiles: func() []fargate.Profile { return profiles }}
	raw, _ := json.Marshal(pod("", nil, nil))
	review := admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u1", Operation: admissionv1.Create, Namespace: "apps",
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw}}}
	body, _ := json.Marshal(review)
	rec := httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookPath, bytes.NewReader(body)))
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || !out.Response.Allowed || out.Response.UID != "u1" || !strings.Contains(string(out.Response.Patch), SchedulerName) {
		t.Errorf("response %+v", out.Response)
	}
	rec = httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader("{")))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("garbage: status %d", rec.Code)
	}
}

func TestRejection(t *testing.T) {
	yes := true
	p := pod("apps", nil, nil)
	if got := Rejection(p, nil); got != "" {
		t.Errorf("a plain pod is refused: %s", got)
	}
	p.Spec.HostNetwork = true
	p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes,
		Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN"}}}
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	p.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}}
	want := "Pod not supported on Fargate: fields not supported: HostNetwork, invalid SecurityContext fields: Privileged, " +
		"invalid SecurityContext fields: Capabilities added: CAP_CHOWN, port contains HostIP or HostPort, " +
		"volumes not supported: logs is of an unsupported volume Type"
	got := Rejection(p, nil)
	for _, part := range strings.Split(strings.TrimPrefix(want, "Pod not supported on Fargate: "), ", ") {
		if !strings.Contains(got, part) {
			t.Errorf("rejection %q lacks %q", got, part)
		}
	}
	ds := pod("apps", nil, nil)
	ds.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: &yes}}
	if got := Rejection(ds, nil); !strings.Contains(got, "DaemonSet") {
		t.Errorf("DaemonSet pod: %q", got)
	}
}

// newScheduler returns a scheduler on a fake clientset that implements binding.
func newScheduler(t *testing.T, cfg *config.Config, seed uint64) (*Scheduler, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := a.(k8stesting.CreateAction).GetObject().(*corev1.Binding)
		p, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p.(*corev1.Pod).Spec.NodeName = b.Target.Name
		return true, b, client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, b.Namespace)
	})
	s := &Scheduler{Client: client, Config: cfg, Profiles: func() []fargate.Profile { return profiles }, Rand: rand.New(rand.NewPCG(seed, seed))}
	s.used = nil
	return s, client
}

func createPod(t *testing.T, client *fake.Clientset, name, ns string, spec func(*corev1.PodSpec)) types.NamespacedName {
	t.Helper()
	p := pod(ns, map[string]string{fargate.ProfileLabel: "apps"}, nil)
	p.Name = name
	p.Spec.SchedulerName = SchedulerName
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("8Gi")}
	if spec != nil {
		spec(&p.Spec)
	}
	if _, err := client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return types.NamespacedName{Namespace: ns, Name: name}
}

func TestSchedule(t *testing.T) {
	cfg := config.Default()
	cfg.Timings.FargatePodStart.Duration = 0
	s, client := newScheduler(t, cfg, 1)
	ctx := context.Background()
	key := createPod(t, client, "web-1", "apps", nil)
	if err := s.schedule(ctx, key); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(ctx, "web-1", metav1.GetOptions{})
	if p.Annotations[CapacityProvisionedAnnotation] != "2vCPU 9GB" || !strings.HasPrefix(p.Spec.NodeName, "fargate-ip-10-0-") {
		t.Fatalf("pod annotations %v node %q", p.Annotations, p.Spec.NodeName)
	}
	n, err := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels[fargate.ComputeTypeLabel] != "fargate" || n.Labels["topology.kubernetes.io/zone"] == "" || len(n.Spec.Taints) != 1 ||
		n.Status.Capacity.Pods().Value() != 1 || !strings.HasPrefix(n.Spec.ProviderID, "aws:///us-east-1") || n.Status.NodeInfo.KubeletVersion != "v1.35.0-eks-fargate" {
		t.Errorf("node %+v", n)
	}
	// A pod Fargate refuses stays Pending with fargate-scheduler's event.
	key = createPod(t, client, "host", "apps", func(s *corev1.PodSpec) { s.HostNetwork = true })
	if err := s.schedule(ctx, key); err != nil {
		t.Fatal(err)
	}
	evs, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
	if len(evs.Items) != 1 || evs.Items[0].Source.Component != SchedulerName || evs.Items[0].Message != "Pod not supported on Fargate: fields not supported: HostNetwork" {
		t.Errorf("events %+v", evs.Items)
	}
}

func TestFargateNull(t *testing.T) {
	cfg := config.Default()
	off := false
	cfg.VPC.EnableDNSHostnames = &off
	s, client := newScheduler(t, cfg, 2)
	ctx := context.Background()
	for _, name := range []string{"one", "two"} {
		if err := s.schedule(ctx, createPod(t, client, name, "apps", nil)); err != nil {
			t.Fatal(err)
		}
	}
	one, _ := client.CoreV1().Pods("apps").Get(ctx, "one", metav1.GetOptions{})
	two, _ := client.CoreV1().Pods("apps").Get(ctx, "two", metav1.GetOptions{})
	if one.Spec.NodeName != "fargate-null" || two.Spec.NodeName != "" {
		t.Errorf("nodes %q and %q, want fargate-null and none", one.Spec.NodeName, two.Spec.NodeName)
	}
}

// TestUniformSubnets checks with a chi-square test (fixed seed) that
// fargate-scheduler spreads pods uniformly at random over the profile's
// subnets, whatever their anti-affinity says.
func TestUniformSubnets(t *testing.T) {
	cfg := config.Default()
	s, client := newScheduler(t, cfg, 42)
	ctx := context.Background()
	const n = 600
	for i := range n {
		key := createPod(t, client, "p"+strconv.Itoa(i), "apps", func(s *corev1.PodSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "topology.kubernetes.io/zone"}}}}
		})
		if err := s.schedule(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	counts := map[string]float64{}
	for _, node := range nodes.Items {
		counts[node.Labels["topology.kubernetes.io/zone"]]++
	}
	chi := 0.0
	for _, az := range cfg.AvailabilityZones {
		d := counts[az] - n/3.0
		chi += d * d / (n / 3.0)
	}
	// 2 degrees of freedom: chi-square > 9.21 happens with probability 1%.
	if len(counts) != 3 || chi > 9.21 {
		t.Errorf("zones %v (chi-square %.2f): not uniform", counts, chi)
	}
}

// TestAddressTaken: a node left by an earlier run at the drawn address makes
// the scheduler draw another, not fail.
func TestAddressTaken(t *testing.T) {
	cfg := config.Default()
	cfg.VPC.Subnets.Private = map[string]config.Subnet{"us-east-1a": {ID: "subnet-private1", CIDR: "10.0.0.0/29"}}
	cfg.AvailabilityZones = []string{"us-east-1a"}
	s, client := newScheduler(t, cfg, 3)
	s.Profiles = func() []fargate.Profile {
		return []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1"}}}
	}
	// A /29 has three usable addresses (.4, .5, .6); take two of them.
	for _, ip := range []string{"10.0.0.4", "10.0.0.5"} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: NodeName(cfg, netip.MustParseAddr(ip))}}
		if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.schedule(context.Background(), createPod(t, client, "p", "apps", nil)); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(context.Background(), "p", metav1.GetOptions{})
	if p.Spec.NodeName != "fargate-ip-10-0-0-6.us-east-1.compute.internal" {
		t.Errorf("node %q, want the one free address", p.Spec.NodeName)
	}
}
