package upgrade

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

var now = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

func node(name, group, kubelet string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	n.Status.NodeInfo.KubeletVersion = kubelet
	if group == "fargate" {
		n.Labels[fargate.ComputeTypeLabel] = "fargate"
	} else {
		n.Labels[eks.NodegroupLabel] = group
	}
	return n
}

// deployment returns a Deployment and its pods, one per node.
func deployment(ns, name string, replicas int32, nodes ...string) (*object.Object, []corev1.Pod) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		}},
	}
	obj := object.FromTyped(d, "apps/v1", "Deployment", object.Source{})
	var pods []corev1.Pod
	for i, n := range nodes {
		ctrl := true
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name + "-" + string(rune('a'+i)), Namespace: ns, Labels: map[string]string{"app": name},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: name, UID: d.UID, Controller: &ctrl}}},
			Spec:   corev1.PodSpec{NodeName: n},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		})
	}
	return obj, pods
}

func pdb(ns, name, app string, allowed int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed},
	}
}

// facts is a cluster at 1.33: node group "old" at 1.32 and "current" at
// 1.33; a Fargate workload on a 1.32 kubelet and one on 1.33; api (two
// replicas under a PDB allowing none) on old; db (one replica) and cache
// (two replicas under a PDB allowing one) on current; a bare pod and a pod
// held by a finalizer on old.
func facts() Facts {
	snap := &live.Snapshot{Nodes: []corev1.Node{
		node("old-1", "old", "v1.32.9-eks"), node("old-2", "old", "v1.32.9-eks"),
		node("cur-1", "current", "v1.33.1-eks"),
		node("fargate-ip-10-0-1-1.ec2.internal", "fargate", "v1.32.0-eks-fargate"),
		node("fargate-ip-10-0-1-2.ec2.internal", "fargate", "v1.33.0-eks-fargate"),
	}}
	add := func(o *object.Object, pods []corev1.Pod) {
		snap.Owners = append(snap.Owners, o)
		snap.Pods = append(snap.Pods, pods...)
	}
	add(deployment("apps", "web", 1, "fargate-ip-10-0-1-1.ec2.internal"))
	add(deployment("apps", "site", 1, "fargate-ip-10-0-1-2.ec2.internal"))
	add(deployment("default", "api", 2, "old-1", "old-2"))
	add(deployment("default", "db", 1, "cur-1"))
	add(deployment("default", "cache", 2, "cur-1", "cur-1"))
	bare := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "debug", Namespace: "default"}, Spec: corev1.PodSpec{NodeName: "old-1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	held := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Finalizers: []string{"example.com/hold"}, DeletionTimestamp: &metav1.Time{Time: now}},
		Spec: corev1.PodSpec{NodeName: "old-2"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	snap.Pods = append(snap.Pods, bare, held)
	return Facts{
		Cluster: "prod", Version: "1.33", Snapshot: snap, Now: now, Policy: eks.DefaultUpgradePolicy,
		NodeGroups: []NodeGroup{{Name: "current", Version: "1.33"}, {Name: "old", Version: "1.32"}},
		PDBs:       []*policyv1.PodDisruptionBudget{pdb("default", "api", "api", 0), pdb("default", "cache", "cache", 1)},
	}
}

// issues renders a hop's issues as "severity kind subject".
func issues(h Hop) []string {
	var out []string
	for _, i := range h.Issues {
		out = append(out, string(i.Severity)+" "+i.Kind+" "+i.Subject)
	}
	return out
}

func titles(h Hop) []string {
	var out []string
	for _, s := range h.Steps {
		out = append(out, s.Title)
	}
	return out
}

func TestBuild(t *testing.T) {
	f := facts()
	vac := object.FromTyped(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "gold"}}, "storage.k8s.io/v1alpha1", "VolumeAttributesClass", object.Source{})
	flow := object.FromTyped(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probes"}}, "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", object.Source{File: "helm release kube-system/flows"})
	later := object.FromTyped(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "m"}}, "storagemigration.k8s.io/v1alpha1", "StorageVersionMigration", object.Source{})
	f.Declared = []*object.Object{vac, flow, later}
	p, err := Build(f, "1.35")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hops) != 2 || p.Hops[0].From != "1.33" || p.Hops[1].To != "1.35" {
		t.Fatalf("hops %+v", p.Hops)
	}
	first, second := p.Hops[0], p.Hops[1]
	want := []string{
		"blocker removed-api FlowSchema probes", // removed in 1.32 already
		"blocker nodegroup-behind node group old",
		"blocker fargate-behind Deployment apps/web",
		"blocker drain-blocked PodDisruptionBudget default/api",
		"blocker pod-stuck-terminating Pod default/held",
		"warning single-replica Deployment default/db",
		"warning unmanaged-pod Pod default/debug",
	}
	if diff := cmp.Diff(want, issues(first)); diff != "" {
		t.Errorf("first hop's issues (-want +got):\n%s", diff)
	}
	if !first.Blocked() {
		t.Error("the first hop is not blocked")
	}
	wantSteps := []string{
		"Migrate the objects declared with API versions Kubernetes 1.34 does not serve",
		"Update the node groups behind the control plane to 1.33",
		"Recreate the Fargate pods on kubelets older than 1.33",
		"Update the control plane to 1.34",
		"Update the node groups to 1.34",
		"Recreate the Fargate pods, so that they run kubelets of 1.34",
	}
	if diff := cmp.Diff(wantSteps, titles(first)); diff != "" {
		t.Errorf("first hop's steps (-want +got):\n%s", diff)
	}
	// The second hop updates every node group again; cache's PDB allows one
	// disruption (a near miss).
	want = []string{
		"blocker removed-api VolumeAttributesClass gold",
		"blocker drain-blocked PodDisruptionBudget default/api",
		"blocker pod-stuck-terminating Pod default/held",
		"warning single-replica Deployment default/db",
		"warning unmanaged-pod Pod default/debug",
	}
	if diff := cmp.Diff(want, issues(second)); diff != "" {
		t.Errorf("second hop's issues (-want +got):\n%s", diff)
	}
	cmds := strings.Join(first.Steps[1].Commands, "\n")
	if want := "aws eks update-nodegroup-version --cluster-name prod --nodegroup-name old --kubernetes-version 1.33\naws eks wait nodegroup-active --cluster-name prod --nodegroup-name old"; cmds != want {
		t.Errorf("node group step:\n%s\nwant\n%s", cmds, want)
	}
	if got := first.Steps[2].Commands; len(got) != 1 || !strings.HasPrefix(got[0], "kubectl rollout restart -n apps deployment/web") {
		t.Errorf("Fargate restarts before the update: %v (only web is behind)", got)
	}
	if got := first.Steps[5].Commands; len(got) != 2 {
		t.Errorf("Fargate restarts after the update: %v (web and site)", got)
	}
	if p.Current.Phase != "extended" || p.Current.HourlyPrice != ExtendedHourly || p.Target.Phase != "standard" {
		t.Errorf("support: current %+v target %+v", p.Current, p.Target)
	}
}

