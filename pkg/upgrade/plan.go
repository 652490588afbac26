// Package upgrade plans an EKS cluster's upgrade to a later Kubernetes
// version, one minor version at a time as EKS requires, from what was read
// of the cluster: for each hop, what blocks it and the steps that carry it
// out, in order, with the commands. It does no I/O.
package upgrade

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/deprecation"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Facts are what a plan is made from.
type Facts struct {
	// Cluster is the EKS cluster's name, for the commands.
	Cluster string
	// Version is the control plane's minor version.
	Version string
	// NodeGroups are the cluster's managed node groups.
	NodeGroups []NodeGroup
	// Snapshot holds the nodes, pods and their owners.
	Snapshot *live.Snapshot
	// PDBs are the cluster's PodDisruptionBudgets.
	PDBs []*policyv1.PodDisruptionBudget
	// Declared are objects as written (last-applied configurations, Helm
	// releases), whose API versions may be removed on the way.
	Declared []*object.Object
	// Apply maps the files of declared objects that are not applied with
	// `kubectl apply -f FILE` to the command that applies them: a chart's
	// templates to helm upgrade, a kustomization's resources to kubectl
	// apply -k.
	Apply map[string]string
	// Eksctl, when set, is the eksctl ClusterConfig file the cluster is
	// managed with: the steps update it with eksctl, and the file's
	// metadata.version first.
	Eksctl string
	// Terraform, when set, says the cluster is managed with Terraform: the
	// steps set the versions of its resources in the configuration and
	// apply it.
	Terraform *Terraform
	// Insights are EKS's upgrade insights (ListInsights).
	Insights []Insight
	// Policy is what EKS refuses where that is unconfirmed.
	Policy eks.UpgradePolicy
	// Now dates the support periods.
	Now time.Time
}

// Terraform is where a Terraform configuration declares the cluster.
type Terraform struct {
	// Cluster is the address of its aws_eks_cluster.
	Cluster string
	// NodeGroups maps a managed node group's name to the address of its
	// aws_eks_node_group.
	NodeGroups map[string]string
}

// set is the step that sets a resource's version in the configuration.
func (t *Terraform) set(address, version, more string) string {
	how := ""
	if strings.HasPrefix(address, "module.") {
		how = ", through its module's inputs"
	}
	return fmt.Sprintf("set version = %q%s for %s in the Terraform configuration%s", version, more, address, how)
}

// setNodeGroup is the step that sets a node group's version.
func (t *Terraform) setNodeGroup(name, version string) string {
	return t.set(cmp.Or(t.NodeGroups[name], "the aws_eks_node_group of "+name), version, " (and release_version, if set, to a release of "+version+")")
}

// NodeGroup is a managed node group.
type NodeGroup struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// ReleaseVersion is its AMI release.
	ReleaseVersion string `json:"releaseVersion"`
}

// Insight is one of EKS's upgrade insights: a check EKS runs for the
// version a cluster goes to next.
type Insight struct {
	ID, Name string
	// Version is the Kubernetes version it checks for.
	Version string
	// Status is PASSING, WARNING, ERROR or UNKNOWN; Reason says why.
	Status, Reason string
	Description    string
}

// KubeletSkewInsight is the insight the plan computes itself, node group
// by node group and workload by workload (nodegroup-behind, fargate-behind).
const KubeletSkewInsight = "Kubelet version skew"

// Severity of an issue: a blocker stops the hop (EKS refuses it, or a step
// fails); a warning is a risk to weigh.
type Severity string

// Severities.
const (
	Blocker Severity = "blocker"
	Warning Severity = "warning"
)

// Kinds of issues.
const (
	RemovedAPI      = "removed-api"
	NodeGroupBehind = "nodegroup-behind"
	FargateBehind   = "fargate-behind"
	DrainBlocked    = "drain-blocked"
	PodStuck        = "pod-stuck-terminating"
	UnmanagedPod    = "unmanaged-pod"
	SingleReplica   = "single-replica"
	SelectorChange  = "selector-change"
	EKSInsight      = "eks-insight"
)

// Issue is something that blocks or endangers a hop.
type Issue struct {
	Kind     string   `json:"kind"`
	Severity Severity `json:"severity"`
	// Subject is what it is about: "node group system", "Deployment default/api".
	Subject string `json:"subject"`
	Message string `json:"message"`
	// Fix is a command, or what to do, when there is one.
	Fix string `json:"fix,omitempty"`
}

// Step is one step of a hop, with the commands that carry it out.
type Step struct {
	Title    string   `json:"title"`
	Commands []string `json:"commands"`
}

