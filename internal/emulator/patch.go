package emulator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/internal/emulator/placement"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// A Fargate OS patch, as EKS runs one (the user guide's "Set actions for
// AWS Fargate OS patching events"): the Fargate pods created before EKS
// notified the patch are evicted through the Eviction API, so that their
// PodDisruptionBudgets hold, one AZ after another. When a pod's eviction
// fails, EKS sends the event "EKS Fargate Pod Scheduled Termination" to the
// account (EventBridge, source aws.eks) and deletes the pod at the date it
// gives; restarting the pod before then avoids it.

// FargatePatch is a Fargate OS patch, under way or done.
type FargatePatch struct {
	// Notified is when the patch was notified: the Fargate pods created
	// before it are recycled. A pod's creation time has whole seconds: one
	// created in the same second counts as before.
	Notified time.Time `json:"notified"`
	// Grace is how long after its first refused eviction a pod is deleted:
	// on AWS the date of the notification, days away.
	Grace metav1.Duration `json:"grace"`
	// Retry is how long a refused eviction is tried again before the pod's
	// termination is scheduled: a budget that allows one pod down at a time
	// refuses the others until the first one's replacement is ready.
	Retry metav1.Duration `json:"retry"`
	// Patched are the AZs done, in the order patched.
	Patched []string `json:"patched,omitempty"`
	// Done is when the last AZ was.
	Done *time.Time `json:"done,omitempty"`
}

// ScheduledTerminationAnnotation is the annotation the emulator puts on a
// pod whose eviction for a patch was refused: when the pod is deleted
// (RFC 3339).
const ScheduledTerminationAnnotation = "emulator.fargatekit.io/scheduled-termination"

// ScheduledTerminationReason is the reason of the Warning event the
// emulator records on such a pod, in the place of EKS's EventBridge event,
// which names its detail-type in its message.
const ScheduledTerminationReason = "FargatePodScheduledTermination"

// StartFargatePatch notifies a Fargate OS patch now; a pod whose eviction
// is refused for retry is deleted grace after. It returns false when a
// patch is already under way. The daemon recycles the pods (patcher).
func (o *Options) StartFargatePatch(grace, retry time.Duration) (bool, error) {
	var started bool
	err := updateFaults(o.StateDir, func(f *Faults) (bool, error) {
		if f.FargatePatch != nil && f.FargatePatch.Done == nil {
			return false, nil
		}
		f.FargatePatch = &FargatePatch{Notified: time.Now(), Grace: metav1.Duration{Duration: grace}, Retry: metav1.Duration{Duration: retry}}
		started = true
		return true, nil
	})
	return started, err
}

// patcher runs the Fargate OS patch in force, if any.
type patcher struct {
	stateDir string
	client   kubernetes.Interface
	// zones are the cluster's AZs, in the order they are patched.
	zones []string
	// now is time.Now but in tests.
	now func() time.Time

	// refused is when the eviction of each pod tried was first refused.
	refused map[types.UID]time.Time
}

// Run runs the patch in force until ctx ends; errors are logged and the
// step tried again.
func (p *patcher) Run(ctx context.Context) error {
	t := time.NewTicker(faultInterval)
	defer t.Stop()
	for {
		if err := p.step(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("Fargate OS patch", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// step takes the patch in force one step on: it recycles the pods of the
// first AZ not yet patched, and marks the AZ patched once none is left.
func (p *patcher) step(ctx context.Context) error {
	f, err := ReadFaults(p.stateDir)
	if err != nil || f.FargatePatch == nil || f.FargatePatch.Done != nil {
		return err
	}
	patch := f.FargatePatch
	// Nothing is evicted in the second of the notification: a replacement
	// created then would count as created before it.
	if p.now().Before(patch.Notified.Truncate(time.Second).Add(time.Second)) {
		return nil
	}
	i := slices.IndexFunc(p.zones, func(z string) bool { return !slices.Contains(patch.Patched, z) })
	if i < 0 {
		return p.patched("")
	}
	zone := p.zones[i]
	pods, err := p.unpatched(ctx, zone, patch.Notified)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return p.patched(zone)
	}
	refused := map[types.UID]time.Time{} // of the pods still there
	var errs []error
	for i := range pods {
		if at, ok := p.refused[pods[i].UID]; ok {
			refused[pods[i].UID] = at
		}
	}
	p.refused = refused
	for i := range pods {
		errs = append(errs, p.recycle(ctx, &pods[i], patch))
	}
	return errors.Join(errs...)
}

// unpatched returns the pods that run on a Fargate node of zone, created
// before notified (or in its second) and not terminating.
func (p *patcher) unpatched(ctx context.Context, zone string, notified time.Time) ([]corev1.Pod, error) {
	nodes, err := p.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fargate.ComputeTypeLabel + "=fargate," + corev1.LabelTopologyZone + "=" + zone})
	if err != nil {
		return nil, fmt.Errorf("listing the Fargate nodes of %s: %w", zone, err)
	}
	inZone := map[string]bool{}
	for _, n := range nodes.Items {
		inZone[n.Name] = true
	}
	pods, err := p.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the pods: %w", err)
	}
	return slices.DeleteFunc(pods.Items, func(pod corev1.Pod) bool {
		return !inZone[pod.Spec.NodeName] || pod.DeletionTimestamp != nil || pod.CreationTimestamp.After(notified) ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	}), nil
}