// TestBuildClean: a cluster where everything is on the control plane's
// version, no PDB blocks and the policy lets Fargate pods behind through.
func TestBuildClean(t *testing.T) {
	f := facts()
	f.NodeGroups = []NodeGroup{{Name: "current", Version: "1.33"}}
	f.PDBs = f.PDBs[1:]
	f.Policy = eks.UpgradePolicy{}
	var pods []corev1.Pod
	for _, p := range f.Snapshot.Pods {
		if !strings.HasPrefix(p.Spec.NodeName, "old-") {
			pods = append(pods, p)
		}
	}
	f.Snapshot.Pods = pods
	p, err := Build(f, "1.34")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"warning fargate-behind Deployment apps/web", "warning single-replica Deployment default/db"}, issues(p.Hops[0])); diff != "" || p.Hops[0].Blocked() {
		t.Errorf("issues (-want +got):\n%s", diff)
	}
}

func TestBuildErrors(t *testing.T) {
	for target, want := range map[string]string{
		"1.33": "the cluster is on 1.33 already; the target 1.33 must be a later version",
		"1.32": "must be a later version (EKS does not downgrade)",
		"1.40": "EKS does not offer Kubernetes 1.40",
		"next": "the target version: invalid Kubernetes version",
	} {
		if _, err := Build(facts(), target); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Build to %s: %v, want %q", target, err, want)
		}
	}
}

