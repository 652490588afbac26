package live_test

import (
	"fmt"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/google/go-cmp/cmp"
)

// want is one expected finding of the rule under test.
type want struct {
	object object.Ref
	// contains are substrings the message must have.
	contains []string
	// excludes are substrings the message must not have.
	excludes []string
	// fix is the exact Details[live.FixDetail]; "" means the finding has no fix.
	fix string
	// severity is the finding's; 0 means the rule's.
	severity rules.Severity
}

type ruleCase struct {
	name string
	snap *live.Snapshot
	opts live.Options
	// want lists the rule's findings; empty for a near miss, where the rule must not fire.
	want []want
}

// runRule analyses each case and compares the findings of rule with want.
func runRule(t *testing.T, rule *rules.Rule, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []rules.Finding
			for _, f := range live.Analyze(tc.snap, tc.opts).Findings {
				if f.Rule == rule {
					got = append(got, f)
				}
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%s: got %d findings, want %d:\n%s", rule.ID, len(got), len(tc.want), dump(got))
			}
			for i, w := range tc.want {
				f := got[i]
				if f.Object != w.object {
					t.Errorf("finding %d: object %s, want %s", i, f.Object, w.object)
				}
				sev := w.severity
				if sev == 0 {
					sev = rule.Severity
				}
				if f.Severity != sev {
					t.Errorf("finding %d: severity %v, want %v", i, f.Severity, sev)
				}
				for _, s := range w.contains {
					if !strings.Contains(f.Message, s) {
						t.Errorf("finding %d: message %q does not contain %q", i, f.Message, s)
					}
				}
				for _, s := range w.excludes {
					if strings.Contains(f.Message, s) {
						t.Errorf("finding %d: message %q contains %q", i, f.Message, s)
					}
				}
				fix, ok := f.Details[live.FixDetail]
				if w.fix == "" && ok {
					t.Errorf("finding %d: fix %q, want none", i, fix)
				}
				if w.fix != "" && fix != w.fix {
					t.Errorf("finding %d: fix\n  %q\nwant\n  %q", i, fix, w.fix)
				}
			}
		})
	}
}

func dump(fs []rules.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s: %s %v\n", f.Rule.ID, f.Object, f.Message, f.Details)
	}
	return b.String()
}

func TestDrift(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	nodes := append(fgNodes(), ec2Node())
	ds := daemonSet("shop", "agent")
	runRule(t, live.Drift, []ruleCase{
		{
			name: "pods on EC2 while an ACTIVE profile matches",
			snap: snap(shop, nodes, []corev1.Pod{
				webPod(rs, "web-1", onNode(ec2A)),
				webPod(rs, "web-2", onNode(ec2A)),
				webPod(rs, "web-3", onFargate(fgB, "shop")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"2 of 3 pods", "2 on EC2 nodes", `"shop"`}, excludes: []string{"Pending"},
				fix: restartDeployment("shop", "web")}},
		},
		{
			name: "pods Pending with the default scheduler while an ACTIVE profile matches",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", pendingWith(corev1.DefaultSchedulerName)),
				webPod(rs, "web-2", onFargate(fgA, "shop")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"), contains: []string{"1 of 2 pods", "1 Pending", `"shop"`},
				excludes: []string{"on EC2 nodes"}, fix: restartDeployment("shop", "web")}},
		},
		{
			name: "the profile picked is the first ACTIVE match by name",
			snap: snap([]fargate.Profile{active("zeta", "shop"), active("alpha", "shop"), active("aaa-other", "other")}, nodes,
				[]corev1.Pod{webPod(rs, "web-1", onNode(ec2A))}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"), contains: []string{"1 of 1 pods", `"alpha"`},
				fix: restartDeployment("shop", "web")}},
		},
		{
			name: "near miss: the matching profile is DELETING",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop")}, nodes,
				[]corev1.Pod{webPod(rs, "web-1", onNode(ec2A))}, dep, rs),
		},
		{
			name: "near miss: the matching profile is still CREATING",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusCreating, "shop")}, nodes,
				[]corev1.Pod{webPod(rs, "web-1", onNode(ec2A))}, dep, rs),
		},
		{
			name: "near miss: the pods carry schedulerName fargate-scheduler",
			snap: snap(shop, nodes, []corev1.Pod{
				webPod(rs, "web-1", pendingWith(fargate.SchedulerName)),
				webPod(rs, "web-2", onNode(ec2A), func(p *corev1.Pod) { p.Spec.SchedulerName = fargate.SchedulerName }),
			}, dep, rs),
		},
		{
			name: "near miss: the workload is a DaemonSet",
			snap: snap(shop, nodes, []corev1.Pod{pod("shop", "agent-x1", ownedBy(ds), onNode(ec2A))}, ds),
		},
		{
			name: "near miss: the pod of a DaemonSet that was not read",
			snap: snap(shop, nodes, []corev1.Pod{pod("shop", "agent-x1", ownedBy(ds), onNode(ec2A))}),
		},
		{
			name: "near miss: profiles unknown",
			snap: snap(nil, nodes, []corev1.Pod{webPod(rs, "web-1", onNode(ec2A))}, dep, rs),
		},
		{
			name: "near miss: no profile selects the namespace",
			snap: snap([]fargate.Profile{active("batch", "batch")}, nodes, []corev1.Pod{webPod(rs, "web-1", onNode(ec2A))}, dep, rs),
		},
		{
			name: "near miss: the pods are annotated compute-type ec2",
			snap: snap(shop, nodes, []corev1.Pod{webPod(rs, "web-1", onNode(ec2A), annotated(fargate.ComputeTypeAnnotation, "ec2"))}, dep, rs),
		},
		{
			name: "near miss: the pods on EC2 are finished or being deleted",
			snap: snap(shop, nodes, []corev1.Pod{
				webPod(rs, "web-1", onNode(ec2A), phase(corev1.PodSucceeded)),
				webPod(rs, "web-2", onNode(ec2A), phase(corev1.PodFailed)),
				webPod(rs, "web-3", onNode(ec2A), deleted(now.Add(20*time.Second), 30)),
				webPod(rs, "web-4", onFargate(fgA, "shop")),
			}, dep, rs),
		},
	})
}

