package repair

import (
	"context"
	"fmt"
	"io"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// Drift is a workload whose pods run off Fargate although a profile
// matches them now, and the command that repairs it by hand.
type Drift struct {
	Workload *live.Workload
	Command  string
}

// Drifted lists the workloads with a drift finding, in the analysis' order
// (namespace, kind, name), which is the order Run repairs them in.
func Drifted(snap *live.Snapshot) []Drift {
	res := live.Analyze(snap, live.Options{})
	byRef := map[object.Ref]*live.Workload{}
	for _, st := range res.Workloads {
		byRef[st.Workload.Object.Ref] = st.Workload
	}
	var out []Drift
	for _, f := range res.Findings {
		if f.Rule == live.Drift {
			out = append(out, Drift{Workload: byRef[f.Object], Command: f.Details[live.FixDetail]})
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
		done, err := r.restart(ctx, d.Workload)
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
// deleted when DeleteBarePods says so; anything else is skipped.
func (r *Restarter) restart(ctx context.Context, w *live.Workload) (outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	progress := r.progress()
	ref := w.Object.Ref
	switch ref.Kind {
	case "Deployment":
	case "StatefulSet":
		if sts, ok := w.Object.Typed.(*appsv1.StatefulSet); ok && sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			fmt.Fprintln(progress, "skipped: its update strategy is OnDelete, so a restart recreates no pod; delete its pods one at a time")
			return skippedWorkload, nil
		}
	case "Pod":
		if !r.DeleteBarePods {
			fmt.Fprintln(progress, "skipped: a bare pod (--delete-bare-pods deletes it, and nothing recreates it)")
			return skippedWorkload, nil
		}
		if err := r.Client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
			return skippedWorkload, fmt.Errorf("deleting the pod: %w", err)
		}
		fmt.Fprintln(progress, "deleted")
		return deletedPod, nil
	default:
		fmt.Fprintln(progress, "skipped: fix restarts Deployments and StatefulSets")
		return skippedWorkload, nil
	}
	fmt.Fprint(progress, "restarting… ")
	if err := patchRestart(ctx, r.Client, ref); err != nil {
		return skippedWorkload, err
	}
	var last string
	err := r.poll(ctx, func(ctx context.Context) (done bool, err error) {
		last, done, err = rolledOut(ctx, r.Client, ref)
		return done, err
	})
	if err != nil {
		return skippedWorkload, fmt.Errorf("waiting for the rollout (%s): %w", last, err)
	}
	fmt.Fprint(progress, "rolled out, checking the pods… ")
	_, sel, err := get(ctx, r.Client, ref)
	if err != nil {
		return skippedWorkload, err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return skippedWorkload, fmt.Errorf("the selector of %s: %w", ref, err)
	}
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
		return skippedWorkload, fmt.Errorf("the new pods are not all on Fargate (%s): %w", last, err)
	}
	fmt.Fprintln(progress, "on Fargate")
	return restartedOnFargate, nil
}

// interval is how often a wait reads the workload or its pods again.
const interval = time.Second

// poll calls done now, then at every interval, until it is done, fails or
// ctx ends, as wait.PollUntilContextCancel does; its ticks come from
// r.Clock, which wait cannot take.
func (r *Restarter) poll(ctx context.Context, done func(context.Context) (bool, error)) error {
	var c clock.WithTicker = clock.RealClock{}
	if r.Clock != nil {
		c = r.Clock
	}
	t := c.NewTicker(interval)
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
