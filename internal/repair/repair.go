package repair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Drift is a workload whose pods run off Fargate although a profile
// matches them now, and the command that repairs it by hand.
type Drift struct {
	Workload *live.Workload
	Command  string
	// Skipped says why Run left the workload as it was; "" otherwise.
	Skipped string
}

// Drifted lists the workloads with a drift finding, in the analysis' order
// (namespace, kind, name), which is the order Run repairs them in.
func Drifted(snap *live.Snapshot) []Drift {
	res := live.Analyze(snap, live.Options{})
	return DriftsOf(res.Workloads, res.Findings)
}

// DriftsOf returns the drifts an analysis found: the workloads of its
// LV001 findings, with their commands. A finding about a workload the
// analysis does not list (a filtered report) is left out.
func DriftsOf(workloads []live.WorkloadState, findings []rules.Finding) []Drift {
	byRef := map[object.Ref]*live.Workload{}
	for _, st := range workloads {
		byRef[st.Workload.Object.Ref] = st.Workload
	}
	var out []Drift
	for _, f := range findings {
		if w := byRef[f.Object]; w != nil && f.Rule != nil && f.Rule.ID == live.Drift.ID {
			out = append(out, Drift{Workload: w, Command: f.Details[live.FixDetail]})
		}
	}
	return out
}

// Restarter restarts drifted workloads through the Kubernetes API.
type Restarter struct {
	Client kubernetes.Interface
	// Timeout bounds each workload's rollout and the wait for its pods on
	// Fargate.
	Timeout time.Duration
	// DeleteBarePods deletes the drifted pods that no controller owns.
	// Nothing recreates them, so it is the user's choice.
	DeleteBarePods bool
	// AllowRecreate restarts Deployments whose strategy is Recreate, which
	// stops every pod before the new ones start: an outage.
	AllowRecreate bool
	// Settings are the Fargate settings the refusals are judged by; nil
	// means fargate.DefaultSettings.
	Settings *fargate.Settings
	// Progress receives what is done to each workload as it is done; nil
	// discards it.
	Progress io.Writer
	// Clock paces the polls of rollouts and pods; nil is the real clock.
	// Tests step a fake one.
	Clock clock.WithTicker
}

// Result is what Run did with each drift.
type Result struct {
	// Restarted were restarted, and their new pods run on Fargate.
	Restarted []Drift
	// Deleted are bare pods, deleted (DeleteBarePods).
	Deleted []Drift
	// Skipped were left as they were: Run cannot restart them.
	Skipped []Drift
	// Left were not repaired because one failed: that one and those after it.
	Left []Drift
}

// Run repairs the drifts one at a time, in their order: the next restart
// starts when the previous one's pods run on Fargate, so that at most one
// workload is rolling at a time. It stops at the first that fails and
// returns its error, which names the workload.
func (r *Restarter) Run(ctx context.Context, drifts []Drift) (Result, error) {
	var res Result
	progress := r.progress()
	for i, d := range drifts {
		ref := d.Workload.Object.Ref
		fmt.Fprintf(progress, "[%d/%d] %s: ", i+1, len(drifts), ref)
		done, why, err := r.restart(ctx, d.Workload)
		if err != nil {
			fmt.Fprintln(progress, "failed")
			res.Left = drifts[i:]
			return res, fmt.Errorf("%s: %w", ref, err)
		}
		switch done {
		case restartedOnFargate:
			res.Restarted = append(res.Restarted, d)
		case deletedPod:
			res.Deleted = append(res.Deleted, d)
		default:
			d.Skipped = why
			res.Skipped = append(res.Skipped, d)
		}
	}
	return res, nil
}

func (r *Restarter) progress() io.Writer {
	if r.Progress == nil {
		return io.Discard
	}
	return r.Progress
}

// outcome is what restart did to a drifted workload.
type outcome int

const (
	skippedWorkload    outcome = iota // left alone: Run cannot restart it
	restartedOnFargate                // restarted, and its pods run on Fargate
	deletedPod                        // a bare pod, deleted (DeleteBarePods)
)

