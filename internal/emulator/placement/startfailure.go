package placement

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// The annotations with which fargate-scheduler marks a pod holding a
// container that does not get going (fargate.StartFailures). KWOK's stages
// (Stages) fail the container, with StartError and the message of
// StartFailureErrorAnnotation, or with Error and the code of
// StartFailureExitCodeAnnotation when it ran and exited; then they keep it
// in CrashLoopBackOff. Without them KWOK would run it. Only the first such
// container is marked (init containers first, as the kubelet starts them):
// KWOK's templates compare names, not lists.
const (
	StartFailureContainerAnnotation = "fargatekit.io/start-failure-container"
	StartFailureErrorAnnotation     = "fargatekit.io/start-failure-error"
	StartFailureExitCodeAnnotation  = "fargatekit.io/start-failure-exit-code"
)

// startAnnotations mark the pod for KWOK's start-failure stages.
func startAnnotations(f fargate.StartFailure) map[string]string {
	a := map[string]string{StartFailureContainerAnnotation: f.Container}
	if f.Error != "" {
		a[StartFailureErrorAnnotation] = f.Error
	}
	if f.Kind != fargate.StartLimit { // the container ran, and exited
		a[StartFailureExitCodeAnnotation] = fmt.Sprint(f.ExitCode)
	}
	return a
}

// startEvents records what the kubelet reports of a container that does
// not get going: the runtime's error, if it refused to start it, and the
// back-off.
func (s *Scheduler) startEvents(ctx context.Context, pod *corev1.Pod, node string, f fargate.StartFailure) error {
	kubelet := corev1.EventSource{Component: "kubelet", Host: node}
	type event struct{ typ, reason, message string }
	var events []event
	if f.Error != "" {
		events = append(events, event{corev1.EventTypeWarning, "Failed", "Error: " + f.Error})
	}
	events = append(events, event{corev1.EventTypeWarning, "BackOff",
		fmt.Sprintf("Back-off restarting failed container %s in pod %s_%s(%s)", f.Container, pod.Name, pod.Namespace, pod.UID)})
	for _, e := range events {
		if err := s.record(ctx, pod, kubelet, e.typ, e.reason, e.message); err != nil {
			return err
		}
	}
	return nil
}
