package placement

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/workqueue"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
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
	w := &Webhook{Profiles: func() []fargate.Profile { return profiles }, Logging: func(context.Context) (fargate.Logging, error) { return fargate.LoggingNotFound, nil }}
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
			"add /metadata/annotations map[Logging:LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND eks.amazonaws.com/compute-type:fargate]"}},
		{"alphanumeric first", "web", pod("web", map[string]string{"tier": "front"}, map[string]string{"a": "b"}), "a-web", []string{
			"add /spec/schedulerName fargate-scheduler",
			"add /metadata/labels/eks.amazonaws.com~1fargate-profile a-web",
			"add /metadata/annotations/eks.amazonaws.com~1compute-type fargate",
			"add /metadata/annotations/Logging LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"}},
		{"the pod's label chooses", "web", pod("web", map[string]string{"tier": "front", fargate.ProfileLabel: "b-web"}, nil), "b-web", nil},
		{"compute-type ec2 stays off", "apps", pod("apps", nil, map[string]string{fargate.ComputeTypeAnnotation: "ec2"}), "", nil},
		{"a scheduler of its own stays off", "apps", func() *corev1.Pod {
			p := pod("apps", nil, nil)
			p.Spec.SchedulerName = "volcano"
			return p
		}(), "", nil},
		{"node selection is not looked at", "apps", func() *corev1.Pod {
			p := pod("apps", nil, nil)
			p.Spec.NodeSelector = map[string]string{fargate.ComputeTypeLabel: "ec2"}
			return p
		}(), "apps", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops, profile := w.Mutate(context.Background(), tc.ns, tc.pod)
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

// TestReadLogging: a Fargate pod's logging follows the aws-logging
// ConfigMap, read only from the aws-observability namespace labelled
// aws-observability: enabled, and validated as check's FG051 validates it.
func TestReadLogging(t *testing.T) {
	valid := map[string]string{"output.conf": "[OUTPUT]\n    Name cloudwatch_logs\n    Match *\n"}
	invalid := map[string]string{"output.conf": "[OUTPUT]\n    Name http\n    Match *\n"}
	tests := []struct {
		name    string
		label   string // the namespace's aws-observability label; "-": no namespace
		data    map[string]string
		setting fargate.InvalidLogging
		want    string // the Logging annotation
	}{
		{name: "no namespace", label: "-", want: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"},
		{name: "no ConfigMap", label: "enabled", want: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"},
		{name: "valid", label: "enabled", data: valid, want: "LoggingEnabled"},
		{name: "valid, namespace not labelled", label: "", data: valid, want: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"},
		{name: "invalid", label: "enabled", data: invalid, want: "LoggingDisabled: LOGGING_CONFIGMAP_INVALID"},
		{name: "invalid, enabled by the setting", label: "enabled", data: invalid, setting: fargate.InvalidLoggingEnabled, want: "LoggingEnabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset()
			ctx := context.Background()
			if tt.label != "-" {
				ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fargate.LoggingNamespace, Labels: map[string]string{fargate.LoggingNamespaceLabel: tt.label}}}
				if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.data != nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fargate.LoggingConfigMap, Namespace: fargate.LoggingNamespace}, Data: tt.data}
				if _, err := client.CoreV1().ConfigMaps(fargate.LoggingNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			s := fargate.DefaultSettings()
			if tt.setting != "" {
				s.InvalidLogging = tt.setting
			}
			l, err := ReadLogging(ctx, client, s)
			if err != nil || l.Annotation != tt.want {
				t.Errorf("logging %+v, %v; want annotation %q", l, err, tt.want)
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
	if out.Response == nil || !out.Response.Allowed || out.Response.UID != "u1" || !strings.Contains(string(out.Response.Patch), fargate.SchedulerName) {
		t.Errorf("response %+v", out.Response)
	}
	rec = httptest.NewRecorder()
	w.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, WebhookPath, strings.NewReader("{")))
	if rec.Code != http.StatusBadRequest {
		t.Errorf("garbage: status %d", rec.Code)
	}
}

func TestDecide(t *testing.T) {
	yes := true
	apps := pod("apps", map[string]string{fargate.ProfileLabel: "apps"}, nil)
	refused := apps.DeepCopy()
	refused.Spec.HostNetwork = true
	refused.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: &yes,
		Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"CHOWN", "NET_BIND_SERVICE"}}}
	refused.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 80}}
	refused.Spec.Volumes = []corev1.Volume{{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log"}}}}
	ds := apps.DeepCopy()
	ds.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "agent", Controller: &yes}}
	ds.Spec.HostNetwork = true
	ec2 := apps.DeepCopy()
	ec2.Spec.NodeSelector = map[string]string{fargate.ComputeTypeLabel: "ec2"}
	escalates := apps.DeepCopy()
	escalates.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &yes}
	gone := pod("apps", map[string]string{fargate.ProfileLabel: "deleted"}, nil)
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		settings fargate.Settings
		want     string
	}{
		{"placed", apps, fargate.DefaultSettings(), ""},
		{"refused, every reason once, allowed capabilities left out", refused, fargate.DefaultSettings(),
			"Pod not supported on Fargate: fields not supported: HostNetwork, invalid SecurityContext fields: Privileged, " +
				"invalid SecurityContext fields: Capabilities added: CAP_CHOWN, port contains HostIP or HostPort, " +
				"volumes not supported: logs is of an unsupported volume Type"},
		{"a DaemonSet pod, for that alone", ds, fargate.DefaultSettings(), "Pod not supported on Fargate: DaemonSet pods are not supported"},
		{"node selection that excludes Fargate", ec2, fargate.DefaultSettings(),
			"MatchNodeSelector failed: Fargate profile apps cannot place the pod: node selection excludes Fargate nodes"},
		{"privilege escalation, by default", escalates, fargate.DefaultSettings(), ""},
		{"privilege escalation, refused by the settings", escalates, fargate.Settings{RefusePrivilegeEscalation: true},
			"Pod not supported on Fargate: invalid SecurityContext fields: AllowPrivilegeEscalation"},
		{"capabilities the settings allow", refused, fargate.Settings{AllowedCapabilities: []string{"CHOWN"}},
			"Pod not supported on Fargate: fields not supported: HostNetwork, invalid SecurityContext fields: Privileged, " +
				"invalid SecurityContext fields: Capabilities added: CAP_NET_BIND_SERVICE, port contains HostIP or HostPort, " +
				"volumes not supported: logs is of an unsupported volume Type"},
		{"a profile no longer ACTIVE", gone, fargate.DefaultSettings(), "Pod not supported on Fargate: no ACTIVE Fargate profile deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Decide(tc.pod, profiles, tc.settings)
			if d.Event != tc.want {
				t.Errorf("event\n  %q\nwant\n  %q", d.Event, tc.want)
			}
			if tc.want == "" && (d.Profile == nil || d.Profile.Name != "apps") {
				t.Errorf("profile %+v, want apps", d.Profile)
			}
		})
	}
}

