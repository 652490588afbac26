package live

import corev1 "k8s.io/api/core/v1"

// Trim drops from a node or a pod what Analyze does not read, for caches
// that keep thousands of them (watch's informers): a node keeps its
// metadata and kubelet version; a pod keeps its metadata and spec (check's
// rules read a bare pod's spec) and, of its status, the phase. Anything else
// is returned as it is. FuzzAnalyze checks that Analyze finds the same in a
// trimmed snapshot; a rule that reads more of them must keep it here.
func Trim(o any) any {
	switch t := o.(type) {
	case *corev1.Node:
		t.Spec = corev1.NodeSpec{}
		t.Status = corev1.NodeStatus{NodeInfo: corev1.NodeSystemInfo{KubeletVersion: t.Status.NodeInfo.KubeletVersion}}
	case *corev1.Pod:
		t.Status = corev1.PodStatus{Phase: t.Status.Phase}
	}
	return o
}