func TestProfileGone(t *testing.T) {
	dep, rs := web()
	runRule(t, live.ProfileGone, []ruleCase{
		{
			name: "profile DELETING and no other matches",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop")}, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgB, "shop")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"2 pods", `profile "shop"`, "is DELETING", "no ACTIVE profile matches"}}},
		},
		{
			name: "profile no longer exists",
			snap: snap([]fargate.Profile{active("batch", "batch")}, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop-old")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"1 pod", `profile "shop-old"`, "no longer exists", "no ACTIVE profile matches"}}},
		},
		{
			name: "profile DELETING and another ACTIVE profile matches",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop"), active("shop-v2", "shop")}, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{`profile "shop"`, "is DELETING", `move to Fargate profile "shop-v2"`},
				fix:      restartDeployment("shop", "web")}},
		},
		{
			name: "near miss: the profile is ACTIVE",
			snap: snap([]fargate.Profile{active("shop", "shop")}, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"))}, dep, rs),
		},
		{
			name: "near miss: profiles unknown",
			snap: snap(nil, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"))}, dep, rs),
		},
		{
			name: "near miss: the pod is already being deleted",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop")}, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(10*time.Second), 30)),
			}, dep, rs),
		},
		{
			name: "near miss: the pod runs on EC2",
			snap: snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop")}, []corev1.Node{ec2Node()}, []corev1.Pod{
				webPod(rs, "web-1", onNode(ec2A)),
			}, dep, rs),
		},
	})
}

func TestRefused(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	const hostNetwork = "Pod not supported on Fargate: fields not supported: HostNetwork"
	p1 := webPod(rs, "web-1", pendingWith(fargate.SchedulerName))
	p2 := webPod(rs, "web-2", pendingWith(fargate.SchedulerName))
	withEvents := func(events ...corev1.Event) *live.Snapshot {
		s := snap(shop, fgNodes(), []corev1.Pod{p1, p2}, dep, rs)
		s.Events = events
		return s
	}
	newer := warning(p2, "", "Pod not supported on Fargate: invalid SecurityContext fields: Privileged", now.Add(-time.Minute))
	newer.ReportingController = fargate.SchedulerName // events.k8s.io events name the controller, not a source component
	newer.LastTimestamp = metav1.Time{}
	newer.EventTime = metav1.NewMicroTime(now.Add(-time.Minute))
	running := webPod(rs, "web-3", onFargate(fgA, "shop"))
	normal := warning(p1, fargate.SchedulerName, "Successfully assigned", now)
	normal.Type = corev1.EventTypeNormal
	runRule(t, live.Refused, []ruleCase{
		{
			name: "Pending pod with a fargate-scheduler Warning",
			snap: withEvents(warning(p1, fargate.SchedulerName, hostNetwork, now.Add(-5*time.Minute))),
			want: []want{{object: ref("Deployment", "shop", "web"), contains: []string{"1 pod is Pending", fmt.Sprintf("%q", hostNetwork)}}},
		},
		{
			name: "the newest Warning is quoted",
			snap: withEvents(warning(p1, fargate.SchedulerName, hostNetwork, now.Add(-5*time.Minute)), newer),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"2 pods are Pending", `"Pod not supported on Fargate: invalid SecurityContext fields: Privileged"`},
				excludes: []string{"HostNetwork"}}},
		},
		{
			name: "near miss: no event",
			snap: withEvents(),
		},
		{
			name: "near miss: the Pending pod is not sent to Fargate",
			snap: func() *live.Snapshot {
				p := webPod(rs, "web-9", pendingWith(corev1.DefaultSchedulerName))
				s := snap(shop, fgNodes(), []corev1.Pod{p}, dep, rs)
				s.Events = []corev1.Event{warning(p, fargate.SchedulerName, hostNetwork, now)}
				return s
			}(),
		},
		{
			name: "near miss: the Warning comes from the default scheduler",
			snap: withEvents(warning(p1, corev1.DefaultSchedulerName, "0/3 nodes are available", now)),
		},
		{
			name: "near miss: a Normal event from fargate-scheduler",
			snap: withEvents(normal),
		},
		{
			name: "near miss: the pod with the Warning runs now",
			snap: func() *live.Snapshot {
				s := snap(shop, fgNodes(), []corev1.Pod{running}, dep, rs)
				s.Events = []corev1.Event{warning(running, fargate.SchedulerName, hostNetwork, now.Add(-time.Hour))}
				return s
			}(),
		},
	})
}

