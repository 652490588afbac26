// Package fixcmd implements `fargatekit fix`: repairs of what scan finds.
package fixcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/polymorphichelpers"

	"github.com/fargatekit/fargatekit/internal/cli/scancmd"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// NewCommand returns the fix command and its subcommands.
func NewCommand(s streams.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fix",
		Short: "Repair what scan finds in a running cluster",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newDrift(s))
	return cmd
}

type driftFlags struct {
	scan           scancmd.Flags
	apply          bool
	deleteBarePods bool
	timeout        time.Duration
}

func newDrift(s streams.Streams) *cobra.Command {
	f := &driftFlags{}
	cmd := &cobra.Command{
		Use:   "drift [flags]",
		Short: "Restart the workloads whose pods run off Fargate although a profile matches them now (LV001)",
		Long: "drift finds the workloads of scan's drift-off-fargate finding (LV001): pods created while no Fargate\n" +
			"profile matched them, which stay on EC2 nodes (or Pending) after a matching profile became ACTIVE.\n" +
			"Without --apply it prints the command that repairs each one. With --apply it restarts the Deployments\n" +
			"and StatefulSets one at a time as `kubectl rollout restart` does (the controller's rolling update, so\n" +
			"PodDisruptionBudgets and maxUnavailable hold), waits for each rollout, and checks that the new pods\n" +
			"run on Fargate. Bare pods are listed, and deleted only with --delete-bare-pods (nothing recreates\n" +
			"them); Jobs, CronJobs and Argo Rollouts are listed with their command. Progress goes to standard error.\n\n" +
			"Exit codes: 0 nothing drifted, or every drifted workload was repaired (or listed, without --apply);\n" +
			"1 a repair failed or timed out, or a drifted workload was left as it was (what was done and what was\n" +
			"not is printed); 2 the cluster, or part of it, could not be read.",
		Example: "  # What would be restarted\n" +
			"  fargatekit fix drift\n\n" +
			"  # Restart them, one workload at a time, at most 5 minutes each\n" +
			"  fargatekit fix drift --apply --timeout 5m",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDrift(cmd.Context(), s, f) },
	}
	fl := cmd.Flags()
	f.scan.Add(fl)
	_ = fl.MarkHidden("target-version")
	_ = fl.MarkHidden("stuck-after")
	_ = fl.MarkHidden("helm")
	_ = fl.MarkHidden("settings") // drift is LV001, whatever the settings say of it
	fl.BoolVar(&f.apply, "apply", false, "restart the drifted workloads (default: print the commands)")
	fl.BoolVar(&f.deleteBarePods, "delete-bare-pods", false, "with --apply, delete drifted pods that no controller owns (they are not recreated)")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait for each workload's rollout and its pods on Fargate")
	return cmd
}

// repair is one drifted workload and how it is restarted.
type repair struct {
	workload *live.Workload
	command  string
}

