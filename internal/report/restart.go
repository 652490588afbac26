package report

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/plan"
	"k8s.io/apimachinery/pkg/labels"
)

// RestartCommand is the command that recreates a workload's pods so that
// EKS places them again.
func RestartCommand(w plan.Workload) string {
	ns := cmp.Or(w.Ref.Namespace, w.Namespace)
	switch w.Ref.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
		return fmt.Sprintf("kubectl rollout restart -n %s %s/%s && kubectl rollout status -n %s %s/%s",
			ns, strings.ToLower(w.Ref.Kind), w.Ref.Name, ns, strings.ToLower(w.Ref.Kind), w.Ref.Name)
	case "Rollout":
		return fmt.Sprintf("kubectl argo rollouts restart -n %s %s && kubectl argo rollouts status -n %s %s", ns, w.Ref.Name, ns, w.Ref.Name)
	case "Pod":
		return fmt.Sprintf("# Pod %s/%s: delete it and create it again", ns, w.Ref.Name)
	case "Job", "CronJob":
		return fmt.Sprintf("# %s %s/%s: pods of runs already started keep their placement; new runs are placed anew", w.Ref.Kind, ns, w.Ref.Name)
	}
	return fmt.Sprintf("kubectl delete pods -n %s -l %s  # %s/%s recreates them", ns, labels.Set(w.Labels).String(), w.Ref.Kind, w.Ref.Name)
}