func TestUnplaced(t *testing.T) {
	report := deployment("batch", "report", template(map[string]string{"app": "report", "tier": "jobs"}))
	reportRS := replicaSet("batch", "report-5f6c", report)
	reportPod := func(opts ...podOpt) corev1.Pod {
		return pod("batch", "report-1", append([]podOpt{ownedBy(reportRS), withLabels("app", "report", "tier", "jobs"),
			pendingWith(corev1.DefaultSchedulerName)}, opts...)...)
	}
	shop := []fargate.Profile{active("shop", "shop")}
	runRule(t, live.Unplaced, []ruleCase{
		{
			name: "Pending, default scheduler, no profile matches, no EC2 nodes",
			snap: snap(shop, fgNodes(), []corev1.Pod{reportPod()}, report, reportRS),
			want: []want{{object: ref("Deployment", "batch", "report"),
				contains: []string{"1 pod is Pending", "no ACTIVE Fargate profile matches", `namespace "batch"`, "app=report,tier=jobs", "no EC2 nodes"}}},
		},
		{
			name: "the only matching profile is DELETING",
			snap: snap([]fargate.Profile{profile("batch", fargate.StatusDeleting, "batch")}, nil, []corev1.Pod{reportPod()}, report, reportRS),
			want: []want{{object: ref("Deployment", "batch", "report"), contains: []string{"no ACTIVE Fargate profile matches"}}},
		},
		{
			name: "profiles unknown",
			snap: snap(nil, fgNodes(), []corev1.Pod{reportPod()}, report, reportRS),
			want: []want{{object: ref("Deployment", "batch", "report"),
				contains: []string{"1 pod is Pending", "no Fargate profile matched when they were created"}}},
		},
		{
			name: "near miss: an EC2 node exists",
			snap: snap(shop, append(fgNodes(), ec2Node()), []corev1.Pod{reportPod()}, report, reportRS),
		},
		{
			name: "near miss: an ACTIVE profile matches now (drift, not unplaced)",
			snap: snap([]fargate.Profile{active("batch", "batch")}, fgNodes(), []corev1.Pod{reportPod()}, report, reportRS),
		},
		{
			name: "near miss: annotated compute-type ec2 (LV009, not LV004)",
			snap: snap(shop, fgNodes(), []corev1.Pod{reportPod(annotated(fargate.ComputeTypeAnnotation, "ec2"))}, report, reportRS),
		},
		{
			name: "near miss: a scheduler of its own",
			snap: snap(shop, fgNodes(), []corev1.Pod{reportPod(pendingWith("my-scheduler"))}, report, reportRS),
		},
		{
			name: "near miss: the Pending pod is being deleted",
			snap: snap(shop, fgNodes(), []corev1.Pod{reportPod(deleted(now.Add(time.Minute), 30))}, report, reportRS),
		},
	})
}

func TestAZSkew(t *testing.T) {
	dep, rs := web()
	api := deployment("shop", "api", template(map[string]string{"app": "api"}))
	apiRS := replicaSet("shop", "api-66f", api)
	apiPod := func(nodeName, prof string) corev1.Pod {
		return pod("shop", "api-1", ownedBy(apiRS), withLabels("app", "api"), onFargate(nodeName, prof))
	}
	shop := []fargate.Profile{active("shop", "shop"), active("shop-b", "shop")}
	runRule(t, live.AZSkew, []ruleCase{
		{
			name: "3 pods in one AZ, a second AZ known from another pod of the profile",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-2", onFargate(fgA, "shop")),
				webPod(rs, "web-1", onFargate(fgA2, "shop")),
				webPod(rs, "web-3", onFargate(fgA, "shop")),
				apiPod(fgB, "shop"),
			}, dep, rs, api, apiRS),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"us-east-1a 3", "us-east-1b 0"}, excludes: []string{"us-east-1c"},
				fix: "kubectl delete pod -n shop web-1"}},
		},
		{
			name: "3/0/1 over three AZs",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgA, "shop")),
				webPod(rs, "web-3", onFargate(fgA2, "shop")),
				webPod(rs, "web-4", onFargate(fgC, "shop")),
				apiPod(fgB, "shop"),
			}, dep, rs, api, apiRS),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"us-east-1a 3", "us-east-1b 0", "us-east-1c 1"}, fix: "kubectl delete pod -n shop web-1"}},
		},
		{
			name: "near miss: a 2/1 split",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgA2, "shop")),
				webPod(rs, "web-3", onFargate(fgB, "shop")),
			}, dep, rs),
		},
		{
			name: "near miss: the other AZ is known only from a pod of another profile",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgA, "shop")),
				webPod(rs, "web-3", onFargate(fgA2, "shop")),
				apiPod(fgB, "shop-b"),
			}, dep, rs, api, apiRS),
		},
		{
			name: "near miss: the pods beyond a 1/1 split are not live",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgA, "shop"), phase(corev1.PodSucceeded)),
				webPod(rs, "web-3", onFargate(fgA2, "shop"), deleted(now.Add(10*time.Second), 30)),
				webPod(rs, "web-4", onFargate(fgB, "shop")),
			}, dep, rs),
		},
		{
			name: "near miss: a single pod",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop")), apiPod(fgB, "shop")}, dep, rs, api, apiRS),
		},
	})
}