func runDrift(ctx context.Context, s streams.Streams, f *driftFlags) error {
	conn, err := cluster.Connect(ctx, f.scan.Target)
	if err != nil {
		return err
	}
	if conn.EKSError != "" {
		return fmt.Errorf("drift needs the Fargate profiles, and the EKS API cannot be read: %s", conn.EKSError)
	}
	snap, read, c := conn.Read(ctx, cluster.ReadOptions{}) // drift needs no Helm releases
	if c.ProfilesError != "" {
		return fmt.Errorf("drift needs the Fargate profiles: %s", c.ProfilesError)
	}
	if len(read.Errors) > 0 { // a drift decided on part of the cluster is no decision
		return fmt.Errorf("reading the cluster: %w", errors.Join(read.Errors...))
	}
	repairs := drifted(snap)
	if len(repairs) == 0 {
		fmt.Fprintln(s.Out, "No drift: every pod a Fargate profile matches runs on Fargate.")
		return nil
	}
	if !f.apply {
		fmt.Fprintf(s.Out, "# %s drifted off Fargate; run these, or fargatekit fix drift --apply:\n", plural(len(repairs), "workload"))
		for _, r := range repairs {
			fmt.Fprintln(s.Out, r.command)
		}
		return nil
	}
	var restarted, deleted, skipped []string
	for i, r := range repairs {
		ref := r.workload.Object.Ref
		fmt.Fprintf(s.ErrOut, "[%d/%d] %s: ", i+1, len(repairs), ref)
		outcome, err := restart(ctx, conn.Client, r.workload, f, s.ErrOut)
		if err != nil {
			fmt.Fprintln(s.ErrOut, "failed")
			var left []string
			for _, later := range repairs[i:] {
				left = append(left, later.workload.Object.Ref.String())
			}
			fmt.Fprintf(s.Out, "Repaired: %s\nNot repaired: %s\n", listOrNone(restarted), strings.Join(left, ", "))
			fmt.Fprintf(s.ErrOut, "error: %s: %v\n", ref, err)
			return &streams.ExitError{Code: streams.ExitFindings}
		}
		switch outcome {
		case restartedOnFargate:
			restarted = append(restarted, ref.String())
		case deletedPod:
			deleted = append(deleted, ref.String())
		default:
			skipped = append(skipped, fmt.Sprintf("%s: %s", ref, r.command))
		}
	}
	if len(restarted) > 0 {
		fmt.Fprintf(s.Out, "Repaired %s; their pods run on Fargate: %s\n", plural(len(restarted), "workload"), strings.Join(restarted, ", "))
	}
	if len(deleted) > 0 {
		fmt.Fprintf(s.Out, "Deleted %s (nothing recreates them): %s\n", plural(len(deleted), "bare pod"), strings.Join(deleted, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(s.Out, "Not restarted, still off Fargate (do it by hand):\n  %s\n", strings.Join(skipped, "\n  "))
		return &streams.ExitError{Code: streams.ExitFindings}
	}
	return nil
}

// drifted lists the workloads with a drift finding, in the analysis' order.
func drifted(snap *live.Snapshot) []repair {
	res := live.Analyze(snap, live.Options{})
	byRef := map[object.Ref]*live.Workload{}
	for _, st := range res.Workloads {
		byRef[st.Workload.Object.Ref] = st.Workload
	}
	var out []repair
	for _, f := range res.Findings {
		if f.Rule == live.Drift {
			out = append(out, repair{workload: byRef[f.Object], command: f.Details[live.FixDetail]})
		}
	}
	return out
}

// outcome is what restart did to a drifted workload.
type outcome int

const (
	skippedWorkload    outcome = iota // left alone: fix cannot restart it
	restartedOnFargate                // restarted, and its pods run on Fargate
	deletedPod                        // a bare pod, deleted (--delete-bare-pods)
)

// restart recreates a workload's pods and waits until they run on Fargate.
// Deployments and StatefulSets (rolling update) are restarted; a bare pod is
// deleted when --delete-bare-pods says so; anything else is skipped.
func restart(ctx context.Context, client kubernetes.Interface, w *live.Workload, f *driftFlags, progress io.Writer) (outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	ref := w.Object.Ref
	switch ref.Kind {
	case "Deployment":
	case "StatefulSet":
		if sts, ok := w.Object.Typed.(*appsv1.StatefulSet); ok && sts.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
			fmt.Fprintln(progress, "skipped: its update strategy is OnDelete, so a restart recreates no pod; delete its pods one at a time")
			return skippedWorkload, nil
		}
	case "Pod":
		if !f.deleteBarePods {
			fmt.Fprintln(progress, "skipped: a bare pod (--delete-bare-pods deletes it, and nothing recreates it)")
			return skippedWorkload, nil
		}
		if err := client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
			return skippedWorkload, fmt.Errorf("deleting the pod: %w", err)
		}
		fmt.Fprintln(progress, "deleted")
		return deletedPod, nil
	default:
		fmt.Fprintln(progress, "skipped: fix restarts Deployments and StatefulSets")
		return skippedWorkload, nil
	}
	fmt.Fprint(progress, "restarting… ")
	if err := patchRestart(ctx, client, ref); err != nil {
		return skippedWorkload, err
	}
	var last string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (done bool, err error) {
		last, done, err = rolledOut(ctx, client, ref)
		return done, err
	})
	if err != nil {
		return skippedWorkload, fmt.Errorf("waiting for the rollout (%s): %w", last, err)
	}
	fmt.Fprint(progress, "rolled out, checking the pods… ")
	_, sel, err := get(ctx, client, ref)
	if err != nil {
		return skippedWorkload, err
	}
	selector, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return skippedWorkload, fmt.Errorf("the selector of %s: %w", ref, err)
	}
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		waiting, elsewhere, err := placed(ctx, client, ref, selector.String())
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

