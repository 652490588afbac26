package live_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// workloadSummary is a workload as a ref and the names of its pods.
type workloadSummary struct {
	Ref  object.Ref
	Pods []string
}

func summarize(ws []*live.Workload) []workloadSummary {
	var out []workloadSummary
	for _, w := range ws {
		s := workloadSummary{Ref: w.Object.Ref}
		for _, p := range w.Pods {
			s.Pods = append(s.Pods, p.Name)
		}
		slices.Sort(s.Pods) // the order of a workload's pods is not specified
		out = append(out, s)
	}
	return out
}

func TestWorkloads(t *testing.T) {
	dep, rs := web()
	idle := deployment("shop", "idle", template(map[string]string{"app": "idle"}))
	cj := cronJob("shop", "nightly")
	jb := job("shop", "nightly-29000", cj)
	sts := statefulSet("data", "db")
	ds := daemonSet("shop", "agent")
	orphanRS := replicaSet("shop", "legacy-1", nil)
	gone := deployment("shop", "gone", template(nil)) // owns a pod, but not in the snapshot
	s := snap(nil, nil, []corev1.Pod{
		webPod(rs, "web-2"),
		pod("shop", "nightly-29000-x", ownedBy(jb)),
		webPod(rs, "web-1"),
		pod("data", "db-0", ownedBy(sts)),
		pod("shop", "agent-q", ownedBy(ds)),
		pod("shop", "legacy-1-a", ownedBy(orphanRS)),
		pod("shop", "stray", ownedBy(gone)),
		pod("default", "debug"),
	}, rs, cj, dep, jb, idle, sts, ds, orphanRS)
	got := summarize(s.Workloads())
	want := []workloadSummary{
		{ref("StatefulSet", "data", "db"), []string{"db-0"}},
		{ref("Pod", "default", "debug"), []string{"debug"}},
		{ref("CronJob", "shop", "nightly"), []string{"nightly-29000-x"}},
		{ref("DaemonSet", "shop", "agent"), []string{"agent-q"}},
		{ref("Deployment", "shop", "idle"), nil},
		{ref("Deployment", "shop", "web"), []string{"web-1", "web-2"}},
		{ref("Pod", "shop", "stray"), []string{"stray"}},
		{ref("ReplicaSet", "shop", "legacy-1"), []string{"legacy-1-a"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Workloads() (-want +got):\n%s", diff)
	}
	// A workload holds the snapshot's own pods, which Workloads leaves as read.
	own := map[*corev1.Pod]bool{}
	for i := range s.Pods {
		own[&s.Pods[i]] = true
	}
	for _, w := range s.Workloads() {
		for _, p := range w.Pods {
			if !own[p] {
				t.Errorf("workload %s: pod %s is a copy, not the snapshot's pod", w.Object.Ref, p.Name)
			}
		}
	}
	for i := range s.Pods {
		if s.Pods[i].Kind != "" || s.Pods[i].APIVersion != "" {
			t.Errorf("pod %s: Workloads set its type meta to %s %s", s.Pods[i].Name, s.Pods[i].APIVersion, s.Pods[i].Kind)
		}
	}
}

func TestWorkloadsOwnerCycle(t *testing.T) {
	// Bad data: two ReplicaSets naming each other as controller. Workloads
	// must end, and still place the pod under one of them.
	a := replicaSet("shop", "a", nil)
	b := replicaSet("shop", "b", a)
	a.Typed.(*appsv1.ReplicaSet).OwnerReferences = []metav1.OwnerReference{controllerRef(b)}
	s := snap(nil, nil, []corev1.Pod{pod("shop", "p", ownedBy(a))}, a, b)
	done := make(chan []*live.Workload)
	go func() { done <- s.Workloads() }()
	select {
	case ws := <-done:
		n := 0
		for _, w := range ws {
			n += len(w.Pods)
			if w.Object.Ref.Kind == "Pod" {
				t.Errorf("pod p became its own workload although its owner is known")
			}
		}
		if n != 1 {
			t.Errorf("got %d pods in workloads, want 1: %v", n, summarize(ws))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Workloads did not return on an owner cycle")
	}
}

func TestActiveProfiles(t *testing.T) {
	s := &live.Snapshot{}
	if got := s.ActiveProfiles(); got != nil {
		t.Errorf("profiles unknown: ActiveProfiles() = %v, want nil", got)
	}
	s.Profiles = []fargate.Profile{profile("gone", fargate.StatusDeleting, "a")}
	if got := s.ActiveProfiles(); got == nil || len(got) != 0 {
		t.Errorf("none ACTIVE: ActiveProfiles() = %#v, want an empty non-nil list", got)
	}
	s.Profiles = append(s.Profiles, active("b", "b"), profile("c", fargate.StatusCreating, "c"), active("a", "a"))
	var names []string
	for _, p := range s.ActiveProfiles() {
		names = append(names, p.Name)
	}
	if diff := cmp.Diff([]string{"b", "a"}, names); diff != "" {
		t.Errorf("ActiveProfiles() (-want +got):\n%s", diff)
	}
}

func TestIsFargateNode(t *testing.T) {
	for _, tc := range []struct {
		n    corev1.Node
		want bool
	}{
		{node(fgA, "us-east-1a", true, "v1.34.0-eks-fargate"), true},
		{ec2Node(), false},
		// The name alone does not make a Fargate node: the label does.
		{node("fargate-ip-10-0-1-1.ec2.internal", "us-east-1a", false, "v1.34.0"), false},
	} {
		if got := live.IsFargateNode(&tc.n); got != tc.want {
			t.Errorf("IsFargateNode(%s, labels %v) = %v, want %v", tc.n.Name, tc.n.Labels, got, tc.want)
		}
	}
}

// TestAnalyzeStates checks the counts of Result and WorkloadState.
func TestAnalyzeStates(t *testing.T) {
	dep, rs := web()
	ds := daemonSet("shop", "agent")
	s := snap([]fargate.Profile{active("shop", "shop")}, append(fgNodes(), ec2Node()), []corev1.Pod{
		webPod(rs, "web-1", onFargate(fgA, "shop")),
		webPod(rs, "web-2", onFargate(fgA2, "shop")),
		webPod(rs, "web-3", onFargate(fgB, "shop")),
		webPod(rs, "web-4", onNode(ec2A)),
		webPod(rs, "web-5", pendingWith(fargate.SchedulerName)),
		webPod(rs, "web-6", onFargate(fgC, "shop"), phase(corev1.PodSucceeded)),           // finished: not counted
		webPod(rs, "web-7", onFargate(fgC, "shop"), deleted(now.Add(10*time.Second), 30)), // being deleted: not counted
		webPod(rs, "web-8", onFargate("fargate-ip-10-0-9-9.ec2.internal", "shop")),        // node gone: Fargate by name, AZ unknown
		pod("shop", "agent-1", ownedBy(ds), onNode(ec2A)),
	}, dep, rs, ds)
	res := live.Analyze(s, live.Options{})
	if res.FargateNodes != 4 || res.EC2Nodes != 1 {
		t.Errorf("nodes: %d Fargate, %d EC2; want 4, 1", res.FargateNodes, res.EC2Nodes)
	}
	if diff := cmp.Diff(map[string]int{"us-east-1a": 2, "us-east-1b": 1}, res.PodsPerAZ); diff != "" {
		t.Errorf("Result.PodsPerAZ (-want +got):\n%s", diff)
	}
	type state struct {
		Ref                   object.Ref
		Fargate, EC2, Pending int
		PodsPerAZ             map[string]int
	}
	var got []state
	for _, w := range res.Workloads {
		got = append(got, state{w.Workload.Object.Ref, w.Fargate, w.EC2, w.Pending, w.PodsPerAZ})
	}
	want := []state{
		{ref("DaemonSet", "shop", "agent"), 0, 1, 0, map[string]int{}},
		{ref("Deployment", "shop", "web"), 4, 1, 1, map[string]int{"us-east-1a": 2, "us-east-1b": 1}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Workloads (-want +got):\n%s", diff)
	}
}

// TestHealthyCluster is the near miss of every rule at once.
func TestHealthyCluster(t *testing.T) {
	dep, rs := web()
	ds := daemonSet("kube-system", "aws-node")
	fit := annotated(fargate.CapacityProvisionedAnnotation, "0.25vCPU 0.5GB")
	s := snap([]fargate.Profile{active("shop", "shop"), profile("old", fargate.StatusDeleting, "legacy")},
		[]corev1.Node{
			node(fgA, "us-east-1a", true, "v1.34.0-eks-fargate"),
			node(fgB, "us-east-1b", true, "v1.34.0-eks-fargate"),
			node(fgC, "us-east-1c", true, "v1.34.0-eks-fargate"),
			node(ec2A, "us-east-1a", false, "v1.34.2-eks-1234567", eks.NodegroupLabel, "workers"),
		}, []corev1.Pod{
			webPod(rs, "web-1", onFargate(fgA, "shop"), fit),
			webPod(rs, "web-2", onFargate(fgB, "shop"), fit),
			webPod(rs, "web-3", onFargate(fgC, "shop"), fit),
			webPod(rs, "web-4", pendingWith(fargate.SchedulerName)), // just created: no event yet
			webPod(rs, "web-0", onFargate(fgA, "shop"), deleted(now.Add(-time.Minute), 30)),
			pod("kube-system", "aws-node-1", ownedBy(ds), onNode(ec2A)),
			pod("other", "batch-1", onNode(ec2A)), // no profile matches: EC2 by design
		}, dep, rs, ds)
	if fs := live.Analyze(s, live.Options{}).Findings; len(fs) != 0 {
		t.Errorf("healthy cluster: got findings:\n%s", dump(fs))
	}
}

// TestFindingsOrder checks that findings come sorted by namespace, kind,
// name and rule, whatever the order of the snapshot.
func TestFindingsOrder(t *testing.T) {
	dep, rs := web()
	s := snap([]fargate.Profile{active("shop", "shop")},
		[]corev1.Node{
			node(fargate.NullNodeName, "us-east-1a", true, "v1.33.0-eks-fargate"),
			node(fgB, "us-east-1b", true, "v1.34.0-eks-fargate"),
			node("ip-1", "us-east-1a", false, "v1.33.0", eks.NodegroupLabel, "b-group"),
			node("ip-2", "us-east-1a", false, "v1.32.0", eks.NodegroupLabel, "a-group"),
			node("ip-3", "us-east-1a", false, "v1.32.0"),
		}, []corev1.Pod{
			webPod(rs, "web-1", onFargate(fargate.NullNodeName, "shop"), annotated(fargate.CapacityProvisionedAnnotation, "4vCPU 8GB")),
			webPod(rs, "web-2", onFargate(fargate.NullNodeName, "shop")),
			webPod(rs, "web-3", onFargate(fargate.NullNodeName, "shop")),
			webPod(rs, "web-4", onFargate(fgB, "shop")),
			webPod(rs, "web-5", onNode("ip-3")),
			webPod(rs, "web-6", onFargate(fargate.NullNodeName, "shop"), deleted(now.Add(-time.Hour), 30)),
			pod("a", "z", onNode("ip-3"), deleted(now.Add(-time.Hour), 0)),
		}, dep, rs)
	fs := live.Analyze(s, live.Options{}).Findings
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule.ID+" "+f.Object.String())
	}
	want := []string{
		"LV008 Node/fargate-null",
		"LV006 Node/ip-3",
		"LV006 Nodegroup/a-group",
		"LV006 Nodegroup/b-group",
		"LV007 Pod/a/z",
		"LV001 Deployment/shop/web",
		"LV005 Deployment/shop/web",
		"LV006 Deployment/shop/web",
		"LV010 Deployment/shop/web",
		"LV007 Pod/shop/web-6",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s\n%s", diff, dump(fs))
	}
}

func TestRulesCatalog(t *testing.T) {
	if len(live.Rules) != 12 {
		t.Fatalf("got %d rules, want 12", len(live.Rules))
	}
	names := map[string]bool{}
	for i, r := range live.Rules {
		if want := fmt.Sprintf("LV%03d", i+1); r.ID != want {
			t.Errorf("rule %d: ID %s, want %s (documentation order)", i, r.ID, want)
		}
		if names[r.Name] {
			t.Errorf("%s: name %q used twice", r.ID, r.Name)
		}
		names[r.Name] = true
		if r.Summary == "" || r.Doc == "" || r.Remediation == "" || r.Severity == 0 || !slices.Contains(rules.Categories, r.Category) {
			t.Errorf("%s: incomplete rule %+v", r.ID, r)
		}
		if strings.ToLower(r.Name) != r.Name || strings.Contains(r.Name, " ") {
			t.Errorf("%s: name %q is not kebab-case", r.ID, r.Name)
		}
	}
}

// TestBarePodAsCreated: a bare pod's workload is the pod as its manifest
// made it, without what EKS's webhook added (fargate-scheduler, the profile
// label), so that check's rules place it as the webhook would place it again;
// the snapshot's pod keeps both.
func TestBarePodAsCreated(t *testing.T) {
	s := snap([]fargate.Profile{active("shop", "shop")}, fgNodes(), []corev1.Pod{pod("shop", "tool", onFargate(fgA, "shop"), withLabels("app", "tool"))})
	ws := s.Workloads()
	if len(ws) != 1 || ws[0].Object.Pod == nil {
		t.Fatalf("workloads %v", ws)
	}
	tmpl := ws[0].Object.Pod.Template
	if tmpl.Spec.SchedulerName != "" || tmpl.Labels[fargate.ProfileLabel] != "" || tmpl.Labels["app"] != "tool" {
		t.Errorf("the workload's pod: scheduler %q, labels %v", tmpl.Spec.SchedulerName, tmpl.Labels)
	}
	if pl := fargate.Place(s.ActiveProfiles(), "shop", tmpl); !pl.Fargate || pl.Profile != "shop" {
		t.Errorf("placed %+v, want Fargate under shop", pl)
	}
	if p := s.Pods[0]; p.Spec.SchedulerName != fargate.SchedulerName || p.Labels[fargate.ProfileLabel] != "shop" {
		t.Errorf("the snapshot's pod changed: scheduler %q, labels %v", p.Spec.SchedulerName, p.Labels)
	}
}

// TestProfileGoneEachProfile: with pods under two gone profiles, the advice
// for each is worked out from a pod of that profile.
func TestProfileGoneEachProfile(t *testing.T) {
	dep, rs := web()
	s := snap([]fargate.Profile{profile("old-a", fargate.StatusDeleting, "shop"), active("next", "shop")}, fgNodes(), []corev1.Pod{
		webPod(rs, "web-1", onFargate(fgA, "old-a")),
		webPod(rs, "web-2", onFargate(fgB, "old-b"), withLabels("tier", "x")),
	}, dep, rs)
	var msgs []string
	for _, f := range live.Analyze(s, live.Options{}).Findings {
		if f.Rule == live.ProfileGone {
			msgs = append(msgs, f.Message)
		}
	}
	if len(msgs) != 2 || !strings.Contains(msgs[0], `profile "old-a", which is DELETING; restarted, they move to Fargate profile "next"`) ||
		!strings.Contains(msgs[1], `profile "old-b", which no longer exists; restarted, they move to Fargate profile "next"`) {
		t.Errorf("profile-gone findings: %q", msgs)
	}
}