func TestKubeletSkew(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	oldFargate := []corev1.Node{
		node(fgA, "us-east-1a", true, "v1.33.4-eks-fargate"),
		node(fgA2, "us-east-1a", true, "v1.32.9-eks-fargate"),
		node(fgB, "us-east-1b", true, "v1.34.0-eks-fargate"),
	}
	ng := func(name, group, kubelet string) corev1.Node {
		return node(name, "us-east-1a", false, kubelet, eks.NodegroupLabel, group)
	}
	noVersion := snap(shop, oldFargate, []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"))}, dep, rs)
	noVersion.Cluster.Version = ""
	noName := snap(nil, []corev1.Node{ng("ip-10-0-1-1.ec2.internal", "workers", "v1.33.1-eks-1")}, nil)
	noName.Cluster.Name = ""
	runRule(t, live.KubeletSkew, []ruleCase{
		{
			name: "Fargate pods on nodes behind the control plane",
			snap: snap(shop, oldFargate, []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop")),
				webPod(rs, "web-2", onFargate(fgA2, "shop")),
				webPod(rs, "web-3", onFargate(fgB, "shop")),
			}, dep, rs),
			want: []want{{object: ref("Deployment", "shop", "web"),
				contains: []string{"2 pods run", "kubelet 1.32", "(1.34)"}, fix: restartDeployment("shop", "web")}},
		},
		{
			name: "near miss: Fargate kubelet at the control plane's version",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"))}, dep, rs),
		},
		{
			name: "near miss: old Fargate nodes without live pods are not reported as nodes",
			snap: snap(shop, oldFargate, []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), phase(corev1.PodSucceeded))}, dep, rs),
		},
		{
			name: "near miss: control plane version unknown",
			snap: noVersion,
		},
		{
			name: "managed node group behind the control plane",
			snap: snap(nil, []corev1.Node{
				ng("ip-10-0-1-1.ec2.internal", "workers", "v1.33.1-eks-1"),
				ng("ip-10-0-1-2.ec2.internal", "workers", "v1.32.7-eks-1"),
				ng("ip-10-0-1-3.ec2.internal", "current", "v1.34.1-eks-1"),
			}, nil),
			want: []want{{object: object.Ref{APIVersion: "eks.amazonaws.com", Kind: "Nodegroup", Name: "workers"},
				contains: []string{"2 nodes", "kubelet 1.32", "(1.34)"},
				fix:      "aws eks update-nodegroup-version --cluster-name prod --nodegroup-name workers"}},
		},
		{
			name: "managed node group of an unnamed cluster",
			snap: noName,
			want: []want{{object: object.Ref{APIVersion: "eks.amazonaws.com", Kind: "Nodegroup", Name: "workers"},
				contains: []string{"1 node "}, fix: "aws eks update-nodegroup-version --cluster-name <cluster> --nodegroup-name workers"}},
		},
		{
			name: "self-managed EC2 node: a Node finding without a command",
			snap: snap(nil, []corev1.Node{node("ip-10-0-9-9.ec2.internal", "us-east-1a", false, "v1.33.0")}, nil),
			want: []want{{object: ref("Node", "", "ip-10-0-9-9.ec2.internal"), contains: []string{"1 node ", "kubelet 1.33"}}},
		},
		{
			name: "near miss: node group at the control plane's version, or ahead",
			snap: snap(nil, []corev1.Node{ng("ip-10-0-1-3.ec2.internal", "current", "v1.34.1-eks-1"), ng("ip-10-0-1-4.ec2.internal", "next", "v1.35.0")}, nil),
		},
		{
			name: "near miss: unreadable kubelet version",
			snap: snap(nil, []corev1.Node{ng("ip-10-0-1-3.ec2.internal", "odd", "unknown")}, nil),
		},
	})
}

func TestStuck(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	one := func(opts live.Options, p corev1.Pod) ruleCase {
		return ruleCase{snap: snap(shop, fgNodes(), []corev1.Pod{p}, dep, rs), opts: opts}
	}
	withName := func(name string, rc ruleCase, w ...want) ruleCase {
		rc.name, rc.want = name, w
		return rc
	}
	web1 := ref("Pod", "shop", "web-1")
	runRule(t, live.Stuck, []ruleCase{
		withName("held by finalizers",
			one(live.Options{}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-30*time.Minute), 30, "example.com/cleanup"))),
			want{object: web1, contains: []string{"30m30s", "finalizers example.com/cleanup", "Deployment/shop/web"},
				fix: `kubectl patch pod -n shop web-1 --type merge -p '{"metadata":{"finalizers":null}}'`}),
		withName("no finalizers",
			one(live.Options{}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-20*time.Minute), 0))),
			want{object: web1, contains: []string{"20m0s", "no finalizers"}, excludes: []string{"held by"},
				fix: "kubectl delete pod -n shop web-1 --grace-period=0 --force"}),
		withName("near miss: deleted recently",
			one(live.Options{}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-2*time.Minute), 30, "example.com/cleanup")))),
		withName("StuckAfter shortens the wait",
			one(live.Options{StuckAfter: time.Minute}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-2*time.Minute), 30))),
			want{object: web1, contains: []string{"2m30s"}, fix: "kubectl delete pod -n shop web-1 --grace-period=0 --force"}),
		withName("near miss: StuckAfter lengthens the wait",
			one(live.Options{StuckAfter: time.Hour}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-30*time.Minute), 30)))),
		// The deletion timestamp is the end of the grace period: a pod deleted
		// 11 minutes ago with a 10-minute grace period has been Terminating for 11.
		withName("long grace period counted from the delete request",
			one(live.Options{}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(-time.Minute), 600))),
			want{object: web1, contains: []string{"11m0s"}, fix: "kubectl delete pod -n shop web-1 --grace-period=0 --force"}),
		withName("near miss: still within a long grace period",
			one(live.Options{}, webPod(rs, "web-1", onFargate(fgA, "shop"), deleted(now.Add(9*time.Minute), 600)))),
	})
}

