package live

import corev1 "k8s.io/api/core/v1"

// Trim drops from a node or a pod what Analyze does not read, for caches
// that keep thousands of them (watch's informers): a node keeps its
// metadata and kubelet version; a pod keeps its metadata and spec (check's
// rules read a bare pod's spec) and, of its status, the phase and the
// containers that wait (with their restarts and how they last ended) or
// that the runtime could not start.
// Anything else is returned as it is. FuzzAnalyze checks that Analyze finds
// the same in a trimmed snapshot; a rule that reads more of them must keep
// it here.
func Trim(o any) any {
	switch t := o.(type) {
	case *corev1.Node:
		t.Spec = corev1.NodeSpec{}
		t.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: t.Status.NodeInfo.KubeletVersion}}
	case *corev1.Pod:
		t.Status = corev1.PodStatus{Phase: t.Status.Phase,
			InitContainerStatuses: waiting(t.Status.InitContainerStatuses), ContainerStatuses: waiting(t.Status.ContainerStatuses)}
	}
	return o
}

// waiting keeps of statuses those of the containers that wait, or that the
// runtime could not start: their name, restarts, state and how they last
// ended.
func waiting(statuses []corev1.ContainerStatus) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, s := range statuses {
		if !looped(&s) {
			continue
		}
		kept := corev1.ContainerStatus{Name: s.Name, RestartCount: s.RestartCount}
		if w := s.State.Waiting; w != nil {
			kept.State.Waiting = &corev1.ContainerStateWaiting{Reason: w.Reason}
		}
		kept.State.Terminated = terminated(s.State.Terminated)
		kept.LastTerminationState.Terminated = terminated(s.LastTerminationState.Terminated)
		out = append(out, kept)
	}
	return out
}

// terminated keeps how a container ended; nil for nil.
func terminated(t *corev1.ContainerStateTerminated) *corev1.ContainerStateTerminated {
	if t == nil {
		return nil
	}
	return &corev1.ContainerStateTerminated{Reason: t.Reason, ExitCode: t.ExitCode, Message: t.Message}
}
