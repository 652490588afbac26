package watch

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// state is a workload of the tests, with its pods.
func state(ns, name string, fargate, ec2, pending int, billed float64) live.WorkloadState {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}}
	return live.WorkloadState{Workload: &live.Workload{Object: object.FromTyped(d, "apps/v1", "Deployment", object.Source{})},
		Fargate: fargate, EC2: ec2, Pending: pending, BilledMonthlyUSD: billed}
}

func finding(r *rules.Rule, st live.WorkloadState, message string) rules.Finding {
	return rules.Finding{Rule: r, Severity: r.Severity, Object: st.Workload.Object.Ref, Message: message, Details: map[string]string{live.FixDetail: "kubectl rollout restart"}}
}

func rep(states []live.WorkloadState, findings ...rules.Finding) *report.Report {
	perAZ := map[string]int{}
	for i, st := range states {
		perAZ[[]string{"us-east-1a", "us-east-1b"}[i%2]] += st.Fargate
	}
	return &report.Report{Findings: findings, Cluster: &report.Cluster{Analysis: &live.Result{Workloads: states, PodsPerAZ: perAZ}}}
}

// TestPublish: the gauges count the workloads with each finding per
// namespace, and go to 0 once it is resolved; pods and cost per namespace
// follow the workloads; Events are recorded when a finding of pkg/live
// appears and when it is resolved, once each, and not for check's rules.
func TestPublish(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := newMetrics(reg)
	recorder := record.NewFakeRecorder(10)
	e := newFindingEvents(recorder)
	web, api, db := state("shop", "web", 0, 2, 0, 0), state("shop", "api", 1, 1, 0, 10.5), state("data", "db", 2, 0, 1, 20)
	states := []live.WorkloadState{web, api, db}
	noRequests := &rules.Rule{ID: "FG041", Name: "no-resource-requests", Severity: rules.Info}
	publish := func(r *report.Report) {
		m.publish(r)
		e.publish(r)
	}
	events := func() []string {
		var out []string
		for len(recorder.Events) > 0 {
			out = append(out, <-recorder.Events)
		}
		return out
	}

	publish(rep(states, finding(live.Drift, web, "2 of 2 pods run off Fargate"), finding(live.Drift, api, "1 of 2 pods run off Fargate"),
		finding(noRequests, db, "no requests")))
	want := `
# HELP fargatekit_findings Workloads (or nodes, profiles) with a finding of the rule now, by namespace.
# TYPE fargatekit_findings gauge
fargatekit_findings{name="drift-off-fargate",namespace="shop",rule="LV001",severity="blocker"} 2
fargatekit_findings{name="no-resource-requests",namespace="data",rule="FG041",severity="info"} 1
# HELP fargatekit_pods Live pods by namespace and where they run: fargate, ec2, or pending (bound to no node).
# TYPE fargatekit_pods gauge
fargatekit_pods{compute="ec2",namespace="data"} 0
fargatekit_pods{compute="ec2",namespace="shop"} 3
fargatekit_pods{compute="fargate",namespace="data"} 2
fargatekit_pods{compute="fargate",namespace="shop"} 1
fargatekit_pods{compute="pending",namespace="data"} 1
fargatekit_pods{compute="pending",namespace="shop"} 0
# HELP fargatekit_fargate_cost_dollars_per_month What Fargate bills for a month of the namespace's running pods, at their provisioned sizes (USD).
# TYPE fargatekit_fargate_cost_dollars_per_month gauge
fargatekit_fargate_cost_dollars_per_month{namespace="data"} 20
fargatekit_fargate_cost_dollars_per_month{namespace="shop"} 10.5
# HELP fargatekit_fargate_zone_pods Running pods on Fargate by AZ.
# TYPE fargatekit_fargate_zone_pods gauge
fargatekit_fargate_zone_pods{zone="us-east-1a"} 2
fargatekit_fargate_zone_pods{zone="us-east-1b"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), findingsMetric, podsMetric, costMetric, zonePodsMetric); err != nil {
		t.Error(err)
	}
	wantEvents := []string{
		"Warning DriftOffFargate 2 of 2 pods run off Fargate. Fix: kubectl rollout restart",
		"Warning DriftOffFargate 1 of 2 pods run off Fargate. Fix: kubectl rollout restart",
	}
	if diff := cmp.Diff(wantEvents, events()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// The same again: no new Event. Then web's drift ends; db goes.
	publish(rep(states, finding(live.Drift, web, "2 of 2 pods run off Fargate"), finding(live.Drift, api, "1 of 2 pods run off Fargate"),
		finding(noRequests, db, "no requests")))
	if got := events(); len(got) != 0 {
		t.Errorf("the same findings again recorded %q", got)
	}
	publish(rep([]live.WorkloadState{web, api}, finding(live.Drift, api, "1 of 2 pods run off Fargate")))
	want = `
# HELP fargatekit_findings Workloads (or nodes, profiles) with a finding of the rule now, by namespace.
# TYPE fargatekit_findings gauge
fargatekit_findings{name="drift-off-fargate",namespace="shop",rule="LV001",severity="blocker"} 1
fargatekit_findings{name="no-resource-requests",namespace="data",rule="FG041",severity="info"} 0
# HELP fargatekit_fargate_cost_dollars_per_month What Fargate bills for a month of the namespace's running pods, at their provisioned sizes (USD).
# TYPE fargatekit_fargate_cost_dollars_per_month gauge
fargatekit_fargate_cost_dollars_per_month{namespace="shop"} 10.5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), findingsMetric, costMetric); err != nil {
		t.Error(err)
	}
	if diff := cmp.Diff([]string{"Normal DriftOffFargateResolved resolved: 2 of 2 pods run off Fargate"}, events()); diff != "" {
		t.Errorf("events once web's drift ended (-want +got):\n%s", diff)
	}
}

// TestReason: a rule's name in UpperCamelCase.
func TestReason(t *testing.T) {
	for _, r := range live.Rules {
		got := Reason(r)
		if got == "" || strings.ContainsAny(got, "- ") || strings.ToUpper(got[:1]) != got[:1] {
			t.Errorf("Reason(%s) = %q", r.Name, got)
		}
	}
	if got := Reason(live.Drift); got != "DriftOffFargate" {
		t.Errorf("Reason(drift-off-fargate) = %q, want DriftOffFargate", got)
	}
}

// TestSameWarnings: the same failure of the EKS, EC2 or IAM API reads the
// same at each call, so watch logs it once.
func TestSameWarnings(t *testing.T) {
	read := func(id string) []string {
		return sameWarnings([]string{`calling iam:GetRole on cluster "shop" in us-east-1: operation error IAM: GetRole, https response error StatusCode: 404, RequestID: ` + id + `, NoSuchEntity: The role with name fargate cannot be found.`})
	}
	a, b := read("cc5ee591-6f2f-4574-8e9d-23ef39da00ee"), read("55141897-d0d8-49aa-aac7-bf3f7c012e13")
	if !cmp.Equal(a, b) || strings.Contains(a[0], "RequestID") || !strings.HasSuffix(a[0], "StatusCode: 404, NoSuchEntity: The role with name fargate cannot be found.") {
		t.Errorf("two reads: %q and %q", a, b)
	}
}