func TestSupportOf(t *testing.T) {
	for _, tc := range []struct {
		version string
		at      time.Time
		want    Support
	}{
		{"1.34", now, Support{Version: "1.34", EndOfStandard: "2026-12-02", EndOfExtended: "2027-12-02", Phase: "standard", HourlyPrice: StandardHourly}},
		{"1.34", time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC), Support{Version: "1.34", EndOfStandard: "2026-12-02", EndOfExtended: "2027-12-02", Phase: "extended", HourlyPrice: ExtendedHourly}},
		{"1.28", now, Support{Version: "1.28", EndOfStandard: "2024-11-26", EndOfExtended: "2025-11-26", Phase: "unsupported"}},
		{"1.99", now, Support{Version: "1.99", Phase: "unknown"}},
	} {
		if diff := cmp.Diff(tc.want, SupportOf(tc.version, tc.at)); diff != "" {
			t.Errorf("SupportOf(%s, %s) (-want +got):\n%s", tc.version, tc.at.Format(time.DateOnly), diff)
		}
	}
}

// TestSelectorChanges: a workload whose file selects other pods than the
// live object gets a warning and the steps that change it without taking
// it down; the same selector written otherwise, a last-applied
// configuration and a file of an object not in the cluster do not.
func TestSelectorChanges(t *testing.T) {
	f := facts()
	store := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "store", Namespace: "default", UID: "uid-store"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "store"}}}}
	f.Snapshot.Owners = append(f.Snapshot.Owners, object.FromTyped(store, "apps/v1", "StatefulSet", object.Source{}))
	for i, n := range []string{"store-0", "store-1"} {
		ctrl := true
		f.Snapshot.Pods = append(f.Snapshot.Pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "default", Labels: map[string]string{"app": "store"},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "store", UID: store.UID, Controller: &ctrl}}},
			Spec: corev1.PodSpec{NodeName: []string{"cur-1", "old-1"}[i]}, Status: corev1.PodStatus{Phase: corev1.PodRunning}})
	}
	file := func(kind, ns, name, path string, sel *metav1.LabelSelector) *object.Object {
		var typed any
		switch kind {
		case "Deployment":
			typed = &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.DeploymentSpec{Selector: sel}}
		case "StatefulSet":
			typed = &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: appsv1.StatefulSetSpec{Selector: sel}}
		}
		return object.FromTyped(typed, "apps/v1", kind, object.Source{File: path, Line: 3})
	}
	labels := func(kv ...string) *metav1.LabelSelector {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return &metav1.LabelSelector{MatchLabels: m}
	}
	f.Declared = []*object.Object{
		file("Deployment", "apps", "web", "deploy/web.yaml", labels("app", "web", "tier", "front")),
		// No namespace: default, as kubectl apply sends it.
		file("StatefulSet", "", "store", "deploy/store.yaml", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"store", "store-v2"}}}}),
		// Near misses: the same selector with empty expressions (the API
		// server's comparison takes empty for absent), a last-applied
		// configuration, an object the cluster does not have.
		file("Deployment", "default", "api", "deploy/api.yaml", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}, MatchExpressions: []metav1.LabelSelectorRequirement{}}),
		file("Deployment", "default", "db", "", labels("app", "db", "v", "2")),
		file("Deployment", "default", "new", "deploy/new.yaml", labels("app", "new")),
	}
	f.Declared[3].Source = object.Source{}
	// store's file is a kustomization's resource: applied with -k.
	f.Apply = map[string]string{"deploy/store.yaml": "kubectl apply -k deploy"}
	p, err := Build(f, "1.35")
	if err != nil {
		t.Fatal(err)
	}
	h := p.Hops[0]
	var got []string
	for _, i := range h.Issues {
		if i.Kind == SelectorChange {
			got = append(got, i.Subject+": "+i.Message)
		}
	}
	want := []string{
		"Deployment apps/web: selects app=web,tier=front in deploy/web.yaml:3 but app=web live: spec.selector is immutable, so kubectl apply fails, and kubectl apply --force deletes it and its pods before creating it again",
		"StatefulSet default/store: selects app in (store,store-v2) in deploy/store.yaml:3 but app=store live: spec.selector is immutable, so kubectl apply fails, and kubectl apply --force deletes it and its pods before creating it again",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("selector changes (-want +got):\n%s", diff)
	}
	steps := map[string][]string{}
	for _, s := range h.Steps {
		steps[s.Title] = s.Commands
	}
	wantSteps := map[string][]string{
		"Change the selector of Deployment apps/web without taking it down": {
			`kubectl get deployment -n apps web -o json | kubectl patch --local -f - --type merge -p '{"metadata":{"name":"web-migrate","uid":null,"resourceVersion":null,"creationTimestamp":null,"generation":null,"managedFields":null,"annotations":{"kubectl.kubernetes.io/last-applied-configuration":null}},"status":null}' -o json | kubectl create -f -`,
			"kubectl rollout status -n apps deployment/web-migrate",
			"kubectl delete deployment -n apps web",
			"kubectl apply -f deploy/web.yaml",
			"kubectl rollout status -n apps deployment/web",
			"kubectl delete deployment -n apps web-migrate",
		},
		"Change the selector of StatefulSet default/store without taking it down": {
			"kubectl delete statefulset -n default store --cascade=orphan",
			"kubectl apply -k deploy",
			"kubectl delete pod -n default store-0 && kubectl rollout status -n default statefulset/store",
			"kubectl delete pod -n default store-1 && kubectl rollout status -n default statefulset/store",
		},
	}
	for title, cmds := range wantSteps {
		if diff := cmp.Diff(cmds, steps[title]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", title, diff)
		}
	}
	if slices.ContainsFunc(p.Hops[1].Issues, func(i Issue) bool { return i.Kind == SelectorChange }) {
		t.Error("the selector changes are repeated in the second hop")
	}
}