func TestNullNode(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	nodes := []corev1.Node{node(fargate.NullNodeName, "us-east-1a", true, "v1.34.0-eks-fargate")}
	pods := []corev1.Pod{
		webPod(rs, "web-1", onFargate(fargate.NullNodeName, "shop")),
		webPod(rs, "web-2", pendingWith(fargate.SchedulerName)),
		webPod(rs, "web-3", pendingWith(fargate.SchedulerName)),
		pod("other", "x", pendingWith(corev1.DefaultSchedulerName)), // not waiting for Fargate
	}
	noVPC := snap(shop, nodes, pods, dep, rs)
	noVPC.Cluster.VPCID = ""
	null := ref("Node", "", fargate.NullNodeName)
	runRule(t, live.NullNode, []ruleCase{
		{
			name: "a node named fargate-null",
			snap: snap(shop, nodes, pods, dep, rs),
			want: []want{{object: null, contains: []string{"fargate-null", "vpc-0abc", "2 Fargate pods waiting"},
				fix: `aws ec2 modify-vpc-attribute --vpc-id vpc-0abc --enable-dns-hostnames '{"Value":true}'`}},
		},
		{
			name: "VPC unknown",
			snap: noVPC,
			want: []want{{object: null, contains: []string{"fargate-null"},
				fix: `aws ec2 modify-vpc-attribute --vpc-id <vpc-id> --enable-dns-hostnames '{"Value":true}'`}},
		},
		{
			name: "near miss: Fargate nodes named after their DNS names",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop")), webPod(rs, "web-2", pendingWith(fargate.SchedulerName))}, dep, rs),
		},
	})
}

func TestKeptOffFargate(t *testing.T) {
	ec2 := fargate.ComputeTypeAnnotation
	coredns := deployment("kube-system", "coredns", template(map[string]string{"k8s-app": "kube-dns"}, ec2, "ec2"))
	corednsRS := replicaSet("kube-system", "coredns-5d78c", coredns)
	corednsPods := []corev1.Pod{
		pod("kube-system", "coredns-5d78c-a", ownedBy(corednsRS), withLabels("k8s-app", "kube-dns"), annotated(ec2, "ec2"), pendingWith(corev1.DefaultSchedulerName)),
		pod("kube-system", "coredns-5d78c-b", ownedBy(corednsRS), withLabels("k8s-app", "kube-dns"), annotated(ec2, "ec2"), pendingWith(corev1.DefaultSchedulerName)),
	}
	system := []fargate.Profile{active("system", "kube-system")}
	job := cronJob("shop", "nightly")
	metrics := deployment("kube-system", "metrics-server", template(nil, ec2, "ec2"))
	runRule(t, live.KeptOffFargate, []ruleCase{
		{
			name: "CoreDNS annotated ec2 on a cluster of Fargate alone",
			snap: snap(system, fgNodes(), corednsPods, coredns, corednsRS),
			want: []want{{object: ref("Deployment", "kube-system", "coredns"), contains: []string{"2 pods are Pending", "compute-type: ec2", "resolves names"},
				fix: `kubectl patch -n kube-system deployment/coredns --type json -p='[{"op": "remove", "path": "/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type"}]'`}},
		},
		{
			name: "another kube-system Deployment: no word of CoreDNS",
			snap: snap(system, fgNodes(), []corev1.Pod{
				pod("kube-system", "metrics-server-1", ownedBy(metrics), annotated(ec2, "ec2"), pendingWith(corev1.DefaultSchedulerName)),
			}, metrics),
			want: []want{{object: ref("Deployment", "kube-system", "metrics-server"), contains: []string{"1 pod is Pending"}, excludes: []string{"resolves names"},
				fix: `kubectl patch -n kube-system deployment/metrics-server --type json -p='[{"op": "remove", "path": "/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type"}]'`}},
		},
		{
			name: "a CronJob's template path",
			snap: snap(system, nil, []corev1.Pod{pod("shop", "nightly-1", ownedBy(job), annotated(ec2, "ec2"), pendingWith(""))}, job),
			want: []want{{object: ref("CronJob", "shop", "nightly"), contains: []string{"1 pod is Pending"}, excludes: []string{"resolves names"},
				fix: `kubectl patch -n shop cronjob/nightly --type json -p='[{"op": "remove", "path": "/spec/jobTemplate/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type"}]'`}},
		},
		{
			name: "a bare pod: no template to patch",
			snap: snap(system, nil, []corev1.Pod{pod("shop", "debug", annotated(ec2, "ec2"), pendingWith(""))}),
			want: []want{{object: ref("Pod", "shop", "debug"), contains: []string{"1 pod is Pending"}}},
		},
		{
			name: "near miss: an EC2 node exists",
			snap: snap(system, append(fgNodes(), ec2Node()), corednsPods, coredns, corednsRS),
		},
		{
			name: "near miss: the annotated pods are not Pending",
			snap: snap(system, fgNodes(), []corev1.Pod{
				pod("kube-system", "coredns-5d78c-a", ownedBy(corednsRS), annotated(ec2, "ec2"), pendingWith(""), phase(corev1.PodFailed)),
			}, coredns, corednsRS),
		},
	})
}

