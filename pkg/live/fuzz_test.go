package live_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// bytesReader hands out fuzzed bytes, then zeros.
type bytesReader struct{ b []byte }

func (r *bytesReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return int(c)
}

// pick chooses one of xs ("" when xs is empty).
func pick[T any](r *bytesReader, xs []T) T {
	var zero T
	if len(xs) == 0 {
		return zero
	}
	return xs[r.next()%len(xs)]
}

func split(s string, max int) []string {
	xs := strings.Split(s, ",")
	if len(xs) > max {
		xs = xs[:max]
	}
	return xs
}

// fuzzSnapshot builds a small snapshot: ctl drives every choice; the strings
// are comma-separated lists of pod names, node names, kubelet versions and
// CapacityProvisioned sizes.
func fuzzSnapshot(ctl []byte, podNames, nodeNames, kubelets, sizes, version string) *live.Snapshot {
	r := &bytesReader{ctl}
	nodeList := split(nodeNames, 8)
	kubeletList := split(kubelets, 8)
	sizeList := split(sizes, 8)
	zones := []string{"", "us-east-1a", "us-east-1b", "us-east-1c"}
	namespaces := []string{"shop", "kube-system", "batch"}

	s := &live.Snapshot{
		Cluster: live.Cluster{Name: pick(r, []string{"", "prod"}), Version: version, VPCID: pick(r, []string{"", "vpc-1"})},
		Now:     now,
	}
	if n := r.next() % 4; n > 0 {
		s.Profiles = []fargate.Profile{}
		for range n {
			s.Profiles = append(s.Profiles, fargate.Profile{
				Name:      pick(r, []string{"shop", "old", "system", ""}),
				Selectors: []fargate.Selector{{Namespace: pick(r, []string{"shop", "*", "kube-system", "b?tch"})}},
				Status:    pick(r, []string{fargate.StatusActive, fargate.StatusDeleting, fargate.StatusCreating, ""}),
			})
		}
	}
	for _, name := range nodeList {
		n := node(name, pick(r, zones), r.next()%2 == 0, pick(r, kubeletList))
		if r.next()%3 == 0 {
			n.Labels[eks.NodegroupLabel] = pick(r, []string{"workers", ""})
		}
		s.Nodes = append(s.Nodes, n)
	}

	dep := deployment("shop", "web", template(map[string]string{"app": "web"}, pick(r, []string{"x", fargate.ComputeTypeAnnotation}), "ec2"))
	rs := replicaSet("shop", "web-1", dep)
	cj := cronJob("batch", "nightly")
	jb := job("batch", "nightly-1", cj)
	ds := daemonSet("kube-system", "agent")
	a := replicaSet("shop", "cycle-a", nil)
	b := replicaSet("shop", "cycle-b", a)
	if r.next()%4 == 0 { // bad data: an owner cycle
		a.Typed.(metav1.Object).SetOwnerReferences([]metav1.OwnerReference{controllerRef(b)})
	}
	owners := []*object.Object{dep, rs, cj, jb, ds, a, b}
	for i := r.next() % 3; i > 0; i-- { // some owners were not read
		owners = owners[1:]
	}
	s.Owners = owners
	ownerRefs := []*object.Object{nil, rs, jb, ds, a, dep}

	phases := []corev1.PodPhase{"", corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown}
	schedulers := []string{"", corev1.DefaultSchedulerName, fargate.SchedulerName, "other"}
	for i, name := range split(podNames, 16) {
		p := pod(pick(r, namespaces), name)
		p.UID = types.UID(fmt.Sprintf("uid-%d-%d", i, r.next()%3)) // UIDs may collide
		if o := pick(r, ownerRefs); o != nil {
			p.OwnerReferences = []metav1.OwnerReference{controllerRef(o)}
		}
		switch r.next() % 3 {
		case 0:
			p.Spec.NodeName = ""
		case 1:
			p.Spec.NodeName = pick(r, nodeList)
		case 2:
			p.Spec.NodeName = name
		}
		p.Spec.SchedulerName = pick(r, schedulers)
		p.Status.Phase = pick(r, phases)
		if r.next()%2 == 0 { // what a kubelet reports, which Trim drops
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: pick(r, []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse})}}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: int32(r.next()), Image: "app:1",
				State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: pick(r, []string{"CrashLoopBackOff", "ContainerCreating", "RunContainerError"}), Message: "back-off"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: pick(r, []string{"StartError", "Error", ""}),
					ExitCode: int32(r.next()), Message: pick(r, []string{"", "failed to write \"100000\": invalid argument", "é" + strings.Repeat("x", 300)}), ContainerID: "containerd://1"}}},
				{Name: "sidecar", Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Time{Time: now}}}}}
			switch r.next() % 3 {
			case 0:
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", RestartCount: 1,
					State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}}
			case 1: // not started, in a pod that is not restarted
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", Image: "init:1",
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: pick(r, []string{"StartError", "Completed"}), ExitCode: 128, Message: "x"}}}}
			}
			p.Status.PodIP, p.Status.StartTime = "10.0.0.1", &metav1.Time{Time: now.Add(-time.Hour)}
		}
		if c := r.next(); c%2 == 0 {
			p.Labels[fargate.ProfileLabel] = pick(r, []string{"shop", "old", "gone", ""})
		}
		if c := r.next(); c%3 == 0 {
			annotated(fargate.CapacityProvisionedAnnotation, pick(r, sizeList))(&p)
		} else if c%3 == 1 {
			annotated(fargate.ComputeTypeAnnotation, "ec2")(&p)
		}
		if c := r.next(); c%2 == 0 {
			requests(fmt.Sprintf("%dm", r.next()*r.next()), fmt.Sprintf("%dMi", r.next()*r.next()*r.next()))(&p)
		} else if c%5 == 1 {
			p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(fmt.Sprintf("%dGi", r.next()))}
		}
		if r.next()%3 == 0 { // a CPU limit that may be above the pod's size
			if p.Spec.Containers[0].Resources.Limits == nil {
				p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{}
			}
			p.Spec.Containers[0].Resources.Limits[corev1.ResourceCPU] = resource.MustParse(fmt.Sprintf("%dm", r.next()*10))
		}
		if c := r.next(); c%3 == 0 {
			var fin []string
			if c%2 == 0 {
				fin = []string{"example.com/x"}
			}
			deleted(now.Add(time.Duration(int8(r.next()))*time.Minute), int64(int8(r.next()))*60, fin...)(&p)
		}
		if c := r.next(); c%4 == 0 {
			e := warning(p, pick(r, []string{fargate.SchedulerName, "", "default-scheduler"}), name, now.Add(-time.Duration(r.next())*time.Second))
			if c%8 == 0 {
				e.ReportingController, e.LastTimestamp = fargate.SchedulerName, metav1.Time{}
			}
			s.Events = append(s.Events, e)
		}
		s.Pods = append(s.Pods, p)
	}
	return s
}

