package availability

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

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
			pdb, ok := o.Typed.(*policyv1.PodDisruptionBudget)
			if !ok {
				continue
			}
			// A missing selector selects no pods. An empty one ({}) selects
			// every pod of the namespace in policy/v1 and none in v1beta1.
			sel := labels.Nothing()
			if s := pdb.Spec.Selector; s != nil && (o.Ref.APIVersion != "policy/v1beta1" || len(s.MatchLabels)+len(s.MatchExpressions) > 0) {
				parsed, err := metav1.LabelSelectorAsSelector(s)
				if err != nil {
					continue
				}
				sel = parsed
			}
			budgets = append(budgets, budget{ns: ctx.NamespaceOf(o.Ref), sel: sel})
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
