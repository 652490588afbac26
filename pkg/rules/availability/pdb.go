package availability

import (
	"strings"

	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// longRunning are the kinds whose replicas serve continuously.
var longRunning = map[string]bool{"Deployment": true, "StatefulSet": true, "ReplicaSet": true, "ReplicationController": true, "Rollout": true}

// MissingPDB flags multi-replica Fargate workloads without a PodDisruptionBudget.
var MissingPDB = &rules.Rule{
	ID: "FG032", Name: "missing-pdb", Category: rules.CategoryAvailability, Severity: rules.Warning,
	Summary: "A multi-replica Fargate workload has no PodDisruptionBudget.",
	Doc: "EKS patches Fargate by evicting pods through the Eviction API, AZ by AZ, and honours PodDisruptionBudgets " +
		"while doing so. Without a budget, every replica can be evicted at once. (Deleting a Fargate profile ignores " +
		"budgets: see `fargatekit plan`.) The rule looks for a PodDisruptionBudget in the input, in the workload's " +
		"namespace, whose selector matches the pod template labels.",
	Remediation: "Add a PodDisruptionBudget with `maxUnavailable: 1` (or a `minAvailable` below the replica count) selecting the pods.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		type budget struct {
			ns  string
			sel labels.Selector
		}
		var budgets []budget
		for _, o := range c.Objects["PodDisruptionBudget"] {
			if _, sel, ok := budgetOf(o); ok {
				budgets = append(budgets, budget{ns: ctx.NamespaceOf(o.Ref), sel: sel})
			}
		}
		covered := make([]bool, c.Workloads.Len()) // by workload number
		for _, b := range budgets {
			for i := range c.Selected(b.ns, b.sel) {
				covered[i] = true
			}
		}
		i := -1
		for w := range c.Workloads.All() {
			i++
			if !w.Placement.Fargate || w.Replicas < 2 || !longRunning[w.Ref.Kind] {
				continue
			}
			if !covered[i] {
				report(rules.AtWorkload(w, "%d replicas on Fargate and no PodDisruptionBudget selects them: Fargate patching may evict them all at once", w.Replicas))
			}
		}
	},
}

// PDBBlocksPatching flags PodDisruptionBudgets that allow no disruption of
// the Fargate pods they select.
var PDBBlocksPatching = &rules.Rule{
	ID: "FG033", Name: "pdb-blocks-fargate-patching", Category: rules.CategoryAvailability, Severity: rules.Warning,
	Summary: "A PodDisruptionBudget allows no disruption of Fargate pods: Fargate patching deletes them anyway.",
	Doc: "EKS patches Fargate by evicting pods through the Eviction API, honouring PodDisruptionBudgets. A budget that " +
		"allows no disruption (`maxUnavailable: 0`, `minAvailable: 100%`, or a `minAvailable` equal to the replicas) " +
		"refuses every eviction: EKS then sends an \"EKS Fargate Pod Scheduled Termination\" event and deletes the pods " +
		"at the date it gives, all of them, however the budget is set (EKS user guide, \"Fargate OS patching\": a " +
		"budget's minimum availability must be below 100%). The emulator rehearses it (`fargatekit emulator fault " +
		"fargate-patch`). The rule reads the budgets in the input against the workloads they select, counting the " +
		"replicas as written (a HorizontalPodAutoscaler may change them) of all of them, as the disruption controller " +
		"counts every pod it selects, and fires when some run on Fargate.",
	Remediation: "Let one pod go at a time: `maxUnavailable: 1`, or a `minAvailable` below the replicas. Or restart the " +
		"pods yourself before the date EKS gives, which avoids its deletion.",
	CheckCluster: func(ctx *rules.Context, c *rules.Cluster, report func(rules.Finding)) {
		for _, o := range c.Objects["PodDisruptionBudget"] {
			pdb, sel, ok := budgetOf(o)
			if !ok {
				continue
			}
			// The budget counts every pod it selects, wherever it runs.
			replicas, names := 0, []string{}
			for _, w := range c.Selected(ctx.NamespaceOf(o.Ref), sel) {
				replicas += w.Replicas
				if w.Placement.Fargate && longRunning[w.Ref.Kind] {
					names = append(names, w.Ref.Kind+"/"+w.Ref.Name)
				}
			}
			if len(names) == 0 {
				continue
			}
			// As the disruption controller reads them: percentages of the
			// replicas, rounded up.
			path, field := "spec.minAvailable", pdb.Spec.MinAvailable
			if pdb.Spec.MaxUnavailable != nil {
				path, field = "spec.maxUnavailable", pdb.Spec.MaxUnavailable
			}
			if field == nil {
				continue
			}
			n, err := intstr.GetScaledValueFromIntOrPercent(field, replicas, true)
			if err != nil || (path == "spec.maxUnavailable" && n > 0) || (path == "spec.minAvailable" && n < replicas) {
				continue
			}
			why := strings.TrimPrefix(path, "spec.") + ": " + field.String()
			report(rules.At(o, path, "%s leaves none of the %d pods it selects free to go, those of %s on Fargate: Fargate patching cannot evict them, and EKS deletes them at the date it gives anyway",
				why, replicas, strings.Join(names, ", ")))
		}
	},
}

// budgetOf returns a PodDisruptionBudget and the pods it selects: a
// missing selector selects none; an empty one ({}) every pod of the
// namespace in policy/v1 and none in v1beta1. ok is false for an object
// that is no budget or whose selector does not parse.
func budgetOf(o *object.Object) (*policyv1.PodDisruptionBudget, labels.Selector, bool) {
	pdb, ok := o.Typed.(*policyv1.PodDisruptionBudget)
	if !ok {
		return nil, nil, false
	}
	sel := labels.Nothing()
	if s := pdb.Spec.Selector; s != nil && (o.Ref.APIVersion != "policy/v1beta1" || len(s.MatchLabels)+len(s.MatchExpressions) > 0) {
		parsed, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			return nil, nil, false
		}
		sel = parsed
	}
	return pdb, sel, true
}