// restart recreates a workload's pods and waits until they run on Fargate.
// Deployments and StatefulSets (rolling update) are restarted; a bare pod is
// deleted when DeleteBarePods says so; anything else is skipped, with why.
// Nothing is restarted that Fargate would refuse (its new pods would stay
// Pending, and the workload short of replicas), nor a Recreate Deployment
// unless AllowRecreate. A rollout that does not complete is undone.
func (r *Restarter) restart(ctx context.Context, w *live.Workload) (outcome, string, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	progress := r.progress()
	skip := func(why string) (outcome, string, error) {
		fmt.Fprintln(progress, "skipped: "+why)
		return skippedWorkload, why, nil
	}
	ref := w.Object.Ref
	switch ref.Kind {
	case "Deployment":
		if d, ok := w.Object.Typed.(*appsv1.Deployment); ok && d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType && !r.AllowRecreate {
			return skip("its strategy is Recreate, so a restart stops every pod before new ones start (an outage); --allow-recreate restarts it anyway")
		}
	case "StatefulSet":
		if sts, ok := w.Object.Typed.(*appsv1.StatefulSet); ok && sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			return skip("its update strategy is OnDelete, so a restart recreates no pod; delete its pods one at a time")
		}
	case "Pod":
		if !r.DeleteBarePods {
			return skip("a bare pod (--delete-bare-pods deletes it, and nothing recreates it)")
		}
		if err := r.Client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
			return skippedWorkload, "", fmt.Errorf("deleting the pod: %w", err)
		}
		fmt.Fprintln(progress, "deleted")
		return deletedPod, "", nil
	default:
		return skip("fix restarts Deployments and StatefulSets")
	}
	if why := r.refused(w); why != "" {
		return skip(why)
	}
	_, sel, err := get(ctx, r.Client, ref)
	if err != nil {
		return skippedWorkload, "", err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return skippedWorkload, "", fmt.Errorf("the selector of %s: %w", ref, err)
	}
	fmt.Fprint(progress, "restarting… ")
	since := r.clock().Now()
	undo, err := patchRestart(ctx, r.Client, ref)
	if err != nil {
		return skippedWorkload, "", err
	}
	var last string
	err = r.poll(ctx, func(ctx context.Context) (done bool, err error) {
		if last, done, err = rolledOut(ctx, r.Client, ref); err != nil || done {
			return done, err
		}
		refusal, err := refusedPod(ctx, r.Client, ref, selector.String(), since)
		if err == nil && refusal != "" {
			err = errors.New(refusal)
		}
		return false, err
	})
	if err != nil {
		// The restart's own deadline may be over: the undo has one of its own.
		uctx, ucancel := context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
		defer ucancel()
		if uerr := undo(uctx); uerr != nil {
			return skippedWorkload, "", fmt.Errorf("waiting for the rollout (%s): %w; undoing the restart failed too: %w", last, err, uerr)
		}
		fmt.Fprint(progress, "undone… ")
		return skippedWorkload, "", fmt.Errorf("waiting for the rollout (%s): %w (the restart is undone, as by kubectl rollout undo)", last, err)
	}
	fmt.Fprint(progress, "rolled out, checking the pods… ")
	err = r.poll(ctx, func(ctx context.Context) (bool, error) {
		waiting, elsewhere, err := placed(ctx, r.Client, ref, selector.String())
		switch {
		case err != nil:
			return false, err
		case elsewhere != "": // a new pod runs off Fargate: waiting will not change that
			return false, fmt.Errorf("new pods run off Fargate: %s", elsewhere)
		}
		last = waiting
		return waiting == "", nil
	})
	if err != nil {
		return skippedWorkload, "", fmt.Errorf("the new pods are not all on Fargate (%s): %w", last, err)
	}
	fmt.Fprintln(progress, "on Fargate")
	return restartedOnFargate, "", nil
}

// undoTimeout bounds the undo of a restart whose rollout did not complete.
const undoTimeout = 30 * time.Second

// refused is Refused under the restarter's settings.
func (r *Restarter) refused(w *live.Workload) string {
	s := fargate.DefaultSettings()
	if r.Settings != nil {
		s = *r.Settings
	}
	return Refused(w, s)
}

// Refused says why Fargate would refuse the pods of a Deployment's or
// StatefulSet's template (fargate.Refusals, as check and the emulator judge
// them); "" when it would run them.
func Refused(w *live.Workload, s fargate.Settings) string {
	var spec *corev1.PodSpec
	switch o := w.Object.Typed.(type) {
	case *appsv1.Deployment:
		spec = &o.Spec.Template.Spec
	case *appsv1.StatefulSet:
		spec = &o.Spec.Template.Spec
	default:
		return ""
	}
	refusals := fargate.Refusals(spec, fargate.SizePod(spec), false, s)
	if len(refusals) == 0 {
		return ""
	}
	details := make([]string, len(refusals))
	for i, rf := range refusals {
		details[i] = rf.Detail
	}
	return "Fargate would refuse its pods (" + strings.Join(details, "; ") + "): restarted, they would stay Pending and the workload short of replicas; fix its template first"
}

// interval is how often a wait reads the workload or its pods again.
const interval = time.Second

// clock is r.Clock, or the real one.
func (r *Restarter) clock() clock.WithTicker {
	if r.Clock != nil {
		return r.Clock
	}
	return clock.RealClock{}
}

// poll calls done now, then at every interval, until it is done, fails or
// ctx ends, as wait.PollUntilContextCancel does; its ticks come from
// r.Clock, which wait cannot take.
func (r *Restarter) poll(ctx context.Context, done func(context.Context) (bool, error)) error {
	t := r.clock().NewTicker(interval)
	defer t.Stop()
	for {
		if ok, err := done(ctx); err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C():
		}
		// A tick and the end of ctx can come together: the end wins.
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}