// Hop is one minor version step of the control plane.
type Hop struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	Issues []Issue `json:"issues"`
	Steps  []Step  `json:"steps"`
}

// Blocked reports whether an issue blocks the hop.
func (h *Hop) Blocked() bool {
	return slices.ContainsFunc(h.Issues, func(i Issue) bool { return i.Severity == Blocker })
}

// Support is a version's support on EKS.
type Support struct {
	Version string `json:"version"`
	// EndOfStandard and EndOfExtended are days, "2026-12-02"; "" unknown.
	EndOfStandard string `json:"endOfStandard"`
	EndOfExtended string `json:"endOfExtended"`
	// Phase is "standard", "extended" or "unsupported" at Facts.Now.
	Phase string `json:"phase"`
	// HourlyPrice is what EKS charges per cluster-hour in that phase.
	HourlyPrice float64 `json:"hourlyPrice"`
}

// String says a version's support dates and what it costs now.
func (v Support) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: ", v.Version)
	switch {
	case v.EndOfStandard == "":
		b.WriteString("support dates unknown")
	case v.EndOfExtended == "":
		fmt.Fprintf(&b, "standard support until %s, extended support end unknown", v.EndOfStandard)
	default:
		fmt.Fprintf(&b, "standard support until %s, extended until %s", v.EndOfStandard, v.EndOfExtended)
	}
	switch v.Phase {
	case "standard":
		fmt.Fprintf(&b, "; in standard support, $%.2f per cluster-hour", v.HourlyPrice)
	case "extended":
		fmt.Fprintf(&b, "; in extended support, $%.2f per cluster-hour instead of $%.2f (about $%.0f a month more)",
			v.HourlyPrice, StandardHourly, (v.HourlyPrice-StandardHourly)*730)
	case "unsupported":
		b.WriteString("; out of support: EKS upgrades such clusters itself")
	}
	return b.String()
}

// Plan is the upgrade path.
type Plan struct {
	Cluster string    `json:"cluster"`
	From    string    `json:"from"`
	To      string    `json:"to"`
	Current Support   `json:"current"`
	Target  Support   `json:"target"`
	Hops    []Hop     `json:"hops"`
	Now     time.Time `json:"-"`
}

// Prices of the EKS control plane per cluster-hour: in standard support,
// and in extended support (AWS's notice of 2024, quoted in
// WGBH-MLA/chowda#217). Prices change; these are the ones known.
const (
	StandardHourly = 0.10
	ExtendedHourly = 0.60
)

// SupportOf is a version's support at now.
func SupportOf(version string, now time.Time) Support {
	s := Support{Version: version, Phase: "unknown"}
	v, ok := eks.Lookup(version)
	if !ok {
		return s
	}
	day := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format(time.DateOnly)
	}
	s.EndOfStandard, s.EndOfExtended = day(v.EndOfStandard), day(v.EndOfExtended)
	switch {
	case now.Before(v.EndOfStandard):
		s.Phase, s.HourlyPrice = "standard", StandardHourly
	case v.EndOfExtended.IsZero() || now.Before(v.EndOfExtended):
		s.Phase, s.HourlyPrice = "extended", ExtendedHourly
	default:
		s.Phase = "unsupported"
	}
	return s
}

// Build plans the path from f.Version to target, one minor at a time. Each
// hop: the objects whose API versions the new version removes are migrated
// first; the control plane is updated; then the node groups are updated to
// it and the Fargate pods recreated on its kubelets. The first hop also
// carries what the cluster must fix before any update (node groups and
// Fargate pods behind the control plane) and the selector changes of the
// files.
func Build(f Facts, target string) (*Plan, error) {
	from, err := eks.ParseMinor(f.Version)
	if err != nil {
		return nil, fmt.Errorf("the cluster's version: %w", err)
	}
	to, err := eks.ParseMinor(target)
	if err != nil {
		return nil, fmt.Errorf("the target version: %w", err)
	}
	if eks.CompareMinor(to, from) <= 0 {
		return nil, fmt.Errorf("the cluster is on %s already; the target %s must be a later version (EKS does not downgrade)", from, to)
	}
	if _, ok := eks.Lookup(to); !ok {
		vs := eks.Versions()
		return nil, fmt.Errorf("EKS does not offer Kubernetes %s (the newest it offers is %s)", to, vs[len(vs)-1].Minor)
	}
	p := &Plan{Cluster: f.Cluster, From: from, To: to, Current: SupportOf(from, f.Now), Target: SupportOf(to, f.Now), Now: f.Now}
	a := newAnalysis(f)
	for v := from; eks.CompareMinor(v, to) < 0; v = eks.NextMinor(v) {
		p.Hops = append(p.Hops, a.hop(v, eks.NextMinor(v), v == from))
	}
	return p, nil
}