// newScheduler returns a scheduler on a fake clientset that implements binding.
func newScheduler(t *testing.T, cfg *clusterconfig.Config, seed uint64) (*Scheduler, *fake.Clientset) {
	t.Helper()
	client := fake.NewClientset()
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "binding" {
			return false, nil, nil
		}
		b := a.(k8stesting.CreateAction).GetObject().(*corev1.Binding)
		obj, err := client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), b.Namespace, b.Name)
		if err != nil {
			return true, nil, err
		}
		p := obj.(*corev1.Pod)
		p.Spec.NodeName = b.Target.Name
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		maps.Copy(p.Annotations, b.Annotations) // as the API server merges them
		return true, b, client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, b.Namespace)
	})
	s := &Scheduler{Client: client, Config: cfg, Settings: fargate.DefaultSettings(), Profiles: func() []fargate.Profile { return profiles }, Rand: rand.New(rand.NewPCG(seed, seed))}
	return s, client
}

func createPod(t *testing.T, client *fake.Clientset, name, ns string, spec func(*corev1.PodSpec)) types.NamespacedName {
	t.Helper()
	p := pod(ns, map[string]string{fargate.ProfileLabel: "apps"}, nil)
	p.Name = name
	p.Spec.SchedulerName = fargate.SchedulerName
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
	cfg := clusterconfig.Default()
	cfg.Timings.FargatePodStart.Duration = 0
	s, client := newScheduler(t, cfg, 1)
	ctx := context.Background()
	key := createPod(t, client, "web-1", "apps", nil)
	if err := s.schedule(ctx, key); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(ctx, "web-1", metav1.GetOptions{})
	if p.Annotations[fargate.CapacityProvisionedAnnotation] != "2vCPU 9GB" || !strings.HasPrefix(p.Spec.NodeName, "fargate-ip-10-0-") {
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
	want := []string{"fargate-scheduler Warning FailedScheduling: Pod not supported on Fargate: fields not supported: HostNetwork"}
	if diff := cmp.Diff(want, eventsOf(t, client, "apps", "host")); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// A pod being deleted (a finalizer holds it) gets no node: it is not
	// placed, and not retried.
	key = createPod(t, client, "going", "apps", nil)
	going, _ := client.CoreV1().Pods("apps").Get(ctx, "going", metav1.GetOptions{})
	going.DeletionTimestamp, going.Finalizers = &metav1.Time{Time: time.Now()}, []string{"example.com/hold"}
	if err := client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), going, "apps"); err != nil {
		t.Fatal(err)
	}
	nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err := s.schedule(ctx, key); err != nil {
		t.Errorf("scheduling a pod being deleted: %v, want nothing done", err)
	}
	if after, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); len(after.Items) != len(nodes.Items) {
		t.Errorf("a pod being deleted got a node: %d nodes, were %d", len(after.Items), len(nodes.Items))
	}
}

