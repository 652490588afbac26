package live

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// FixDetail is the finding detail holding the command that repairs it.
const FixDetail = "fix"

// Options change what Analyze reports.
type Options struct {
	// StuckAfter is how long a pod may be Terminating before it is stuck.
	StuckAfter time.Duration
	// Price prices the pods' CapacityProvisioned sizes.
	Price fargate.Price
	// SubnetHeadroom is how many free addresses every profile's subnets
	// must keep (LV011); 0: what its workloads may need.
	SubnetHeadroom int
	// Settings say which containers fail to start on Fargate (LV012).
	Settings fargate.Settings
}

// DefaultStuckAfter is how long a pod may be Terminating by default.
const DefaultStuckAfter = 10 * time.Minute

// Result is what Analyze found.
type Result struct {
	// Findings are sorted by namespace, object and rule.
	Findings []rules.Finding
	// Workloads are the snapshot's workloads with where their pods run.
	Workloads []WorkloadState
	// FargateNodes and EC2Nodes count the nodes.
	FargateNodes, EC2Nodes int
	// PodsPerAZ counts the running pods on Fargate per AZ.
	PodsPerAZ map[string]int
	// NodesPerAZ counts the nodes per AZ (topology.kubernetes.io/zone; ""
	// for nodes without it).
	NodesPerAZ map[string]Nodes
}

// Nodes counts nodes by kind.
type Nodes struct {
	Fargate, EC2 int
}

// WorkloadState is where a workload's pods run and what Fargate bills them.
type WorkloadState struct {
	Workload *Workload
	// Fargate, EC2 and Pending count the live pods (not finished, not being deleted).
	Fargate, EC2, Pending int
	// PodsPerAZ counts the pods on Fargate per AZ.
	PodsPerAZ map[string]int
	// BilledMonthlyUSD prices the pods on Fargate at their CapacityProvisioned
	// sizes for a month; RequestedMonthlyUSD at the sizes their requests need.
	BilledMonthlyUSD, RequestedMonthlyUSD float64

	// misbilled counts the pods on Fargate billed at another size than their
	// requests need; billedSize and neededSize are those of the last one.
	misbilled              int
	billedSize, neededSize fargate.Size
}

// Analyze finds the incidents of a running cluster. From a snapshot with
// something Unread it reports where the pods run, and no findings.
func Analyze(s *Snapshot, o Options) *Result {
	v := newView(s)
	res := &Result{PodsPerAZ: map[string]int{}, NodesPerAZ: map[string]Nodes{}, EC2Nodes: v.ec2Nodes, FargateNodes: len(s.Nodes) - v.ec2Nodes}
	for i := range s.Nodes {
		az := s.Nodes[i].Labels[corev1.LabelTopologyZone]
		n := res.NodesPerAZ[az]
		if IsFargateNode(&s.Nodes[i]) {
			n.Fargate++
		} else {
			n.EC2++
		}
		res.NodesPerAZ[az] = n
	}
	var fs []rules.Finding
	for _, w := range v.workloads {
		st := v.state(w, o.Price)
		res.Workloads = append(res.Workloads, st)
		for az, n := range st.PodsPerAZ {
			res.PodsPerAZ[az] += n
		}
		if len(s.Unread) > 0 {
			continue
		}
		fs = append(fs, v.drift(w)...)
		fs = append(fs, v.profileGone(w)...)
		fs = append(fs, v.refused(w)...)
		fs = append(fs, v.unplaced(w)...)
		fs = append(fs, v.keptOff(w)...)
		fs = append(fs, v.skew(w)...)
		fs = append(fs, v.fargateKubelets(w)...)
		fs = append(fs, v.stuck(w, o.StuckAfter)...)
		fs = append(fs, v.billed(w, st)...)
		fs = append(fs, v.crashLooping(w, o.Settings)...)
	}
	if len(s.Unread) == 0 {
		fs = append(fs, v.nodeKubelets()...)
		fs = append(fs, v.nullNodes()...)
		fs = append(fs, v.subnetHeadroom(o.SubnetHeadroom, res.Workloads)...)
	}
	for i := range fs {
		if fs[i].Severity == 0 {
			fs[i].Severity = fs[i].Rule.Severity
		}
	}
	slices.SortStableFunc(fs, func(a, b rules.Finding) int {
		return cmp.Or(cmp.Compare(a.Object.Namespace, b.Object.Namespace), cmp.Compare(a.Object.Kind, b.Object.Kind),
			cmp.Compare(a.Object.Name, b.Object.Name), cmp.Compare(a.Rule.ID, b.Rule.ID))
	})
	res.Findings = fs
	return res
}