func TestBilled(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	billedAt := func(size string, opts ...podOpt) *live.Snapshot {
		return snap(shop, append(fgNodes(), ec2Node()), []corev1.Pod{
			webPod(rs, "web-1", append([]podOpt{onFargate(fgA, "shop"), requests("100m", "128Mi"), annotated(fargate.CapacityProvisionedAnnotation, size)}, opts...)...),
		}, dep, rs)
	}
	runRule(t, live.Billed, []ruleCase{
		{
			name: "billed at 1vCPU 2GB, requests need 0.25vCPU 0.5GB",
			snap: billedAt("1vCPU 2GB"),
			want: []want{{object: ref("Deployment", "shop", "web"), contains: []string{"1 pod is billed at 1vCPU 2GB", "need 0.25vCPU 0.5GB"},
				fix: restartDeployment("shop", "web")}},
		},
		{
			name: "billed below the requests",
			snap: billedAt("0.25vCPU 0.5GB", requests("1", "3Gi")), // 3 GiB + 256 MiB overhead: 1vCPU 4GB
			want: []want{{object: ref("Deployment", "shop", "web"), contains: []string{"billed at 0.25vCPU 0.5GB", "need 1vCPU 4GB"},
				fix: restartDeployment("shop", "web")}},
		},
		{
			name: "near miss: billed at the size the requests need",
			snap: billedAt("0.25vCPU 0.5GB"),
		},
		{
			name: "near miss: an unreadable annotation",
			snap: billedAt("a lot"),
		},
		{
			name: "near miss: not on Fargate",
			snap: billedAt("1vCPU 2GB", onNode(ec2A)),
		},
	})
}

// TestBilledPrices checks what WorkloadState prices: a pod billed at 1vCPU
// 2GB whose requests need 0.25vCPU 0.5GB costs four times what it needs.
func TestBilledPrices(t *testing.T) {
	dep, rs := web()
	price, err := fargate.PriceIn("us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	s := snap([]fargate.Profile{active("shop", "shop")}, fgNodes(), []corev1.Pod{
		webPod(rs, "web-1", onFargate(fgA, "shop"), requests("100m", "128Mi"), annotated(fargate.CapacityProvisionedAnnotation, "1vCPU 2GB")),
		webPod(rs, "web-2", onFargate(fgB, "shop"), requests("100m", "128Mi"), annotated(fargate.CapacityProvisionedAnnotation, "1vCPU 2GB")),
	}, dep, rs)
	res := live.Analyze(s, live.Options{Price: price})
	if len(res.Workloads) != 1 {
		t.Fatalf("got %d workloads, want 1", len(res.Workloads))
	}
	st := res.Workloads[0]
	want := 2 * price.Monthly(fargate.Size{MilliCPU: 250, MemoryMiB: 512}, fargate.DefaultEphemeralGiB, 1)
	if diff := st.RequestedMonthlyUSD - want; diff > 1e-9 || diff < -1e-9 || want <= 0 {
		t.Errorf("RequestedMonthlyUSD = %v, want %v", st.RequestedMonthlyUSD, want)
	}
	if ratio := st.BilledMonthlyUSD / st.RequestedMonthlyUSD; ratio < 3.999 || ratio > 4.001 {
		t.Errorf("billed $%.2f, requested $%.2f: ratio %v, want 4", st.BilledMonthlyUSD, st.RequestedMonthlyUSD, ratio)
	}
	var msg string
	for _, f := range res.Findings {
		if f.Rule == live.Billed {
			msg = f.Message
		}
	}
	for _, s := range []string{"2 pods are billed", fmt.Sprintf("$%.2f/month billed", st.BilledMonthlyUSD), fmt.Sprintf("$%.2f/month as requested", st.RequestedMonthlyUSD)} {
		if !strings.Contains(msg, s) {
			t.Errorf("LV010 message %q does not contain %q", msg, s)
		}
	}
}

// TestAnalyzeLeavesSnapshot: Analyze reads its snapshot and changes nothing
// in it, so that a second analysis finds the same (a profile that is
// DELETING once lost its pods' labels to the first).
func TestAnalyzeLeavesSnapshot(t *testing.T) {
	dep, rs := web()
	s := snap([]fargate.Profile{profile("shop", fargate.StatusDeleting, "shop")}, fgNodes(), []corev1.Pod{
		webPod(rs, "web-1", onFargate(fgA, "shop")),
		webPod(rs, "web-2", onFargate(fgB, "shop")),
	}, dep, rs)
	first := live.Analyze(s, live.Options{})
	second := live.Analyze(s, live.Options{})
	if len(first.Findings) == 0 {
		t.Fatal("no finding: the case does not exercise profile-gone")
	}
	if diff := cmp.Diff(first.Findings, second.Findings); diff != "" {
		t.Errorf("the second analysis differs (-first +second):\n%s", diff)
	}
}