// analysis is the cluster's facts, indexed.
type analysis struct {
	f         Facts
	workloads []*live.Workload
	// ngNodes maps the node groups' nodes to their node group.
	ngNodes map[string]string
	// fargateNodes maps Fargate nodes to their kubelet's minor version.
	fargateNodes map[string]string
}

func newAnalysis(f Facts) *analysis {
	a := &analysis{f: f, ngNodes: map[string]string{}, fargateNodes: map[string]string{}}
	if f.Snapshot == nil {
		f.Snapshot = &live.Snapshot{}
		a.f = f
	}
	for i := range f.Snapshot.Nodes {
		n := &f.Snapshot.Nodes[i]
		if g, ok := n.Labels[eks.NodegroupLabel]; ok {
			a.ngNodes[n.Name] = g
		}
		if live.IsFargateNode(n) {
			v, _ := eks.ParseMinor(n.Status.NodeInfo.KubeletVersion)
			a.fargateNodes[n.Name] = v
		}
	}
	a.workloads = f.Snapshot.Workloads()
	return a
}

func (a *analysis) hop(from, to string, first bool) Hop {
	h := Hop{From: from, To: to, Issues: []Issue{}}
	// Before the update: removed APIs; in the first hop, what is behind.
	a.insights(&h)
	if mig := a.removedAPIs(&h, first); len(mig) > 0 {
		h.Steps = append(h.Steps, Step{Title: fmt.Sprintf("Migrate the objects declared with API versions Kubernetes %s does not serve", to), Commands: mig})
	}
	if first {
		h.Steps = append(h.Steps, a.selectorChanges(&h)...)
		var behind []NodeGroup
		for _, ng := range a.f.NodeGroups {
			if eks.CompareMinor(ng.Version, from) < 0 {
				behind = append(behind, ng)
				h.Issues = append(h.Issues, Issue{Kind: NodeGroupBehind, Severity: Blocker, Subject: "node group " + ng.Name,
					Message: fmt.Sprintf("is on %s: EKS refuses to update the control plane until every node group is on %s", ng.Version, from),
					Fix:     a.nodegroupUpdate(ng.Name, from)})
			}
		}
		if len(behind) > 0 {
			h.Steps = append(h.Steps, Step{Title: "Update the node groups behind the control plane to " + from, Commands: a.nodegroupCommands(behind, from)})
		}
		if restarts := a.fargateBehind(&h, from); len(restarts) > 0 {
			h.Steps = append(h.Steps, Step{Title: "Recreate the Fargate pods on kubelets older than " + from, Commands: restarts})
		}
	}
	h.Steps = append(h.Steps, Step{Title: "Update the control plane to " + to, Commands: a.clusterUpdate(to)})
	if len(a.f.NodeGroups) > 0 {
		// Every node group is updated in the hop (those behind, before the
		// control plane, updated twice): each of their nodes is drained.
		a.drains(&h, a.f.NodeGroups)
		h.Steps = append(h.Steps, Step{Title: "Update the node groups to " + to, Commands: a.nodegroupCommands(a.f.NodeGroups, to)})
	}
	if restarts := a.fargateRestarts(""); len(restarts) > 0 {
		h.Steps = append(h.Steps, Step{Title: "Recreate the Fargate pods, so that they run kubelets of " + to, Commands: restarts})
	}
	return h
}

// clusterUpdate returns the commands that update the control plane: with
// the AWS CLI, or eksctl from its ClusterConfig once it says the version.
func (a *analysis) clusterUpdate(version string) []string {
	if t := a.f.Terraform; t != nil {
		return []string{"# " + t.set(t.Cluster, version, ""), "terraform apply"}
	}
	if a.f.Eksctl != "" {
		return []string{
			fmt.Sprintf("# set metadata.version: %q in %s", version, a.f.Eksctl),
			fmt.Sprintf("eksctl upgrade cluster -f %s --approve", a.f.Eksctl),
		}
	}
	return []string{
		fmt.Sprintf("aws eks update-cluster-version --name %s --kubernetes-version %s", a.f.Cluster, version),
		fmt.Sprintf("aws eks wait cluster-active --name %s", a.f.Cluster),
	}
}