func finding(r *rules.Rule, ref object.Ref, fix, format string, args ...any) rules.Finding {
	f := rules.Finding{Rule: r, Object: ref, Message: fmt.Sprintf(format, args...)}
	if fix != "" {
		f.Details = map[string]string{FixDetail: fix}
	}
	return f
}

func (v *view) state(w *Workload, price fargate.Price) WorkloadState {
	st := WorkloadState{Workload: w, PodsPerAZ: map[string]int{}}
	for _, p := range w.Pods {
		switch {
		case !Alive(p):
		case pending(p):
			st.Pending++
		case v.onFargate(p):
			st.Fargate++
			if az := v.zone(p); az != "" {
				st.PodsPerAZ[az]++
			}
			sizing := fargate.SizePod(&p.Spec)
			if sizing.Fits {
				st.RequestedMonthlyUSD += price.Monthly(sizing.Provisioned, sizing.EphemeralGiB, 1)
			}
			if billed, err := fargate.ParseSize(p.Annotations[fargate.CapacityProvisionedAnnotation]); err == nil {
				st.BilledMonthlyUSD += price.Monthly(billed, sizing.EphemeralGiB, 1)
				if sizing.Fits && billed != sizing.Provisioned {
					st.misbilled++
					st.billedSize, st.neededSize = billed, sizing.Provisioned
				}
			}
		default:
			st.EC2++
		}
	}
	return st
}

// drift: pods off Fargate that the ACTIVE profiles would place there now.
func (v *view) drift(w *Workload) []rules.Finding {
	if v.active == nil || w.Object.Ref.Kind == "DaemonSet" {
		return nil
	}
	var ec2, pend, total int
	var profile string
	for _, p := range w.Pods {
		if !Alive(p) || fargate.DaemonSetPod(p.OwnerReferences) {
			continue
		}
		total++
		if p.Spec.SchedulerName == fargate.SchedulerName || v.onFargate(p) {
			continue
		}
		pl := fargate.Place(v.active, p.Namespace, template(p))
		if !pl.Fargate {
			continue
		}
		profile = pl.Profile
		if pending(p) {
			pend++
		} else {
			ec2++
		}
	}
	if ec2+pend == 0 {
		return nil
	}
	var where []string
	if ec2 > 0 {
		where = append(where, plural(ec2, "on an EC2 node", "on EC2 nodes"))
	}
	if pend > 0 {
		where = append(where, fmt.Sprintf("%d Pending", pend))
	}
	return []rules.Finding{finding(Drift, w.Object.Ref, RestartCommand(w.Object.Ref, w.podLabels()),
		"%d of %d pods run off Fargate (%s) although Fargate profile %q (ACTIVE) matches them now: they were created while "+
			"no profile matched, and EKS places a pod only when it is created",
		ec2+pend, total, strings.Join(where, ", "), profile)}
}