func FuzzAnalyze(f *testing.F) {
	f.Add([]byte{}, "web-1", "fargate-ip-1", "v1.34.0-eks-fargate", "0.25vCPU 0.5GB", "1.34")
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, "web-1,web-2,fargate-null,x",
		"fargate-null,ip-10-0-1-1,fargate-ip-2", "v1.33.0-eks-fargate,v1.34.0,garbage,v1.99999999999999999999.0", "1vCPU 2GB,NaNvCPU 1GB,0.25vCPU 0.5GB,", "1.34")
	f.Add([]byte("\x03\x00\x01\x00\x02\x03\x01\x00\x00\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
		"a,b,c,d,e,f", "fargate-a,fargate-b,ec2", "v1.32.1,,v2", "16vCPU 120GB,1vCPU 2GB", "")
	f.Add([]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"), ",,,", ",", "v1.0.0", "0vCPU 0GB", "v1.35")
	price, err := fargate.PriceIn(fargate.DefaultRegion)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, ctl []byte, podNames, nodeNames, kubelets, sizes, version string) {
		if len(ctl) > 512 || len(podNames)+len(nodeNames)+len(kubelets)+len(sizes)+len(version) > 1024 {
			return
		}
		s := fuzzSnapshot(ctl, podNames, nodeNames, kubelets, sizes, version)
		opts := live.Options{Price: price, StuckAfter: time.Duration(len(ctl)) * time.Minute,
			Settings: fargate.Settings{FailMemoryLimitAboveSize: len(ctl)%2 == 1}}
		res := live.Analyze(s, opts)
		for _, f := range res.Findings {
			if f.Rule == nil || !slices.Contains(live.Rules, f.Rule) {
				t.Fatalf("finding without a rule of live.Rules: %+v", f)
			}
			if f.Message == "" {
				t.Errorf("%s %s: empty message", f.Rule.ID, f.Object)
			}
			if f.Severity == 0 {
				t.Errorf("%s %s: no severity", f.Rule.ID, f.Object)
			}
			if fix, ok := f.Details[live.FixDetail]; ok && fix == "" {
				t.Errorf("%s %s: empty fix", f.Rule.ID, f.Object)
			}
		}
		// Every pod belongs to exactly one workload, and a workload counts
		// at most its pods.
		seen := map[*corev1.Pod]int{}
		for _, st := range res.Workloads {
			for _, p := range st.Workload.Pods {
				seen[p]++
			}
			if n := st.Fargate + st.EC2 + st.Pending; n > len(st.Workload.Pods) {
				t.Errorf("%s: %d live pods counted, %d pods", st.Workload.Object.Ref, n, len(st.Workload.Pods))
			}
		}
		for i := range s.Pods {
			if seen[&s.Pods[i]] != 1 {
				t.Errorf("pod %q is in %d workloads, want 1", s.Pods[i].Name, seen[&s.Pods[i]])
			}
		}
		if res.FargateNodes+res.EC2Nodes != len(s.Nodes) {
			t.Errorf("%d Fargate + %d EC2 nodes, snapshot has %d", res.FargateNodes, res.EC2Nodes, len(s.Nodes))
		}
		// A snapshot whose nodes and pods went through Trim, as watch's
		// caches keep them, gives the same analysis.
		trimmed := *s
		trimmed.Nodes, trimmed.Pods = nil, nil
		for i := range s.Nodes {
			trimmed.Nodes = append(trimmed.Nodes, *live.Trim(s.Nodes[i].DeepCopy()).(*corev1.Node))
		}
		for i := range s.Pods {
			trimmed.Pods = append(trimmed.Pods, *live.Trim(s.Pods[i].DeepCopy()).(*corev1.Pod))
		}
		if diff := cmp.Diff(summary(res), summary(live.Analyze(&trimmed, opts))); diff != "" {
			t.Errorf("the analysis of the trimmed snapshot differs (-whole +trimmed):\n%s", diff)
		}
	})
}

// summary is what an analysis says, without pointers into its snapshot.
func summary(res *live.Result) map[string]any {
	var findings, workloads []string
	for _, f := range res.Findings {
		findings = append(findings, fmt.Sprintf("%s %s %s %s %v", f.Rule.ID, f.Severity, f.Object, f.Message, f.Details))
	}
	for _, st := range res.Workloads {
		workloads = append(workloads, fmt.Sprintf("%s %d/%d/%d %.4f", st.Workload.Object.Ref, st.Fargate, st.EC2, st.Pending, st.BilledMonthlyUSD))
	}
	return map[string]any{"findings": findings, "workloads": workloads, "podsPerAZ": res.PodsPerAZ, "nodesPerAZ": res.NodesPerAZ,
		"nodes": [2]int{res.FargateNodes, res.EC2Nodes}}
}