// recycle evicts a pod; when its budget has refused for the patch's
// retry, it schedules its termination grace from now, and deletes it once
// that time has come.
func (p *patcher) recycle(ctx context.Context, pod *corev1.Pod, patch *FargatePatch) error {
	name := pod.Namespace + "/" + pod.Name
	at, scheduled := scheduledTermination(pod)
	if scheduled && !p.now().Before(at) {
		slog.Info("Fargate OS patch: deleting the pod at its scheduled termination", "pod", name)
		err := p.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("deleting pod %s: %w", name, err)
		}
		return nil
	}
	eviction := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}, DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &pod.UID}}}
	err := p.client.PolicyV1().Evictions(pod.Namespace).Evict(ctx, eviction)
	switch {
	case err == nil:
		slog.Info("Fargate OS patch: evicted", "pod", name)
		return nil
	case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
		return nil // gone, or another pod of the name
	case !apierrors.IsTooManyRequests(err):
		return fmt.Errorf("evicting pod %s: %w", name, err)
	case scheduled:
		return nil // tried again until its time
	}
	// Refused by a PodDisruptionBudget: tried again for a while, then EKS
	// schedules the pod's termination and says so.
	first, ok := p.refused[pod.UID]
	if !ok {
		p.refused[pod.UID] = p.now()
	}
	if !ok || p.now().Sub(first) < patch.Retry.Duration {
		return nil
	}
	at = p.now().Add(patch.Grace.Duration).Truncate(time.Second)
	merge := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, ScheduledTerminationAnnotation, at.UTC().Format(time.RFC3339))
	if _, err := p.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(merge), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scheduling the termination of pod %s: %w", name, err)
	}
	// The API's message: "Cannot evict pod as it would violate the pod's
	// disruption budget."
	message := fmt.Sprintf("EKS Fargate Pod Scheduled Termination: the pod could not be evicted for a Fargate OS patch (%v); it will be deleted at %s unless it is restarted before then",
		err, at.UTC().Format(time.RFC3339))
	slog.Info("Fargate OS patch: eviction refused, termination scheduled", "pod", name, "at", at)
	if err := placement.RecordPodEvent(ctx, p.client, pod, corev1.EventSource{Component: "eks-fargate-patching"}, corev1.EventTypeWarning, ScheduledTerminationReason, message); err != nil {
		return fmt.Errorf("recording the scheduled termination of pod %s: %w", name, err)
	}
	return nil
}

// scheduledTermination returns when a pod is deleted for the patch, if its
// eviction was refused.
func scheduledTermination(pod *corev1.Pod) (time.Time, bool) {
	at, err := time.Parse(time.RFC3339, pod.Annotations[ScheduledTerminationAnnotation])
	return at, err == nil
}

// patched marks zone patched, and the patch done once every AZ is (or
// when zone is "").
func (p *patcher) patched(zone string) error {
	return updateFaults(p.stateDir, func(f *Faults) (bool, error) {
		patch := f.FargatePatch
		if patch == nil || patch.Done != nil { // cleared meanwhile
			return false, nil
		}
		if zone != "" && !slices.Contains(patch.Patched, zone) {
			patch.Patched = append(patch.Patched, zone)
			slog.Info("Fargate OS patch: AZ patched", "zone", zone)
		}
		if !slices.ContainsFunc(p.zones, func(z string) bool { return !slices.Contains(patch.Patched, z) }) {
			patch.Done = new(p.now())
			slog.Info("Fargate OS patch: done")
		}
		return true, nil
	})
}