// profileGone: pods on Fargate under a profile that is not ACTIVE any more.
func (v *view) profileGone(w *Workload) []rules.Finding {
	if v.Profiles == nil {
		return nil
	}
	gone := map[string]int{}
	sample := map[string]*corev1.Pod{} // a pod of each gone profile
	for _, p := range w.Pods {
		name := p.Labels[fargate.ProfileLabel]
		if !Alive(p) || !v.onFargate(p) || name == "" || v.placing[name] {
			continue
		}
		gone[name]++
		sample[name] = p
	}
	var out []rules.Finding
	for _, name := range slices.Sorted(maps.Keys(gone)) {
		state := "no longer exists"
		if s := v.status[name]; s != "" {
			state = "is " + s
		}
		next, fix := "recreated, they go to EC2 nodes or stay Pending: no ACTIVE profile matches them; create one first", ""
		p := sample[name]
		if pl := fargate.Place(v.active, p.Namespace, template(asCreated(p))); pl.Fargate {
			next, fix = fmt.Sprintf("restarted, they move to Fargate profile %q", pl.Profile), RestartCommand(w.Object.Ref, w.podLabels())
		}
		out = append(out, finding(ProfileGone, w.Object.Ref, fix, "%s on Fargate under profile %q, which %s; %s",
			plural(gone[name], "pod runs", "pods run"), name, state, next))
	}
	return out
}

// refused: pods fargate-scheduler left Pending with a Warning event.
func (v *view) refused(w *Workload) []rules.Finding {
	var n int
	var newest *corev1.Event
	for _, p := range w.Pods {
		e := v.events[p.UID]
		if !pending(p) || p.Spec.SchedulerName != fargate.SchedulerName || e == nil {
			continue
		}
		n++
		if newest == nil || eventTime(e).After(eventTime(newest)) {
			newest = e
		}
	}
	if n == 0 {
		return nil
	}
	return []rules.Finding{finding(Refused, w.Object.Ref, "", "%s Pending, refused by fargate-scheduler: %q",
		plural(n, "pod is", "pods are"), newest.Message)}
}

// unplaced: Pending pods left to the default scheduler on a cluster without EC2 nodes.
func (v *view) unplaced(w *Workload) []rules.Finding {
	if v.ec2Nodes > 0 {
		return nil
	}
	n := 0
	for _, p := range w.Pods {
		if !pending(p) || p.Spec.SchedulerName != "" && p.Spec.SchedulerName != corev1.DefaultSchedulerName ||
			p.Annotations[fargate.ComputeTypeAnnotation] == "ec2" {
			continue
		}
		if v.active != nil && fargate.Place(v.active, p.Namespace, template(p)).Fargate {
			continue // a profile matches it now: drift
		}
		n++
	}
	if n == 0 {
		return nil
	}
	why := "no Fargate profile matched when they were created"
	if v.active != nil {
		why = "no ACTIVE Fargate profile matches"
	}
	return []rules.Finding{finding(Unplaced, w.Object.Ref, "", "%s Pending: %s (namespace %q, labels %s) and the cluster has no EC2 nodes",
		plural(n, "pod is", "pods are"), why, w.Namespace(), labelsOf(w))}
}

