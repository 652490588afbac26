package placement

import (
	"context"
	"fmt"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
)

// The annotations with which fargate-scheduler marks a pod whose image does
// not pull. KWOK's stages (Stages) keep such a pod Pending, its container
// waiting in ErrImagePull, then ImagePullBackOff, with the message of
// ImagePullErrorAnnotation; without them KWOK would run it.
const (
	ImagePullContainerAnnotation = "fargatekit.io/image-pull-container"
	ImagePullErrorAnnotation     = "fargatekit.io/image-pull-error"
)

// pullFailure is the first container of a pod (init containers first, as
// the kubelet starts them) whose image does not pull.
type pullFailure struct {
	container, image string
	// err is the error of the pull, as containerd words it.
	err string
}

// imagePull decides whether the pod's images pull in subnet under its
// profile's pod execution role (foundation.Foundation.Pull); nil when they
// do, or when the scheduler knows no foundation.
func (s *Scheduler) imagePull(pod *corev1.Pod, profile *fargate.Profile, subnet string) *pullFailure {
	if s.Foundation == nil {
		return nil
	}
	for _, c := range append(append([]corev1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
		if why := s.Foundation.Pull(subnet, profile.PodExecutionRoleARN, c.Image); why != "" {
			return &pullFailure{container: c.Name, image: c.Image, err: pullError(c.Image, why)}
		}
	}
	return nil
}

// pullError is the error of a pull that fails for why, worded as containerd
// words a registry it cannot reach (a connection that times out: no route
// out of the subnet) or one that refuses it (no credentials for ECR). The
// wording is the emulator's: AWS does not document what Fargate reports.
func pullError(image string, why foundation.PullFailure) string {
	ref, host, path, object := image, "", "", "latest"
	if named, err := reference.ParseNormalizedNamed(image); err == nil {
		named = reference.TagNameOnly(named)
		ref, host, path = named.String(), reference.Domain(named), reference.Path(named)
		if host == "docker.io" {
			host = "registry-1.docker.io"
		}
		switch r := named.(type) {
		case reference.Digested:
			object = r.Digest().String()
		case reference.Tagged:
			object = r.Tag()
		}
	}
	manifest := fmt.Sprintf("https://%s/v2/%s/manifests/%s", host, path, object)
	cause := fmt.Sprintf("failed to do request: Head %q: dial tcp: i/o timeout", manifest)
	if why == foundation.PullDenied {
		cause = fmt.Sprintf("unexpected status from HEAD request to %s: 401 Unauthorized", manifest)
	}
	return fmt.Sprintf("rpc error: code = Unknown desc = failed to pull and unpack image %q: failed to resolve reference %q: %s", ref, ref, cause)
}

// pullEvents records what the kubelet reports of a pull that fails: the
// pull, its error, and the back-off.
func (s *Scheduler) pullEvents(ctx context.Context, pod *corev1.Pod, node string, f *pullFailure) error {
	kubelet := corev1.EventSource{Component: "kubelet", Host: node}
	for _, e := range []struct{ typ, reason, message string }{
		{corev1.EventTypeNormal, "Pulling", fmt.Sprintf("Pulling image %q", f.image)},
		{corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: %s", f.image, f.err)},
		{corev1.EventTypeWarning, "Failed", "Error: ErrImagePull"},
		{corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", f.image)},
		{corev1.EventTypeWarning, "Failed", "Error: ImagePullBackOff"},
	} {
		if err := s.record(ctx, pod, kubelet, e.typ, e.reason, e.message); err != nil {
			return err
		}
	}
	return nil
}

// annotations mark the pod for KWOK's stages.
func (f *pullFailure) annotations() map[string]string {
	return map[string]string{ImagePullContainerAnnotation: f.container, ImagePullErrorAnnotation: f.err}
}
