package report

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// scanned is the report of a scan: a Deployment with one pod on Fargate and
// one left on an EC2 node although its profile is ACTIVE (drift).
func scanned() *Report {
	yes := true
	dep := object.FromTyped(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", UID: "dep"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}},
		"apps/v1", "Deployment", object.Source{})
	rs := object.FromTyped(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "shop", UID: "rs",
		OwnerReferences: []metav1.OwnerReference{{UID: "dep", Controller: &yes}}}}, "apps/v1", "ReplicaSet", object.Source{})
	pod := func(name, node, scheduler string, labels map[string]string, annotations map[string]string) corev1.Pod {
		return corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name), Labels: labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{{UID: "rs", Controller: &yes}}},
			Spec:   corev1.PodSpec{NodeName: node, SchedulerName: scheduler, Containers: []corev1.Container{{Name: "web"}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
	}
	node := func(name, zone string, isFargate bool) corev1.Node {
		n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}}}
		if isFargate {
			n.Labels[fargate.ComputeTypeLabel] = "fargate"
		}
		n.Status.NodeInfo.KubeletVersion = "v1.35.2-eks"
		return n
	}
	snap := &live.Snapshot{
		Cluster:  live.Cluster{Name: "shop", Version: "1.35", Region: "us-east-1"},
		Profiles: []fargate.Profile{{Name: "shop", Status: fargate.StatusActive, Selectors: []fargate.Selector{{Namespace: "shop"}}}},
		Nodes:    []corev1.Node{node("fargate-ip-10-0-1-1.ec2.internal", "us-east-1a", true), node("ip-10-0-2-2.ec2.internal", "us-east-1b", false)},
		Pods: []corev1.Pod{
			pod("web-1-a", "fargate-ip-10-0-1-1.ec2.internal", fargate.SchedulerName, map[string]string{"app": "web", fargate.ProfileLabel: "shop"},
				map[string]string{fargate.CapacityProvisionedAnnotation: "0.25vCPU 0.5GB"}),
			pod("web-1-b", "ip-10-0-2-2.ec2.internal", corev1.DefaultSchedulerName, map[string]string{"app": "web"}, nil),
		},
		Owners: []*object.Object{dep, rs},
		Now:    time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC),
	}
	price, _ := fargate.PriceIn("us-east-1")
	analysis := live.Analyze(snap, live.Options{Price: price})
	web := &rules.Workload{
		Ref: dep.Ref, Namespace: "shop", Replicas: 2,
		Placement: fargate.Placement{Fargate: true, Profile: "shop", Matching: []string{"shop"}},
		Sizing:    fargate.SizePod(&corev1.PodSpec{Containers: []corev1.Container{{Name: "web"}}}),
	}
	return &Report{
		Findings: analysis.Findings, Workloads: rules.NewWorkloads([]*rules.Workload{web}...), Rules: live.Rules,
		Target: "1.36", Region: "us-east-1", Version: "0.1.0-test",
		Cluster: &Cluster{Name: "shop", Version: "1.35", Region: "us-east-1", Profiles: snap.Profiles, Analysis: analysis},
	}
}

// TestScanGolden: the text and JSON of a scan, with the cluster header, the
// pods where they are, the bill, and the finding's fix.
func TestScanGolden(t *testing.T) {
	for _, format := range []string{"text", "json", "html"} {
		t.Run(format, func(t *testing.T) {
			golden(t, filepath.Join("scan", format+".golden"), write(t, format, scanned(), Options{}))
		})
	}
}

// TestScanJSONCluster: the cluster object is as docs/json-output.md says:
// profiles always an array, profilesError omitted when the profiles were read.
func TestScanJSONCluster(t *testing.T) {
	r := scanned()
	var doc struct {
		Cluster map[string]json.RawMessage `json:"cluster"`
	}
	if err := json.Unmarshal(write(t, "json", r, Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"name", "version", "region", "profiles", "nodes", "podsPerAZ", "workloads"} {
		if _, ok := doc.Cluster[k]; !ok {
			t.Errorf("cluster lacks %q", k)
		}
	}
	if _, ok := doc.Cluster["profilesError"]; ok {
		t.Error("profilesError is written although the profiles were read")
	}
	r.Cluster.Profiles, r.Cluster.ProfilesError = nil, "no AWS credentials"
	if err := json.Unmarshal(write(t, "json", r, Options{}), &doc); err != nil {
		t.Fatal(err)
	}
	if string(doc.Cluster["profiles"]) != "[]" || string(doc.Cluster["profilesError"]) != `"no AWS credentials"` {
		t.Errorf("without profiles: profiles %s, profilesError %s", doc.Cluster["profiles"], doc.Cluster["profilesError"])
	}
	if _, ok := (&Report{}).toJSONMap(t)["cluster"]; ok {
		t.Error("a report without a cluster (check, plan) has a cluster object")
	}
}

// toJSONMap writes a report as JSON and decodes it into a map.
func (r *Report) toJSONMap(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(write(t, "json", r, Options{}), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