// TestAnalyzeUnread: with a list that failed, the pods' states are still
// counted but nothing is reported: without the nodes, every Pending pod
// would look unplaced.
func TestAnalyzeUnread(t *testing.T) {
	s := snap(nil, nil, []corev1.Pod{pod("batch", "job-1", pendingWith(corev1.DefaultSchedulerName))})
	if fs := live.Analyze(s, live.Options{}).Findings; len(fs) != 1 || fs[0].Rule != live.Unplaced {
		t.Fatalf("with everything read: %v, want one unplaced", fs)
	}
	s.Unread = []string{"nodes"}
	res := live.Analyze(s, live.Options{})
	if len(res.Findings) != 0 || len(res.Workloads) != 1 || res.Workloads[0].Pending != 1 {
		t.Errorf("with the nodes unread: findings %v, workloads %+v", res.Findings, res.Workloads)
	}
}

// TestSubnetHeadroom: a profile whose subnets have fewer free addresses
// than its workloads may need (replicas not on Fargate yet, and a rollout's
// surge) or than --subnet-headroom asks.
func TestSubnetHeadroom(t *testing.T) {
	replicas := int32(4)
	dep := object.FromTyped(&appsv1.Deployment{ObjectMeta: meta("shop", "web", nil),
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: template(map[string]string{"app": "web"})}}, "apps/v1", "Deployment", object.Source{})
	rs := replicaSet("shop", "web-7d4b9", dep)
	recreate := object.FromTyped(&appsv1.Deployment{ObjectMeta: meta("shop", "web", nil),
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Template: template(map[string]string{"app": "web"}),
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}}, "apps/v1", "Deployment", object.Source{})
	recreateRS := replicaSet("shop", "web-7d4b9", recreate)
	shop := active("shop", "shop")
	shop.Subnets = []string{"subnet-a", "subnet-b"}
	// Two of four replicas run on Fargate: two more, and a surge of one
	// (25% of 4), need three addresses.
	withFree := func(a, b int, owners ...*object.Object) *live.Snapshot {
		pods := []corev1.Pod{webPod(owners[1], "web-1", onFargate(fgA, "shop")), webPod(owners[1], "web-2", onFargate(fgB, "shop"))}
		s := snap([]fargate.Profile{shop}, fgNodes(), pods, owners...)
		s.Foundation = &foundation.Foundation{Subnets: []foundation.Subnet{{ID: "subnet-a", Free: &a}, {ID: "subnet-b", Free: &b}}}
		return s
	}
	profileRef := object.Ref{APIVersion: "aws", Kind: "FargateProfile", Name: "shop"}
	unknown := withFree(0, 0, dep, rs)
	unknown.Foundation.Subnets[1].Free = nil
	parallel := int32(4)
	job := object.FromTyped(&batchv1.Job{ObjectMeta: meta("shop", "web", nil),
		Spec:   batchv1.JobSpec{Parallelism: &parallel, Template: template(map[string]string{"app": "web"})},
		Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: batchv1.JobComplete, Status: corev1.ConditionTrue}}}}, "batch/v1", "Job", object.Source{})
	done := withFree(0, 0, job, replicaSet("shop", "web-x", job))
	done.Pods = nil
	scaled := withFree(10, 0, dep, rs)
	scaled.Autoscalers = []autoscalingv2.HorizontalPodAutoscaler{{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 10}}}
	runRule(t, live.SubnetHeadroom, []ruleCase{
		{name: "two free, three needed", snap: withFree(1, 1, dep, rs),
			want: []want{{object: profileRef, contains: []string{"have 2 free addresses (subnet-a 1, subnet-b 1), fewer than the 3 its workloads may need: Deployment shop/web 3"}}}},
		{name: "near miss: three free", snap: withFree(3, 0, dep, rs)},
		{name: "near miss: Recreate adds no surge, two free", snap: withFree(1, 1, recreate, recreateRS)},
		{name: "the headroom asked for", snap: withFree(3, 0, dep, rs), opts: live.Options{SubnetHeadroom: 10},
			want: []want{{object: profileRef, contains: []string{"have 3 free addresses (subnet-a 3, subnet-b 0), fewer than the 10 of --subnet-headroom"}}}},
		{name: "near miss: a subnet's count unknown", snap: unknown},
		{name: "near miss: a Job that completed", snap: done},
		{name: "an autoscaler's maxReplicas: 8 more and a surge of 3", snap: scaled,
			want: []want{{object: profileRef, contains: []string{"fewer than the 11 its workloads may need: Deployment shop/web 11"}}}},
	})
}

// TestNodesPerAZ: the nodes of each AZ by kind; a node without a zone label
// counts under "".
func TestNodesPerAZ(t *testing.T) {
	nodes := append(fgNodes(), ec2Node(), node("ip-10-0-9-9.ec2.internal", "", false, "v1.34.2-eks-1234567"))
	res := live.Analyze(snap(nil, nodes, nil), live.Options{})
	want := map[string]live.Nodes{"us-east-1a": {Fargate: 2, EC2: 1}, "us-east-1b": {Fargate: 1}, "us-east-1c": {Fargate: 1}, "": {EC2: 1}}
	if diff := cmp.Diff(want, res.NodesPerAZ); diff != "" {
		t.Errorf("NodesPerAZ (-want +got):\n%s", diff)
	}
}