// keptOff: pods annotated compute-type ec2, Pending without EC2 nodes.
func (v *view) keptOff(w *Workload) []rules.Finding {
	if v.ec2Nodes > 0 {
		return nil
	}
	n := 0
	for _, p := range w.Pods {
		if pending(p) && p.Annotations[fargate.ComputeTypeAnnotation] == "ec2" {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	ref := w.Object.Ref
	fix := ""
	if w.Object.Pod != nil && w.Object.Pod.Path != "" {
		fix = fmt.Sprintf(`kubectl patch -n %s %s/%s --type json -p='[{"op": "remove", "path": "/%s/metadata/annotations/eks.amazonaws.com~1compute-type"}]'`,
			ref.Namespace, strings.ToLower(ref.Kind), ref.Name, strings.ReplaceAll(w.Object.Pod.Path, ".", "/"))
	}
	msg := "%s Pending: annotated eks.amazonaws.com/compute-type: ec2, and the cluster has no EC2 nodes"
	if ref.Namespace == "kube-system" && ref.Name == "coredns" {
		msg += "; without CoreDNS nothing in the cluster resolves names"
	}
	return []rules.Finding{finding(KeptOffFargate, ref, fix, msg, plural(n, "pod is", "pods are"))}
}

// skew: a workload's Fargate pods per AZ, against the AZs of its profile's nodes.
func (v *view) skew(w *Workload) []rules.Finding {
	perAZ := map[string][]*corev1.Pod{}
	profile := ""
	for _, p := range w.Pods {
		if Alive(p) && v.onFargate(p) {
			if az := v.zone(p); az != "" {
				perAZ[az] = append(perAZ[az], p)
				profile = cmp.Or(profile, p.Labels[fargate.ProfileLabel])
			}
		}
	}
	count := 0
	for _, ps := range perAZ {
		count += len(ps)
	}
	if count < 2 {
		return nil
	}
	zones := maps.Clone(v.zones[profile]) // the AZs of the profile's Fargate nodes, this workload's among them
	if zones == nil {
		zones = map[string]bool{}
	}
	for az := range perAZ {
		zones[az] = true
	}
	azs, load := slices.Sorted(maps.Keys(zones)), map[string]int{}
	most := ""
	var parts []string
	for _, az := range azs {
		n := len(perAZ[az])
		load[az] = n
		parts = append(parts, fmt.Sprintf("%s %d", az, n))
		if most == "" || n > len(perAZ[most]) {
			most = az
		}
	}
	if spread.Skew(load, azs) <= 1 { // the balance spread keeps
		return nil
	}
	slices.SortFunc(perAZ[most], func(a, b *corev1.Pod) int { return cmp.Compare(a.Name, b.Name) })
	victim := perAZ[most][0]
	return []rules.Finding{finding(AZSkew, w.Object.Ref, fmt.Sprintf("kubectl delete pod -n %s %s", victim.Namespace, victim.Name),
		"Fargate pods per AZ: %s (fargate-scheduler ignores topologySpreadConstraints and picks a subnet at random)",
		strings.Join(parts, ", "))}
}

// fargateKubelets: a workload's pods on Fargate nodes whose kubelet is behind the control plane.
func (v *view) fargateKubelets(w *Workload) []rules.Finding {
	if v.Cluster.Version == "" {
		return nil
	}
	n, oldest := 0, ""
	for _, p := range w.Pods {
		node := v.nodes[p.Spec.NodeName]
		if !Alive(p) || node == nil || !IsFargateNode(node) {
			continue
		}
		if m := kubeletMinor(node); m != "" && eks.CompareMinor(m, v.Cluster.Version) < 0 {
			n++
			if oldest == "" || eks.CompareMinor(m, oldest) < 0 {
				oldest = m
			}
		}
	}
	if n == 0 {
		return nil
	}
	return []rules.Finding{finding(KubeletSkew, w.Object.Ref, RestartCommand(w.Object.Ref, w.podLabels()),
		"%s on Fargate nodes with kubelet %s, behind the control plane (%s): restart them before the next upgrade",
		plural(n, "pod runs", "pods run"), oldest, v.Cluster.Version)}
}

// nodeKubelets: EC2 nodes behind the control plane, per managed node group.
func (v *view) nodeKubelets() []rules.Finding {
	if v.Cluster.Version == "" {
		return nil
	}
	type group struct {
		nodes  int
		oldest string
	}
	groups := map[object.Ref]*group{}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		m := kubeletMinor(n)
		if IsFargateNode(n) || m == "" || eks.CompareMinor(m, v.Cluster.Version) >= 0 {
			continue
		}
		ref := object.Ref{APIVersion: "v1", Kind: "Node", Name: n.Name}
		if ng := n.Labels[eks.NodegroupLabel]; ng != "" {
			ref = object.Ref{APIVersion: "eks.amazonaws.com", Kind: "Nodegroup", Name: ng}
		}
		g := groups[ref]
		if g == nil {
			g = &group{}
			groups[ref] = g
		}
		g.nodes++
		if g.oldest == "" || eks.CompareMinor(m, g.oldest) < 0 {
			g.oldest = m
		}
	}
	var out []rules.Finding
	for ref, g := range groups {
		fix := ""
		if ref.Kind == "Nodegroup" {
			fix = fmt.Sprintf("aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s", cmp.Or(v.Cluster.Name, "<cluster>"), ref.Name)
		}
		them := "them"
		if g.nodes == 1 {
			them = "it"
		}
		out = append(out, finding(KubeletSkew, ref, fix, "%s with kubelet %s, behind the control plane (%s): update %s before the next upgrade",
			plural(g.nodes, "node"), g.oldest, v.Cluster.Version, them))
	}
	return out
}

// stuck: pods Terminating for longer than after.
func (v *view) stuck(w *Workload, after time.Duration) []rules.Finding {
	if after <= 0 {
		after = DefaultStuckAfter
	}
	var out []rules.Finding
	for _, p := range w.Pods {
		if p.DeletionTimestamp == nil {
			continue
		}
		// The deletion timestamp is when the grace period ends.
		since := v.Now.Sub(p.DeletionTimestamp.Time)
		if grace := p.DeletionGracePeriodSeconds; grace != nil {
			since += time.Duration(*grace) * time.Second
		}
		if since < after {
			continue
		}
		ref := object.Ref{APIVersion: "v1", Kind: "Pod", Namespace: p.Namespace, Name: p.Name}
		fix := fmt.Sprintf("kubectl delete pod -n %s %s --grace-period=0 --force", p.Namespace, p.Name)
		held := "no finalizers: its node did not confirm that it stopped"
		if len(p.Finalizers) > 0 {
			fix = fmt.Sprintf(`kubectl patch pod -n %s %s --type merge -p '{"metadata":{"finalizers":null}}'`, p.Namespace, p.Name)
			held = "held by finalizers " + strings.Join(p.Finalizers, ", ")
		}
		msg := fmt.Sprintf("Terminating for %s (%s)", since.Round(time.Second), held)
		if w.Object.Ref != ref {
			msg += ", a pod of " + w.Object.Ref.String()
		}
		out = append(out, finding(Stuck, ref, fix, "%s", msg))
	}
	return out
}

// billed: pods billed at another size than their requests need (counted by state).
func (v *view) billed(w *Workload, st WorkloadState) []rules.Finding {
	if st.misbilled == 0 {
		return nil
	}
	f := finding(Billed, w.Object.Ref, RestartCommand(w.Object.Ref, w.podLabels()),
		"%s billed at %s, their requests need %s: $%.2f/month billed for the pods on Fargate, $%.2f/month as requested",
		plural(st.misbilled, "pod is", "pods are"), st.billedSize, st.neededSize, st.BilledMonthlyUSD, st.RequestedMonthlyUSD)
	return []rules.Finding{f}
}

// nullNodes: Fargate nodes named fargate-null.
func (v *view) nullNodes() []rules.Finding {
	n := v.nodes[fargate.NullNodeName]
	if n == nil {
		return nil
	}
	vpc := cmp.Or(v.Cluster.VPCID, "<vpc-id>")
	return []rules.Finding{finding(NullNode, object.Ref{APIVersion: "v1", Kind: "Node", Name: n.Name},
		fmt.Sprintf(`aws ec2 modify-vpc-attribute --vpc-id %s --enable-dns-hostnames '{"Value":true}'`, vpc),
		"a Fargate node is named %s: VPC %s has DNS hostnames disabled, so only one Fargate pod runs at a time (%s waiting)",
		fargate.NullNodeName, vpc, plural(v.countPending(), "Fargate pod"))}
}

func (v *view) countPending() int {
	n := 0
	for i := range v.Pods {
		if p := &v.Pods[i]; pending(p) && p.Spec.SchedulerName == fargate.SchedulerName {
			n++
		}
	}
	return n
}

func labelsOf(w *Workload) string {
	l := w.podLabels()
	if len(l) == 0 {
		return "(none)"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(l)) {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, ",")
}

// plural renders a count with a noun: plural(1, "pod") is "1 pod", plural(2,
// "pod") "2 pods"; with a second form, it is used for other than one.
func plural(n int, one string, other ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(other) > 0 {
		return fmt.Sprintf("%d %s", n, other[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// subnetHeadroom: the ACTIVE profiles whose subnets have fewer free
// addresses than headroom, or than their workloads (states) may need.
func (v *view) subnetHeadroom(headroom int, states []WorkloadState) []rules.Finding {
	if v.Foundation == nil {
		return nil
	}
	free := map[string]int{}
	for _, sn := range v.Foundation.Subnets {
		if sn.Free != nil {
			free[sn.ID] = *sn.Free
		}
	}
	need := map[string]int{}         // by profile
	needers := map[string][]string{} // the workloads that need addresses, by profile
	if headroom == 0 {
		most := map[object.Ref]int{} // the most replicas an autoscaler gives a workload, by kind, namespace and name
		for _, a := range v.Autoscalers {
			t := a.Spec.ScaleTargetRef
			most[object.Ref{Kind: t.Kind, Namespace: a.Namespace, Name: t.Name}] = int(a.Spec.MaxReplicas)
		}
		for _, st := range states {
			w, pt := st.Workload, st.Workload.Object.Pod
			if pt == nil || pt.Replicas == 0 || finished(w.Object) {
				continue
			}
			replicas := max(pt.Replicas, most[object.Ref{Kind: w.Object.Ref.Kind, Namespace: w.Namespace(), Name: w.Object.Ref.Name}])
			where := fargate.Place(v.active, w.Namespace(), pt.Template)
			if !where.Fargate {
				continue
			}
			n := max(replicas-st.Fargate, 0) + surge(w.Object, replicas)
			if n > 0 {
				need[where.Profile] += n
				needers[where.Profile] = append(needers[where.Profile], fmt.Sprintf("%s %s/%s %d", w.Object.Ref.Kind, w.Namespace(), w.Object.Ref.Name, n))
			}
		}
	}
	var out []rules.Finding
	for _, p := range v.active {
		total, known := 0, true
		var parts []string
		for _, id := range p.Subnets {
			n, ok := free[id]
			known = known && ok
			total += n
			parts = append(parts, fmt.Sprintf("%s %d", id, n))
		}
		want := cmp.Or(headroom, need[p.Name])
		if !known || len(p.Subnets) == 0 || total >= want {
			continue
		}
		why := fmt.Sprintf("the %d of --subnet-headroom", want)
		if headroom == 0 {
			why = fmt.Sprintf("the %d its workloads may need: %s (replicas not yet on Fargate, and rollout surge)", want, strings.Join(needers[p.Name], ", "))
		}
		ref := object.Ref{APIVersion: "aws", Kind: "FargateProfile", Name: p.Name}
		out = append(out, finding(SubnetHeadroom, ref, "", "the subnets of profile %s have %s (%s), fewer than %s",
			p.Name, plural(total, "free address", "free addresses"), strings.Join(parts, ", "), why))
	}
	return out
}

// finished reports whether the workload is a Job that completed or failed:
// it needs no address any more.
func finished(o *object.Object) bool {
	j, ok := o.Typed.(*batchv1.Job)
	if !ok {
		return false
	}
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue
	})
}

// surge is how many pods a rollout of the workload adds beyond its
// replicas: a Deployment's maxSurge (25% by default, rounded up); a
// Rollout's is taken as 25%, other workloads replace pods in place.
func surge(o *object.Object, replicas int) int {
	pct := intstr.FromString("25%")
	switch t := o.Typed.(type) {
	case *appsv1.Deployment:
		if t.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
			return 0
		}
		if ru := t.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxSurge != nil {
			pct = *ru.MaxSurge
		}
	case *object.Rollout:
	default:
		return 0
	}
	n, err := intstr.GetScaledValueFromIntOrPercent(&pct, replicas, true)
	if err != nil {
		return 0
	}
	return n
}

// crashLoopReasons are the reasons a container waits for while the kubelet
// backs off restarting it.
var crashLoopReasons = map[string]bool{"CrashLoopBackOff": true, "RunContainerError": true, "CreateContainerError": true}

// crashLooping: pods on Fargate with a container waiting to be restarted,
// or that the runtime could not start (a pod that never restarts fails
// so), and what of Fargate stops it (fargate.StartFailures).
func (v *view) crashLooping(w *Workload, s fargate.Settings) []rules.Finding {
	var n int
	var example *corev1.ContainerStatus
	var cause *fargate.StartFailure
	for _, p := range w.Pods {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || !v.onFargate(p) {
			continue
		}
		st := looping(p)
		if st == nil {
			continue
		}
		n++
		if example == nil {
			example = st
		}
		if cause == nil {
			if f := v.startFailure(p, st.Name, s); f != nil {
				example, cause = st, f
			}
		}
	}
	if n == 0 {
		return nil
	}
	var how []string
	last := example.LastTerminationState.Terminated
	if example.State.Waiting != nil {
		how = append(how, "waiting in "+example.State.Waiting.Reason)
	} else {
		last = example.State.Terminated // StartError, not restarted
	}
	if last != nil {
		ended := fmt.Sprintf("ended with %s (exit code %d)", cmp.Or(last.Reason, "an error"), last.ExitCode)
		if example.State.Waiting != nil {
			ended = "last " + ended
		}
		if cause == nil && last.Message != "" {
			ended += ": " + truncate(last.Message, 240)
		}
		how = append(how, ended)
	}
	if example.RestartCount > 0 {
		how = append(how, "restarted "+plural(int(example.RestartCount), "time"))
	}
	msg := fmt.Sprintf("%s: container %q %s", plural(n, "pod does not run", "pods do not run"), example.Name, strings.Join(how, ", "))
	f := finding(CrashLooping, w.Object.Ref, "", "%s", msg)
	if cause != nil {
		f.Message += fmt.Sprintf("; the cause: %s (%s)", cause.Detail, startRules[cause.Kind])
		f.Severity = rules.Blocker
	}
	return []rules.Finding{f}
}

// startRules are the check rules that report each kind of start failure.
var startRules = map[fargate.StartFailureKind]string{fargate.StartLimit: "FG025", fargate.StartMetadata: "FG027"}

// looping returns the status of the first container (init containers
// first) of a pod that waits to be restarted, or that the runtime could
// not start; nil when none.
func looping(p *corev1.Pod) *corev1.ContainerStatus {
	for _, list := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses} {
		for i := range list {
			if looped(&list[i]) {
				return &list[i]
			}
		}
	}
	return nil
}

// looped reports whether a container waits to be restarted, or ended
// because the runtime could not start it.
func looped(s *corev1.ContainerStatus) bool {
	if w := s.State.Waiting; w != nil {
		return crashLoopReasons[w.Reason]
	}
	return s.State.Terminated != nil && s.State.Terminated.Reason == startError
}

// startError is the reason of a container the runtime could not start.
const startError = "StartError"

// startFailure returns why Fargate does not start a container of a pod on
// Fargate, at the size it was provisioned with (else the one its requests
// need); nil when Fargate is not the cause.
func (v *view) startFailure(p *corev1.Pod, container string, s fargate.Settings) *fargate.StartFailure {
	if !v.onFargate(p) {
		return nil
	}
	size, err := fargate.ParseSize(p.Annotations[fargate.CapacityProvisionedAnnotation])
	if err != nil {
		sizing := fargate.SizePod(&p.Spec)
		if !sizing.Fits {
			return nil
		}
		size = sizing.Provisioned
	}
	for _, f := range fargate.StartFailures(&p.Spec, size, s) {
		if f.Container == container {
			return &f
		}
	}
	return nil
}

// truncate shortens s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