// TestInsights: EKS's insights that do not pass go to the hop of their
// version, ERROR as a blocker; the kubelet skew the plan computes itself
// and passing insights do not.
func TestInsights(t *testing.T) {
	f := facts()
	f.NodeGroups, f.PDBs, f.Snapshot = nil, nil, nil
	f.Insights = []Insight{
		{ID: "a1", Name: "Deprecated APIs removed in Kubernetes v1.34", Version: "1.34", Status: "ERROR", Reason: "Deprecated API usage detected.", Description: "Checks for usage of deprecated APIs."},
		{ID: "a2", Name: "Deprecated APIs removed in Kubernetes v1.35", Version: "1.35", Status: "WARNING", Description: "Checks for usage of deprecated APIs."},
		{ID: "k1", Name: KubeletSkewInsight, Version: "1.34", Status: "ERROR"},
		{ID: "h1", Name: "Cluster health issues", Version: "1.34", Status: "PASSING"},
	}
	p, err := Build(f, "1.35")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"blocker eks-insight EKS insight Deprecated APIs removed in Kubernetes v1.34"}, issues(p.Hops[0])); diff != "" {
		t.Errorf("first hop (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"warning eks-insight EKS insight Deprecated APIs removed in Kubernetes v1.35"}, issues(p.Hops[1])); diff != "" {
		t.Errorf("second hop (-want +got):\n%s", diff)
	}
	got := p.Hops[0].Issues[0]
	if got.Message != "Checks for usage of deprecated APIs. Deprecated API usage detected." || got.Fix != "aws eks describe-insight --cluster-name prod --id a1" {
		t.Errorf("issue %+v", got)
	}
}

// TestInsightsAllowed: where the policy says EKS lets an update through
// over readiness errors, an ERROR insight is a warning.
func TestInsightsAllowed(t *testing.T) {
	f := facts()
	f.NodeGroups, f.PDBs, f.Snapshot = nil, nil, nil
	f.Policy.RefuseReadinessErrors = false
	f.Insights = []Insight{{ID: "a1", Name: "Deprecated APIs removed in Kubernetes v1.34", Version: "1.34", Status: "ERROR"}}
	p, err := Build(f, "1.34")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"warning eks-insight EKS insight Deprecated APIs removed in Kubernetes v1.34"}, issues(p.Hops[0])); diff != "" {
		t.Errorf("hop (-want +got):\n%s", diff)
	}
}