func TestCrashLooping(t *testing.T) {
	dep, rs := web()
	shop := []fargate.Profile{active("shop", "shop")}
	const startErr = `failed to create containerd task: ... failed to write "100000": write /sys/fs/cgroup/cpu,cpuacct/kubepods/burstable/pod/app/cpu.cfs_quota_us: invalid argument: unknown`
	// crashing makes the pod's app container wait in reason, having last
	// ended with lastReason.
	crashing := func(reason, lastReason, message string) podOpt {
		code := int32(1)
		if lastReason == "StartError" {
			code = 128
		}
		return func(p *corev1.Pod) {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: 3,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: "back-off 40s"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: lastReason, ExitCode: code, Message: message}}}}
		}
	}
	cpuLimit := func(cpu string) podOpt {
		return func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}
		}
	}
	flux := []podOpt{onFargate(fgA, "shop"), requests("100m", "64Mi"), cpuLimit("1"), annotated(fargate.CapacityProvisionedAnnotation, "0.25vCPU 0.5GB"),
		crashing("CrashLoopBackOff", "StartError", startErr)}
	webRef := ref("Deployment", "shop", "web")
	runRule(t, live.CrashLooping, []ruleCase{
		{
			name: "a CPU limit above the provisioned vCPU: the cause named, a blocker",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", flux...), webPod(rs, "web-2", flux...)}, dep, rs),
			want: []want{{object: webRef, severity: rules.Blocker, contains: []string{
				`2 pods do not run: container "app" waiting in CrashLoopBackOff, last ended with StartError (exit code 128), restarted 3 times`,
				`the cause: container "app" has a CPU limit of 1, above the 0.25 vCPU Fargate provisions for the pod (0.25vCPU 0.5GB), which the kernel refuses (FG025)`},
				excludes: []string{"cfs_quota_us"}}},
		},
		{
			name: "without the annotation, the size the requests need",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), requests("100m", "64Mi"), cpuLimit("500m"),
				crashing("RunContainerError", "StartError", startErr))}, dep, rs),
			want: []want{{object: webRef, severity: rules.Blocker, contains: []string{"1 pod does not run", "RunContainerError", "a CPU limit of 500m"}}},
		},
		{
			name: "a controller that asks IMDS: the cause named, a blocker",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), func(p *corev1.Pod) {
				p.Spec.Containers[0].Image = "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1"
			}, crashing("CrashLoopBackOff", "Error", ""))}, dep, rs),
			want: []want{{object: webRef, severity: rules.Blocker, contains: []string{
				`last ended with Error (exit code 1), restarted 3 times; the cause: container "app" (AWS Load Balancer Controller) ` +
					`asks the instance metadata service for the VPC ID (--aws-vpc-id or --aws-vpc-tags), and Fargate has none (FG027)`}}},
		},
		{
			name: "an application that exits: a warning quoting how it ended",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), requests("1", "1Gi"), cpuLimit("1"),
				crashing("CrashLoopBackOff", "Error", "panic: no DATABASE_URL"))}, dep, rs),
			want: []want{{object: webRef, contains: []string{"last ended with Error (exit code 1): panic: no DATABASE_URL"}, excludes: []string{"the cause"}}},
		},
		{
			name: "a pod that never restarts fails with StartError",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", append(flux[:4:4], func(p *corev1.Pod) {
				p.Spec.RestartPolicy, p.Status.Phase = corev1.RestartPolicyNever, corev1.PodFailed
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "StartError", ExitCode: 128, Message: startErr}}}}
			})...)}, dep, rs),
			want: []want{{object: webRef, severity: rules.Blocker, contains: []string{
				`1 pod does not run: container "app" ended with StartError (exit code 128); the cause: container "app" has a CPU limit of 1`}}},
		},
		{
			name: "near miss: crash loops off Fargate are not Fargate's doing",
			snap: snap(nil, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onNode("ip-10-0-1-1.ec2.internal"), requests("100m", "64Mi"), cpuLimit("1"),
				crashing("CrashLoopBackOff", "Error", "exit"))}, dep, rs),
		},
		{
			name: "near miss: a Job's pod that failed on its own",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), func(p *corev1.Pod) {
				p.Status.Phase = corev1.PodFailed
				p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 2}}}}
			})}, dep, rs),
		},
		{
			name: "a long message is cut",
			snap: snap(shop, fgNodes(), []corev1.Pod{webPod(rs, "web-1", onFargate(fgA, "shop"), crashing("CrashLoopBackOff", "Error", strings.Repeat("é", 200)))}, dep, rs),
			want: []want{{object: webRef, contains: []string{strings.Repeat("é", 120) + "…"}, excludes: []string{strings.Repeat("é", 121)}}},
		},
		{
			name: "near miss: the container is being created, or running",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", onFargate(fgA, "shop"), crashing("ContainerCreating", "", "")),
				webPod(rs, "web-2", onFargate(fgA, "shop"), requests("100m", "64Mi"), cpuLimit("1")),
			}, dep, rs),
		},
		{
			name: "near miss: a Pending pod not bound, or one being deleted",
			snap: snap(shop, fgNodes(), []corev1.Pod{
				webPod(rs, "web-1", pendingWith(fargate.SchedulerName), crashing("CrashLoopBackOff", "StartError", startErr)),
				webPod(rs, "web-2", append(flux, deleted(now, 30))...),
			}, dep, rs),
		},
	})
}
