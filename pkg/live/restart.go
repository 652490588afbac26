package live

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/pkg/object"
)

// RestartCommand is the command that recreates a workload's pods so that EKS
// places them again: a rollout restart where the controller has one (its
// rolling update keeps PodDisruptionBudgets and maxUnavailable), else what
// to do. ref names the workload with its namespace; podLabels are the
// labels of its pods.
func RestartCommand(ref object.Ref, podLabels map[string]string) string {
	ns := ref.Namespace
	switch ref.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		kind := strings.ToLower(ref.Kind)
		return fmt.Sprintf("kubectl rollout restart -n %s %s/%s && kubectl rollout status -n %s %s/%s", ns, kind, ref.Name, ns, kind, ref.Name)
	case "Rollout":
		return fmt.Sprintf("kubectl argo rollouts restart -n %s %s && kubectl argo rollouts status -n %s %s", ns, ref.Name, ns, ref.Name)
	case "Pod":
		return fmt.Sprintf("# Pod %s/%s: delete it and create it again", ns, ref.Name)
	case "Job", "CronJob":
		return fmt.Sprintf("# %s %s/%s: pods of runs already started keep their placement; new runs are placed anew", ref.Kind, ns, ref.Name)
	}
	if len(podLabels) == 0 {
		return fmt.Sprintf("# %s %s/%s: delete its pods one at a time; it recreates them", ref.Kind, ns, ref.Name)
	}
	return fmt.Sprintf("kubectl delete pods -n %s -l %s  # %s/%s recreates them", ns, labels.Set(podLabels).String(), ref.Kind, ref.Name)
}