// TestBindOnceReady: while the scheduler runs, a pod is bound to its node
// only once the node is Ready (as KWOK makes it once it manages the node);
// meanwhile the scheduler goes on with the next pods.
func TestBindOnceReady(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.Timings.FargatePodStart.Duration = 0
	s, client := newScheduler(t, cfg, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	s.nodes = watchNodes(ctx, client)
	keys := []types.NamespacedName{createPod(t, client, "web-1", "apps", nil), createPod(t, client, "web-2", "apps", nil)}
	for _, key := range keys {
		if err := s.schedule(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) != 2 {
		t.Fatalf("%d nodes (%v), want one per pod", len(nodes.Items), err)
	}
	// Time enough to bind, were it not waiting: the check fails as soon as a
	// pod is bound.
	for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, key := range keys {
			if p, _ := client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{}); p.Spec.NodeName != "" {
				t.Fatalf("%s bound to %s before its node is Ready", key.Name, p.Spec.NodeName)
			}
		}
	}
	for _, n := range nodes.Items {
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, &n, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range keys {
		deadline := time.Now().Add(10 * time.Second)
		for {
			p, _ := client.CoreV1().Pods(key.Namespace).Get(ctx, key.Name, metav1.GetOptions{})
			if p.Spec.NodeName != "" && p.Annotations[fargate.CapacityProvisionedAnnotation] == "2vCPU 9GB" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s not bound 10 s after its node is Ready: node %q, annotations %v", key.Name, p.Spec.NodeName, p.Annotations)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestFargateNull(t *testing.T) {
	cfg := clusterconfig.Default()
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
	cfg := clusterconfig.Default()
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

// TestZoneSelector: with honourZoneSelector, a pod's zone node selector
// chooses the subnet, and a zone the profile has no subnet in leaves the pod
// Pending with an event; without it, the selector is ignored like affinity.
func TestZoneSelector(t *testing.T) {
	ctx := context.Background()
	for _, honour := range []bool{true, false} {
		s, client := newScheduler(t, clusterconfig.Default(), 5)
		s.Settings.HonourZoneSelector = honour
		zones := map[string]int{}
		for i := range 30 {
			key := createPod(t, client, "p"+strconv.Itoa(i), "apps", func(s *corev1.PodSpec) {
				s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1b"}
			})
			if err := s.schedule(ctx, key); err != nil {
				t.Fatal(err)
			}
			p, _ := client.CoreV1().Pods("apps").Get(ctx, key.Name, metav1.GetOptions{})
			n, _ := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			zones[n.Labels[corev1.LabelTopologyZone]]++
		}
		if honour && zones["us-east-1b"] != 30 {
			t.Errorf("honouring the zone selector: %v, want all 30 in us-east-1b", zones)
		}
		if !honour && len(zones) != 3 {
			t.Errorf("ignoring the zone selector: %v, want all three AZs", zones)
		}
	}
	s, client := newScheduler(t, clusterconfig.Default(), 5)
	s.Settings.HonourZoneSelector = true
	key := createPod(t, client, "elsewhere", "apps", func(s *corev1.PodSpec) {
		s.NodeSelector = map[string]string{corev1.LabelTopologyZone: "us-east-1f"}
	})
	if err := s.schedule(ctx, key); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(ctx, key.Name, metav1.GetOptions{})
	events, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
	if p.Spec.NodeName != "" || len(events.Items) != 1 || !strings.Contains(events.Items[0].Message, "requested availability zone: us-east-1f") {
		t.Errorf("a zone without a subnet of the profile: node %q, events %v", p.Spec.NodeName, events.Items)
	}
}

// TestAddressTaken: a node the scheduler did not know of, at the drawn
// address, makes it draw another, not fail.
func TestAddressTaken(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.VPC.Subnets.Private = map[string]clusterconfig.Subnet{"us-east-1a": {ID: "subnet-private1", CIDR: "10.0.0.0/28"}}
	cfg.AvailabilityZones = []string{"us-east-1a"}
	s, client := newScheduler(t, cfg, 3)
	s.Profiles = func() []fargate.Profile {
		return []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1"}}}
	}
	// A /28 has eleven usable addresses (.4 to .14); take all but .9.
	for i := 4; i <= 14; i++ {
		if i == 9 {
			continue
		}
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fargate.NodeName(cfg.Metadata.Region, netip.MustParseAddr("10.0.0."+strconv.Itoa(i)), true)}}
		if _, err := client.CoreV1().Nodes().Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.schedule(context.Background(), createPod(t, client, "p", "apps", nil)); err != nil {
		t.Fatal(err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(context.Background(), "p", metav1.GetOptions{})
	if p.Spec.NodeName != "fargate-ip-10-0-0-9.ec2.internal" {
		t.Errorf("node %q, want the one free address", p.Spec.NodeName)
	}
}

// eventsOf lists the events about a pod as "source type reason: message",
// in the order they were recorded.
func eventsOf(t *testing.T, client *fake.Clientset, ns, pod string) []string {
	t.Helper()
	evs, err := client.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(evs.Items, func(a, b corev1.Event) int { return strings.Compare(a.Name, b.Name) }) // as recorded
	var out []string
	for _, e := range evs.Items {
		if e.InvolvedObject.Name == pod {
			out = append(out, e.Source.Component+" "+e.Type+" "+e.Reason+": "+e.Message)
		}
	}
	return out
}

// TestSubnetCapacity: every Fargate pod takes an address of the subnet
// drawn; a pod is drawn only among the subnets with a free address; when
// none has one it waits with an event, and is placed once a pod's node goes.
func TestSubnetCapacity(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.VPC.Subnets.Private["us-east-1a"] = clusterconfig.Subnet{ID: "subnet-private1", CIDR: "10.0.1.0/28"}
	cfg.VPC.Subnets.Private["us-east-1b"] = clusterconfig.Subnet{ID: "subnet-private2", CIDR: "10.0.2.0/28"}
	cfg.FargateScheduler.AddressReleaseDelay = &clusterconfig.Duration{} // at once (TestReleaseDelay)
	s, client := newScheduler(t, cfg, 11)
	s.Profiles = func() []fargate.Profile {
		return []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1", "subnet-private2"}}}
	}
	queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
	defer queue.ShutDown()
	s.queue = queue
	ctx := context.Background()
	// Two /28s: 22 addresses, all taken whatever the draws.
	seen := map[string]bool{}
	for i := range 22 {
		key := createPod(t, client, "p"+strconv.Itoa(i), "apps", nil)
		if err := s.schedule(ctx, key); err != nil {
			t.Fatal(err)
		}
		p, _ := client.CoreV1().Pods("apps").Get(ctx, key.Name, metav1.GetOptions{})
		n, err := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %d: %v (events %v)", i, err, eventsOf(t, client, "apps", key.Name))
		}
		ip, _ := nodeAddress(n)
		subnet := map[string]string{"us-east-1a": "10.0.1.0/28", "us-east-1b": "10.0.2.0/28"}[n.Labels[corev1.LabelTopologyZone]]
		if !netip.MustParsePrefix(subnet).Contains(ip) || seen[ip.String()] {
			t.Errorf("pod %d: address %s, outside %s or given twice", i, ip, subnet)
		}
		seen[ip.String()] = true
	}
	for _, id := range []string{"subnet-private1", "subnet-private2"} {
		if n, _ := s.Addresses.Free(id); n != 0 {
			t.Errorf("%s: %d addresses free, want none", id, n)
		}
	}
	waiting := createPod(t, client, "waiting", "apps", nil)
	if err := s.schedule(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	want := []string{"fargate-scheduler Warning FailedScheduling: InsufficientFreeAddressesInSubnet: no free IP address for the pod's network interface in subnets subnet-private1, subnet-private2"}
	if diff := cmp.Diff(want, eventsOf(t, client, "apps", "waiting")); diff != "" {
		t.Errorf("events of the waiting pod (-want +got):\n%s", diff)
	}
	// Another waits behind it, and is tried again with no new event.
	behind := createPod(t, client, "behind", "apps", nil)
	for range 2 {
		if err := s.schedule(ctx, behind); err != nil {
			t.Fatal(err)
		}
	}
	if evs := eventsOf(t, client, "apps", "behind"); len(evs) != 1 {
		t.Errorf("events of the pod behind: %v, want one, counted", evs)
	}
	// A pod goes: its node's address frees, and the first waiting pod, only
	// it, is queued.
	gone, _ := client.CoreV1().Pods("apps").Get(ctx, "p3", metav1.GetOptions{})
	if node := s.gone(types.NamespacedName{Namespace: "apps", Name: "p3"}); node != gone.Spec.NodeName {
		t.Fatalf("p3's node: %q, want %q", node, gone.Spec.NodeName)
	}
	s.releaseNode(ctx, gone.Spec.NodeName)
	if queue.Len() != 1 {
		t.Fatalf("%d pods queued after an address freed, want the first waiting one", queue.Len())
	}
	key, _ := queue.Get()
	if err := s.schedule(ctx, key); err != nil || key != waiting {
		t.Fatalf("scheduling %v: %v", key, err)
	}
	p, _ := client.CoreV1().Pods("apps").Get(ctx, "waiting", metav1.GetOptions{})
	if want := gone.Spec.NodeName; p.Spec.NodeName != want {
		t.Errorf("the waiting pod is on %q, want %q, the one free address", p.Spec.NodeName, want)
	}
}

// TestReleaseDelay: a gone pod's address stays taken for the delay.
func TestReleaseDelay(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.FargateScheduler.AddressReleaseDelay = &clusterconfig.Duration{Duration: time.Hour}
	s, client := newScheduler(t, cfg, 1)
	ctx := context.Background()
	if err := s.schedule(ctx, createPod(t, client, "web", "apps", nil)); err != nil {
		t.Fatal(err)
	}
	free := func() (n int) {
		for _, id := range cfg.PrivateSubnetIDs() {
			f, _ := s.Addresses.Free(id)
			n += f
		}
		return n
	}
	before := free()
	s.releaseNode(ctx, s.gone(types.NamespacedName{Namespace: "apps", Name: "web"}))
	nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if len(nodes.Items) != 0 || free() != before {
		t.Errorf("%d nodes left, %d addresses free (%d before): want the node gone and its address still taken", len(nodes.Items), free(), before)
	}
}

// TestUnboundNodeReleased: a pod whose binding fails (deleted while its
// node started) leaves no node and no address behind.
func TestUnboundNodeReleased(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.FargateScheduler.AddressReleaseDelay = &clusterconfig.Duration{}
	s, client := newScheduler(t, cfg, 1)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "binding" {
			return true, nil, errors.New("pods \"web\" not found")
		}
		return false, nil, nil
	})
	ctx := context.Background()
	if err := s.schedule(ctx, createPod(t, client, "web", "apps", nil)); err == nil {
		t.Fatal("the binding failed, and schedule says nothing")
	}
	nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for _, id := range cfg.PrivateSubnetIDs() {
		if n, _ := s.Addresses.Free(id); n != 8187 || len(nodes.Items) != 0 {
			t.Errorf("%s: %d addresses free, %d nodes; want all free and none", id, n, len(nodes.Items))
		}
	}
}

// TestStart: a Fargate node of an earlier run keeps its address while its
// pod is there; one whose pod went while the emulator was down is deleted.
func TestStart(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.FargateScheduler.AddressReleaseDelay = &clusterconfig.Duration{}
	s, client := newScheduler(t, cfg, 1)
	ctx := context.Background()
	for _, name := range []string{"kept", "gone"} {
		if err := s.schedule(ctx, createPod(t, client, name, "apps", nil)); err != nil {
			t.Fatal(err)
		}
	}
	gone, _ := client.CoreV1().Pods("apps").Get(ctx, "gone", metav1.GetOptions{})
	if err := client.CoreV1().Pods("apps").Delete(ctx, "gone", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	kept, _ := client.CoreV1().Pods("apps").Get(ctx, "kept", metav1.GetOptions{})
	again := &Scheduler{Client: client, Config: cfg, Settings: s.Settings, Profiles: s.Profiles, Rand: s.Rand}
	if err := again.Start(ctx); err != nil {
		t.Fatal(err)
	}
	nodes, _ := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	if diff := cmp.Diff([]string{kept.Spec.NodeName}, names); diff != "" || gone.Spec.NodeName == kept.Spec.NodeName {
		t.Errorf("nodes after the start (-want +got):\n%s", diff)
	}
	taken := 0
	for _, id := range cfg.PrivateSubnetIDs() {
		n, _ := again.Addresses.Free(id)
		taken += 8187 - n
	}
	if taken != 1 {
		t.Errorf("%d addresses taken, want the kept pod's", taken)
	}
}

// TestEvents: a placed pod gets, from fargate-scheduler, its logging event
// (as its annotations, written by the webhook when the pod was created,
// say) and then Scheduled, as on EKS.
func TestEvents(t *testing.T) {
	tests := []struct {
		name        string
		annotations map[string]string
		want        string // the logging event; "" for none
	}{
		{name: "enabled", annotations: map[string]string{fargate.LoggingAnnotation: "LoggingEnabled"},
			want: "Normal LoggingEnabled: Successfully enabled logging for pod"},
		{name: "not found", annotations: map[string]string{fargate.LoggingAnnotation: "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND"},
			want: `Warning LoggingDisabled: Disabled logging because aws-logging configmap was not found. configmap "aws-logging" not found`},
		{name: "invalid", annotations: map[string]string{fargate.LoggingAnnotation: "LoggingDisabled: LOGGING_CONFIGMAP_INVALID",
			LoggingProblemAnnotation: `output.conf: output "http" at line 1 is not supported on Fargate`},
			want: `Warning LoggingDisabled: Disabled logging for pod due to invalid configmap. output.conf: output "http" at line 1 is not supported on Fargate. Please fix the logging configmap`},
		{name: "invalid, the problem not recorded", annotations: map[string]string{fargate.LoggingAnnotation: "LoggingDisabled: LOGGING_CONFIGMAP_INVALID"},
			want: "Warning LoggingDisabled: Disabled logging for pod due to invalid configmap. Please fix the logging configmap"},
		{name: "no annotation (created before the emulator recorded logging)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, client := newScheduler(t, clusterconfig.Default(), uint64(i))
			key := createPod(t, client, "web", "apps", nil)
			p, _ := client.CoreV1().Pods("apps").Get(context.Background(), "web", metav1.GetOptions{})
			p.Annotations = tt.annotations
			if _, err := client.CoreV1().Pods("apps").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := s.schedule(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			p, _ = client.CoreV1().Pods("apps").Get(context.Background(), "web", metav1.GetOptions{})
			var want []string
			if tt.want != "" {
				want = append(want, "fargate-scheduler "+tt.want)
			}
			want = append(want, "fargate-scheduler Normal Scheduled: Successfully assigned apps/web to "+p.Spec.NodeName)
			if diff := cmp.Diff(want, eventsOf(t, client, "apps", "web")); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEventsApart: the logging event is recorded as the pod's Fargate node
// starts, Scheduled once it runs, timings.fargatePodStart later.
func TestEventsApart(t *testing.T) {
	cfg := clusterconfig.Default()
	cfg.Timings.FargatePodStart.Duration = 1100 * time.Millisecond
	s, client := newScheduler(t, cfg, 1)
	key := createPod(t, client, "web", "apps", nil)
	p, _ := client.CoreV1().Pods("apps").Get(context.Background(), "web", metav1.GetOptions{})
	p.Annotations = map[string]string{fargate.LoggingAnnotation: "LoggingEnabled"}
	if _, err := client.CoreV1().Pods("apps").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.schedule(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	evs, _ := client.CoreV1().Events("apps").List(context.Background(), metav1.ListOptions{})
	at := map[string]time.Time{}
	for _, e := range evs.Items {
		at[e.Reason] = e.FirstTimestamp.Time
	}
	if gap := at["Scheduled"].Sub(at["LoggingEnabled"]); len(at) != 2 || gap < time.Second {
		t.Errorf("events %v: Scheduled %s after LoggingEnabled, want the node's start time", at, gap)
	}
}

// TestBalancedSubnets: with the balanced AZ choice, the replicas of one
// owner fill the AZ that holds the fewest of them, so 30 replicas land 10 in
// each of three AZs; another owner's pods do not count.
func TestBalancedSubnets(t *testing.T) {
	// Placed at once, or, the scheduler running, with nodes that are still
	// starting: those count too.
	for _, starting := range []bool{false, true} {
		t.Run(fmt.Sprintf("starting=%v", starting), func(t *testing.T) {
			cfg := clusterconfig.Default()
			s, client := newScheduler(t, cfg, 7)
			s.Settings.AZChoice = fargate.AZBalanced
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			if starting {
				s.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
				s.nodes = watchNodes(ctx, client) // no node gets Ready
			}
			yes := true
			for _, o := range []struct { // another owner's pods first: they must not count
				owner string
				n     int
			}{{"rs-b", 2}, {"rs-a", 30}} {
				owner, n := o.owner, o.n
				for i := range n {
					key := createPod(t, client, owner+"-"+strconv.Itoa(i), "apps", func(*corev1.PodSpec) {})
					p, _ := client.CoreV1().Pods("apps").Get(ctx, key.Name, metav1.GetOptions{})
					p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: owner, UID: types.UID(owner), Controller: &yes}}
					if _, err := client.CoreV1().Pods("apps").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
						t.Fatal(err)
					}
					if err := s.schedule(ctx, key); err != nil {
						t.Fatal(err)
					}
				}
			}
			counts := map[string]int{}
			for i := range 30 {
				counts[s.zone(s.nodeOf(types.NamespacedName{Namespace: "apps", Name: "rs-a-" + strconv.Itoa(i)}))]++
			}
			if diff := cmp.Diff(map[string]int{"us-east-1a": 10, "us-east-1b": 10, "us-east-1c": 10}, counts); diff != "" {
				t.Errorf("replicas per AZ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImagePull: a pod whose image does not pull from its subnet (no NAT
// route) or with its profile's role (no policy, an ECR image) is bound and
// marked for KWOK's stages, with the kubelet's events; the others are not.
func TestImagePull(t *testing.T) {
	const (
		ecr     = "111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/web:1.2"
		noRoute = `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/%[1]s": failed to resolve reference "docker.io/library/%[1]s": failed to do request: Head "https://registry-1.docker.io/v2/library/%[2]s/manifests/%[3]s": dial tcp: i/o timeout`
		denied  = `rpc error: code = Unknown desc = failed to pull and unpack image "` + ecr + `": failed to resolve reference "` + ecr + `": unexpected status from HEAD request to https://111122223333.dkr.ecr.us-east-1.amazonaws.com/v2/shop/web/manifests/1.2: 401 Unauthorized`
	)
	cfg := clusterconfig.Default()
	cfg.Timings.FargatePodStart.Duration = 0
	off := false
	s3 := cfg.VPC.Subnets.Private["us-east-1c"]
	s3.NAT = &off
	cfg.VPC.Subnets.Private["us-east-1c"] = s3
	cfg.IAM.Roles = []clusterconfig.Role{{Name: "bare"}}
	tests := []struct {
		name, subnet, role string
		init, image        string
		// failing is the container whose image does not pull, with the
		// error; "" when the pod's images pull.
		failing, err string
	}{
		{name: "NAT", subnet: "subnet-private1", image: "nginx:1.27"},
		{name: "no NAT", subnet: "subnet-private3", image: "nginx:1.27", failing: "app", err: fmt.Sprintf(noRoute, "nginx:1.27", "nginx", "1.27")},
		{name: "no NAT, an init container first", subnet: "subnet-private3", init: "busybox", image: "nginx",
			failing: "init", err: fmt.Sprintf(noRoute, "busybox:latest", "busybox", "latest")},
		{name: "ECR with the policy", subnet: "subnet-private1", image: ecr},
		{name: "ECR without a policy", subnet: "subnet-private1", role: "bare", image: ecr, failing: "app", err: denied},
		{name: "Docker Hub without a policy", subnet: "subnet-private1", role: "bare", image: "nginx"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, client := newScheduler(t, cfg, uint64(i))
			s.Foundation = cfg.Foundation()
			role := cfg.RoleARN(clusterconfig.DefaultPodExecutionRole)
			if tt.role != "" {
				role = cfg.RoleARN(tt.role)
			}
			s.Profiles = func() []fargate.Profile {
				return []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{tt.subnet}, PodExecutionRoleARN: role}}
			}
			ctx := context.Background()
			key := createPod(t, client, "web", "apps", func(s *corev1.PodSpec) {
				s.Containers[0].Name, s.Containers[0].Image = "app", tt.image
				if tt.init != "" {
					s.InitContainers = []corev1.Container{{Name: "init", Image: tt.init}}
				}
			})
			if err := s.schedule(ctx, key); err != nil {
				t.Fatal(err)
			}
			p, _ := client.CoreV1().Pods("apps").Get(ctx, "web", metav1.GetOptions{})
			if p.Spec.NodeName == "" {
				t.Fatal("the pod is not bound")
			}
			got := map[string]string{}
			for _, k := range []string{ImagePullContainerAnnotation, ImagePullErrorAnnotation} {
				if v, ok := p.Annotations[k]; ok {
					got[k] = v
				}
			}
			var want map[string]string
			var events []string
			if tt.failing != "" {
				want = map[string]string{ImagePullContainerAnnotation: tt.failing, ImagePullErrorAnnotation: tt.err}
				image := tt.image
				if tt.init != "" {
					image = tt.init
				}
				events = []string{"Normal Pulling: Pulling image \"" + image + "\"", "Warning Failed: Failed to pull image \"" + image + "\": " + tt.err,
					"Warning Failed: Error: ErrImagePull", "Normal BackOff: Back-off pulling image \"" + image + "\"", "Warning Failed: Error: ImagePullBackOff"}
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			evs, _ := client.CoreV1().Events("apps").List(ctx, metav1.ListOptions{})
			var recorded []string
			for _, e := range evs.Items {
				if e.Source.Component == fargate.SchedulerName {
					continue // TestEvents
				}
				if e.Source.Component != "kubelet" || e.Source.Host != p.Spec.NodeName {
					t.Errorf("event %s from %+v", e.Reason, e.Source)
				}
				recorded = append(recorded, e.Type+" "+e.Reason+": "+e.Message)
			}
			if diff := cmp.Diff(events, recorded, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAZOutage: while us-east-1a is down no pod starts there; with the
// redraw model pods are drawn among the other AZs, with fail a pod drawn
// into us-east-1a waits with an event; a profile only in us-east-1a waits;
// once the AZ is up, RetryZone queues the waiting pods, which start there.
func TestAZOutage(t *testing.T) {
	ctx := context.Background()
	for _, model := range []fargate.AZOutage{fargate.AZOutageRedraw, fargate.AZOutageFail} {
		s, client := newScheduler(t, clusterconfig.Default(), 3)
		s.Settings.AZOutage = model
		down := true
		s.Down = func(az string) bool { return down && az == "us-east-1a" }
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[types.NamespacedName]())
		s.queue = queue
		zones, waiting := map[string]int{}, 0
		for i := range 30 {
			key := createPod(t, client, "p"+strconv.Itoa(i), "apps", nil)
			if err := s.schedule(ctx, key); err != nil {
				t.Fatal(err)
			}
			p, _ := client.CoreV1().Pods("apps").Get(ctx, key.Name, metav1.GetOptions{})
			if p.Spec.NodeName == "" {
				waiting++
				want := []string{"fargate-scheduler Warning FailedScheduling: Fargate could not start the pod: availability zone us-east-1a is unavailable"}
				if diff := cmp.Diff(want, eventsOf(t, client, "apps", key.Name)); diff != "" {
					t.Errorf("%s: events of a waiting pod (-want +got):\n%s", model, diff)
				}
				continue
			}
			n, _ := client.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			zones[n.Labels[corev1.LabelTopologyZone]]++
		}
		if zones["us-east-1a"] != 0 || zones["us-east-1b"] == 0 || zones["us-east-1c"] == 0 {
			t.Errorf("%s: pods started in %v, want none in us-east-1a, some in the others", model, zones)
		}
		if (model == fargate.AZOutageRedraw) != (waiting == 0) {
			t.Errorf("%s: %d pods wait, want none with redraw and some (those drawn into us-east-1a) with fail", model, waiting)
		}
		// A profile only in us-east-1a: its pod waits, under either model.
		s.Profiles = func() []fargate.Profile {
			return []fargate.Profile{{Name: "apps", Selectors: []fargate.Selector{{Namespace: "apps"}}, Subnets: []string{"subnet-private1"}}}
		}
		pinned := createPod(t, client, "pinned", "apps", nil)
		if err := s.schedule(ctx, pinned); err != nil {
			t.Fatal(err)
		}
		if p, _ := client.CoreV1().Pods("apps").Get(ctx, "pinned", metav1.GetOptions{}); p.Spec.NodeName != "" {
			t.Errorf("%s: a pod of a profile only in us-east-1a started on %s", model, p.Spec.NodeName)
		}
		// Up again: every waiting pod is queued, and starts.
		down = false
		s.RetryZone("us-east-1a")
		if queue.Len() != waiting+1 {
			t.Errorf("%s: %d pods queued once us-east-1a is up, want %d", model, queue.Len(), waiting+1)
		}
		for queue.Len() > 0 {
			key, _ := queue.Get()
			if err := s.schedule(ctx, key); err != nil {
				t.Fatal(err)
			}
			queue.Done(key)
		}
		if p, _ := client.CoreV1().Pods("apps").Get(ctx, "pinned", metav1.GetOptions{}); p.Spec.NodeName == "" {
			t.Errorf("%s: the pod of us-east-1a's profile does not start once the AZ is up", model)
		}
		queue.ShutDown()
	}
}