// TestManagedWith: a cluster managed with eksctl is updated with eksctl,
// from its ClusterConfig once the file says the version; one managed with
// Terraform by setting the versions in its configuration and applying it.
// The AWS CLI is not used.
func TestManagedWith(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  func(f *Facts)
		want []string
	}{
		{name: "eksctl", set: func(f *Facts) { f.Eksctl = "cluster.yaml" }, want: []string{
			"eksctl upgrade nodegroup --cluster prod --name old --kubernetes-version 1.33",
			`# set metadata.version: "1.34" in cluster.yaml`,
			"eksctl upgrade cluster -f cluster.yaml --approve",
			"eksctl upgrade nodegroup --cluster prod --name current --kubernetes-version 1.34",
			"eksctl upgrade nodegroup --cluster prod --name old --kubernetes-version 1.34",
		}},
		{name: "terraform", set: func(f *Facts) {
			f.Terraform = &Terraform{Cluster: "module.eks.aws_eks_cluster.this[0]", NodeGroups: map[string]string{"old": "aws_eks_node_group.old"}}
		}, want: []string{
			`# set version = "1.33" (and release_version, if set, to a release of 1.33) for aws_eks_node_group.old in the Terraform configuration`,
			"terraform apply",
			`# set version = "1.34" for module.eks.aws_eks_cluster.this[0] in the Terraform configuration, through its module's inputs`,
			"terraform apply",
			// A node group the configuration does not declare is named.
			`# set version = "1.34" (and release_version, if set, to a release of 1.34) for the aws_eks_node_group of current in the Terraform configuration`,
			`# set version = "1.34" (and release_version, if set, to a release of 1.34) for aws_eks_node_group.old in the Terraform configuration`,
			"terraform apply",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := facts()
			tc.set(&f)
			p, err := Build(f, "1.34")
			if err != nil {
				t.Fatal(err)
			}
			var cmds []string
			for _, s := range p.Hops[0].Steps {
				for _, c := range s.Commands {
					if strings.HasPrefix(c, "eksctl") || strings.HasPrefix(c, "aws") || strings.HasPrefix(c, "terraform") || strings.HasPrefix(c, "# set") {
						cmds = append(cmds, c)
					}
				}
			}
			if diff := cmp.Diff(tc.want, cmds); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			i := slices.IndexFunc(p.Hops[0].Issues, func(i Issue) bool { return i.Kind == NodeGroupBehind })
			if fix := strings.TrimPrefix(tc.want[0], "# "); i < 0 || !strings.HasPrefix(p.Hops[0].Issues[i].Fix, fix) {
				t.Errorf("the fix of the node group behind, want %q: %+v", fix, p.Hops[0].Issues)
			}
		})
	}
}

// FuzzBuild: any version, node group version and selector give a plan of
// one hop per minor version, or an error; never a panic.
func FuzzBuild(f *testing.F) {
	f.Add("1.33", "1.35", "1.32", "app", "web", true)
	f.Add("1.30", "1.31", "", "", "", false)
	f.Add("v1.34.2", "1.35", "1.34", "app", "", true)
	f.Fuzz(func(t *testing.T, from, to, ngVersion, key, value string, eksctl bool) {
		fs := facts()
		fs.Version = from
		fs.NodeGroups = []NodeGroup{{Name: "ng", Version: ngVersion}}
		if eksctl {
			fs.Eksctl = "cluster.yaml"
		}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{key: value}}}}
		fs.Declared = []*object.Object{object.FromTyped(d, "apps/v1", "Deployment", object.Source{File: "api.yaml"})}
		p, err := Build(fs, to)
		if err != nil {
			return
		}
		for i, h := range p.Hops {
			if h.To != eks.NextMinor(h.From) || (i > 0 && h.From != p.Hops[i-1].To) {
				t.Fatalf("hops %+v", p.Hops)
			}
		}
		if p.Hops[0].From != p.From || p.Hops[len(p.Hops)-1].To != p.To {
			t.Fatalf("plan %s → %s, hops %+v", p.From, p.To, p.Hops)
		}
	})
}