// get reads a workload of a kind fix restarts, and its pod selector.
func get(ctx context.Context, client kubernetes.Interface, ref object.Ref) (runtime.Object, *metav1.LabelSelector, error) {
	apps := client.AppsV1()
	var obj runtime.Object
	var sel *metav1.LabelSelector
	var err error
	switch ref.Kind {
	case "Deployment":
		var d *appsv1.Deployment
		if d, err = apps.Deployments(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	case "StatefulSet":
		var d *appsv1.StatefulSet
		if d, err = apps.StatefulSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	default:
		return nil, nil, fmt.Errorf("%s: fix restarts Deployments and StatefulSets", ref)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return obj, sel, nil
}

// patchRestart patches the pod template as `kubectl rollout restart` does,
// with kubectl's own restarter.
func patchRestart(ctx context.Context, client kubernetes.Interface, ref object.Ref) error {
	obj, _, err := get(ctx, client, ref)
	if err != nil {
		return err
	}
	before, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("restarting %s: %w", ref, err)
	}
	after, err := polymorphichelpers.ObjectRestarterFn(obj.DeepCopyObject())
	if err != nil {
		return fmt.Errorf("restarting %s: %w", ref, err)
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(before, after, obj)
	if err != nil {
		return fmt.Errorf("restarting %s: %w", ref, err)
	}
	resource := strings.ToLower(ref.Kind) + "s"
	if err := client.AppsV1().RESTClient().Patch(types.StrategicMergePatchType).Namespace(ref.Namespace).
		Resource(resource).Name(ref.Name).Body(patch).Do(ctx).Error(); err != nil {
		return fmt.Errorf("restarting %s: %w", ref, err)
	}
	return nil
}

// rolledOut reports, as `kubectl rollout status` does, whether the
// workload's rollout is complete, and what it waits for.
func rolledOut(ctx context.Context, client kubernetes.Interface, ref object.Ref) (string, bool, error) {
	viewer, err := polymorphichelpers.StatusViewerFor(schema.GroupKind{Group: "apps", Kind: ref.Kind})
	if err != nil {
		return "", false, err
	}
	obj, _, err := get(ctx, client, ref)
	if err != nil {
		return "", false, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return "", false, err
	}
	msg, done, err := viewer.Status(&unstructured.Unstructured{Object: m}, 0)
	return strings.TrimSpace(msg), done, err
}

// placed says which of the workload's live pods (those selector selects)
// still wait for a node, and which run off Fargate; both "" when every one
// runs on Fargate.
func placed(ctx context.Context, client kubernetes.Interface, ref object.Ref, selector string) (waiting, elsewhere string, err error) {
	pods, err := client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", "", fmt.Errorf("listing the pods of %s: %w", ref, err)
	}
	var wait, off []string
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
		case p.Spec.SchedulerName != fargate.SchedulerName && p.Spec.NodeName != "":
			off = append(off, fmt.Sprintf("%s on %s", p.Name, p.Spec.NodeName))
		case p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning:
			wait = append(wait, fmt.Sprintf("%s %s", p.Name, p.Status.Phase))
		}
	}
	return strings.Join(wait, ", "), strings.Join(off, ", "), nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