// nodegroupUpdate is the command that updates a node group; eksctl's waits
// for it.
func (a *analysis) nodegroupUpdate(name, version string) string {
	if t := a.f.Terraform; t != nil {
		return t.setNodeGroup(name, version) + ", then terraform apply"
	}
	if a.f.Eksctl != "" {
		return fmt.Sprintf("eksctl upgrade nodegroup --cluster %s --name %s --kubernetes-version %s", a.f.Cluster, name, version)
	}
	return fmt.Sprintf("aws eks update-nodegroup-version --cluster-name %s --nodegroup-name %s --kubernetes-version %s", a.f.Cluster, name, version)
}

func (a *analysis) nodegroupCommands(ngs []NodeGroup, version string) []string {
	var out []string
	if t := a.f.Terraform; t != nil {
		for _, ng := range ngs {
			out = append(out, "# "+t.setNodeGroup(ng.Name, version))
		}
		return append(out, "terraform apply")
	}
	for _, ng := range ngs {
		out = append(out, a.nodegroupUpdate(ng.Name, version))
		if a.f.Eksctl == "" {
			out = append(out, fmt.Sprintf("aws eks wait nodegroup-active --cluster-name %s --nodegroup-name %s", a.f.Cluster, ng.Name))
		}
	}
	return out
}

// insights reports EKS's upgrade insights for the hop's version that do
// not pass, but the one the plan computes itself: EKS refuses an update
// over an ERROR unless forced (when the policy says it does), so an ERROR
// blocks the hop.
func (a *analysis) insights(h *Hop) {
	for _, in := range a.f.Insights {
		if in.Version != h.To || in.Name == KubeletSkewInsight || (in.Status != "ERROR" && in.Status != "WARNING") {
			continue
		}
		sev := Warning
		if in.Status == "ERROR" && a.f.Policy.RefuseReadinessErrors {
			sev = Blocker
		}
		h.Issues = append(h.Issues, Issue{Kind: EKSInsight, Severity: sev, Subject: "EKS insight " + in.Name,
			Message: strings.TrimSpace(in.Description + " " + in.Reason),
			Fix:     fmt.Sprintf("aws eks describe-insight --cluster-name %s --id %s", a.f.Cluster, in.ID)})
	}
}

// removedAPIs reports the declared objects whose API versions are removed
// at the hop's version (in the first hop, also those removed already) and
// returns what to do for each.
func (a *analysis) removedAPIs(h *Hop, first bool) []string {
	var out []string
	for _, o := range a.f.Declared {
		api, ok := deprecation.Lookup(o.Ref.APIVersion, o.Ref.Kind)
		if !ok || api.RemovedIn == "" || api.StatusAt(h.To) != deprecation.Removed {
			continue
		}
		// Removed at this hop, or before it (reported in the first hop).
		already := first && api.StatusAt(h.From) == deprecation.Removed
		if api.RemovedIn != h.To && !already {
			continue
		}
		fix := fmt.Sprintf("rewrite %s with apiVersion %s and apply it again", subject(o.Ref), cmp.Or(api.Replacement, "(no replacement: remove it)"))
		h.Issues = append(h.Issues, Issue{Kind: RemovedAPI, Severity: Blocker, Subject: subject(o.Ref),
			Message: fmt.Sprintf("is declared as %s %s in %s, which Kubernetes %s no longer serves", o.Ref.APIVersion, o.Ref.Kind, where(o), api.RemovedIn),
			Fix:     fix})
		out = append(out, "# "+fix)
	}
	return out
}

func subject(r object.Ref) string {
	if r.Namespace == "" {
		return r.Kind + " " + r.Name
	}
	return r.Kind + " " + r.Namespace + "/" + r.Name
}

// fargateBehind reports the Fargate pods on kubelets older than version and
// returns the commands that recreate them.
func (a *analysis) fargateBehind(h *Hop, version string) []string {
	sev := Warning
	if a.f.Policy.RefuseFargateBehind {
		sev = Blocker
	}
	for _, w := range a.workloads {
		n := 0
		for _, p := range w.Pods {
			if v, ok := a.fargateNodes[p.Spec.NodeName]; ok && live.Alive(p) && eks.CompareMinor(v, version) < 0 {
				n++
			}
		}
		if n > 0 {
			h.Issues = append(h.Issues, Issue{Kind: FargateBehind, Severity: sev, Subject: subject(w.Object.Ref),
				Message: fmt.Sprintf("has %d Fargate pod(s) on kubelets older than the control plane's %s; they must be recreated before the control plane moves on", n, version),
				Fix:     restartOf(w)})
		}
	}
	return a.fargateRestarts(version)
}

