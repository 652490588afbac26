package placement

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ResyncAnnotation is what fargate-scheduler writes on a bound pod that KWOK
// has not started: the number of times it asked again. KWOK (0.8) drops a
// pod's event while its cache of node leases has not yet seen the lease of
// the pod's new node (the node counts as "read only"), and looks at the pod
// again only when the pod changes: in about one burst of a thousand pods,
// one pod stayed Pending for minutes. A change of this annotation is that
// change.
const ResyncAnnotation = "fargatekit.io/kwok-resync"

// resyncs are the waits after a binding before KWOK is asked again to start
// the pod, each after the one before: KWOK starts a pod well within the
// first (0.1-1 s after its binding in a burst of a thousand).
var resyncs = []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second}

// unstarted reports whether KWOK has not started a pod bound to node: it is
// still there, on that node, Pending, and no stage wrote its containers'
// statuses (the pods whose image pull fails get theirs from KWOK too).
func unstarted(pod *corev1.Pod, node string) bool {
	return pod.DeletionTimestamp == nil && pod.Spec.NodeName == node &&
		pod.Status.Phase == corev1.PodPending && len(pod.Status.ContainerStatuses) == 0
}

// resync waits after a pod's binding and, while KWOK has not started the
// pod, changes ResyncAnnotation so that KWOK sees the pod again, at most
// len(waits) times, until ctx ends. get reads the pod as the scheduler's
// informer has it (no request of its own per pod); false when it is gone.
func (s *Scheduler) resync(ctx context.Context, key types.NamespacedName, node string, waits []time.Duration, get func(types.NamespacedName) (*corev1.Pod, bool)) {
	for i, wait := range waits {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
		pod, ok := get(key)
		if !ok {
			return
		}
		if pod.Spec.NodeName == "" && pod.DeletionTimestamp == nil {
			continue // the informer has not seen the binding yet
		}
		if !unstarted(pod, node) {
			return
		}
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{ResyncAnnotation: strconv.Itoa(i + 1)}}})
		if _, err := s.Client.CoreV1().Pods(key.Namespace).Patch(ctx, key.Name, types.MergePatchType, patch, metav1.PatchOptions{}); apierrors.IsNotFound(err) {
			return
		} else if err != nil {
			slog.Warn("asking KWOK again to start a pod", "pod", key.String(), "err", err)
			continue
		}
		slog.Warn("KWOK has not started a bound pod: asked again", "pod", key.String(), "node", node, "after", wait, "time", i+1)
	}
}