// fargateRestarts returns the commands that recreate the workloads with
// Fargate pods: all of them, or with version those on older kubelets.
func (a *analysis) fargateRestarts(version string) []string {
	var out []string
	for _, w := range a.workloads {
		if slices.ContainsFunc(w.Pods, func(p *corev1.Pod) bool {
			v, ok := a.fargateNodes[p.Spec.NodeName]
			return ok && live.Alive(p) && (version == "" || eks.CompareMinor(v, version) < 0)
		}) {
			out = append(out, restartOf(w))
		}
	}
	return out
}

func restartOf(w *live.Workload) string {
	var podLabels map[string]string
	if w.Object.Pod != nil {
		podLabels = w.Object.Pod.Template.Labels
	}
	return live.RestartCommand(w.Object.Ref, podLabels)
}

// drains reports what will keep the node groups' nodes from draining when
// they are updated: PodDisruptionBudgets that allow no disruption and pods
// stuck Terminating make the update fail with PodEvictionFailure (unless
// forced); pods without a controller are evicted for good; workloads of
// one replica are down while their pod moves.
func (a *analysis) drains(h *Hop, ngs []NodeGroup) {
	before := len(h.Issues)
	defer func() { // blockers first
		slices.SortStableFunc(h.Issues[before:], func(x, y Issue) int { return cmp.Compare(x.Severity, y.Severity) })
	}()
	updated := map[string]bool{}
	for _, ng := range ngs {
		updated[ng.Name] = true
	}
	onUpdated := func(p *corev1.Pod) bool { return updated[a.ngNodes[p.Spec.NodeName]] }
	for _, pdb := range a.f.PDBs {
		if pdb.Status.DisruptionsAllowed > 0 {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		n := 0
		for i := range a.f.Snapshot.Pods {
			p := &a.f.Snapshot.Pods[i]
			if p.Namespace == pdb.Namespace && onUpdated(p) && live.Alive(p) && sel.Matches(labels.Set(p.Labels)) {
				n++
			}
		}
		if n > 0 {
			h.Issues = append(h.Issues, Issue{Kind: DrainBlocked, Severity: Blocker, Subject: "PodDisruptionBudget " + pdb.Namespace + "/" + pdb.Name,
				Message: fmt.Sprintf("allows no disruption and covers %d pod(s) on the node groups' nodes: their drain fails, and the node group update with it (PodEvictionFailure), unless forced", n),
				Fix:     "allow a disruption (lower minAvailable, raise maxUnavailable, or add replicas), or update with --force, which terminates the pods regardless"})
		}
	}
	for i := range a.f.Snapshot.Pods {
		p := &a.f.Snapshot.Pods[i]
		if !onUpdated(p) || p.DeletionTimestamp == nil || len(p.Finalizers) == 0 {
			continue
		}
		h.Issues = append(h.Issues, Issue{Kind: PodStuck, Severity: Blocker, Subject: "Pod " + p.Namespace + "/" + p.Name,
			Message: fmt.Sprintf("is Terminating, held by the finalizers %s: its node cannot drain, and the node group update fails (PodEvictionFailure)", strings.Join(p.Finalizers, ", ")),
			Fix:     fmt.Sprintf(`kubectl patch pod -n %s %s --type merge -p '{"metadata":{"finalizers":null}}'  # once whatever should remove them is known not to`, p.Namespace, p.Name)})
	}
	for _, w := range a.workloads {
		var on []*corev1.Pod
		for _, p := range w.Pods {
			if onUpdated(p) && live.Alive(p) && p.DeletionTimestamp == nil {
				on = append(on, p)
			}
		}
		if len(on) == 0 || w.Object.Ref.Kind == "DaemonSet" {
			continue
		}
		switch {
		case w.Object.Ref.Kind == "Pod":
			h.Issues = append(h.Issues, Issue{Kind: UnmanagedPod, Severity: Warning, Subject: subject(w.Object.Ref),
				Message: "has no controller: the drain evicts it and nothing creates it again",
				Fix:     "run it under a Deployment, or recreate it after the update"})
		case replicas(w) == 1:
			h.Issues = append(h.Issues, Issue{Kind: SingleReplica, Severity: Warning, Subject: subject(w.Object.Ref),
				Message: "runs one replica on the node groups' nodes: it is down while its pod moves to a new node",
				Fix:     "run two replicas or more, with a PodDisruptionBudget of maxUnavailable: 1"})
		}
	}
}

// replicas is a workload's desired replicas; 0 when it has no such field.
func replicas(w *live.Workload) int {
	if w.Object.Pod == nil {
		return 0
	}
	return w.Object.Pod.Replicas
}
