// Package fixcmd implements `fargatekit fix`: repairs of what scan finds.
package fixcmd

import (
	"context"
	"encoding/json"
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
			"Without --apply it prints the command that repairs each one. With --apply it restarts them one\n" +
			"workload at a time as `kubectl rollout restart` does (the controller's rolling update, so\n" +
			"PodDisruptionBudgets and maxUnavailable hold), waits for each rollout, and checks that the new pods\n" +
			"run on Fargate. Bare pods are listed, and deleted only with --delete-bare-pods (nothing recreates\n" +
			"them). Progress goes to standard error.\n\n" +
			"Exit codes: 0 nothing drifted, or everything was repaired (or listed, without --apply); 1 a repair\n" +
			"failed or timed out (what was done and what was not is printed); 2 the cluster could not be read.",
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
	f.scan.Helm = false // drift needs no Helm releases
	conn, err := scancmd.Connect(ctx, f.scan.Target)
	if err != nil {
		return err
	}
	if conn.EKSError != "" {
		return fmt.Errorf("drift needs the Fargate profiles, and the EKS API cannot be read: %s", conn.EKSError)
	}
	snap, read, c := scancmd.Read(ctx, conn, &f.scan)
	if c.ProfilesError != "" {
		return fmt.Errorf("drift needs the Fargate profiles: %s", c.ProfilesError)
	}
	for _, e := range read.Errors {
		fmt.Fprintln(s.ErrOut, "warning:", e)
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
	var done []string
	for i, r := range repairs {
		ref := r.workload.Object.Ref
		fmt.Fprintf(s.ErrOut, "[%d/%d] %s: ", i+1, len(repairs), ref)
		err := restart(ctx, conn.Client, r.workload, f, s.ErrOut)
		if err != nil {
			fmt.Fprintln(s.ErrOut, "failed")
			fmt.Fprintf(s.Out, "Repaired: %s\n", listOrNone(done))
			var left []string
			for _, later := range repairs[i:] {
				left = append(left, later.workload.Object.Ref.String())
			}
			fmt.Fprintf(s.Out, "Not repaired: %s\n", strings.Join(left, ", "))
			fmt.Fprintf(s.ErrOut, "error: %s: %v\n", ref, err)
			return &streams.ExitError{Code: streams.ExitFindings}
		}
		done = append(done, ref.String())
	}
	fmt.Fprintf(s.Out, "Repaired %s; their pods run on Fargate: %s\n", plural(len(done), "workload"), strings.Join(done, ", "))
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

// restart recreates a workload's pods and waits until they run on Fargate.
func restart(ctx context.Context, client kubernetes.Interface, w *live.Workload, f *driftFlags, progress io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	ref := w.Object.Ref
	switch ref.Kind {
	case "Deployment", "StatefulSet", "DaemonSet":
	case "Pod":
		if !f.deleteBarePods {
			fmt.Fprintln(progress, "a bare pod: left alone (--delete-bare-pods deletes it, and nothing recreates it)")
			return nil
		}
		fmt.Fprint(progress, "deleting… ")
		if err := client.CoreV1().Pods(ref.Namespace).Delete(ctx, ref.Name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting the pod: %w", err)
		}
		fmt.Fprintln(progress, "deleted")
		return nil
	default:
		fmt.Fprintf(progress, "not restarted: %s\n", live.RestartCommand(ref, nil))
		return nil
	}
	fmt.Fprint(progress, "restarting… ")
	if err := patchRestart(ctx, client, ref); err != nil {
		return err
	}
	var last string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (done bool, err error) {
		last, done, err = rolledOut(ctx, client, ref)
		return done, err
	})
	if err != nil {
		return fmt.Errorf("waiting for the rollout (%s): %w", last, err)
	}
	fmt.Fprint(progress, "rolled out, checking the pods… ")
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		last, err = offFargate(ctx, client, ref)
		return last == "" && err == nil, err
	})
	if err != nil {
		return fmt.Errorf("the new pods are not all on Fargate (%s): %w", last, err)
	}
	fmt.Fprintln(progress, "on Fargate")
	return nil
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
	case "DaemonSet":
		var d *appsv1.DaemonSet
		if d, err = apps.DaemonSets(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, sel = d, d.Spec.Selector
		}
	default:
		return nil, nil, fmt.Errorf("%s: fix restarts Deployments, StatefulSets and DaemonSets", ref)
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

// offFargate says which of the workload's live pods do not run on Fargate
// yet; "" when all do.
func offFargate(ctx context.Context, client kubernetes.Interface, ref object.Ref) (string, error) {
	_, sel, err := get(ctx, client, ref)
	if err != nil {
		return "", err
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return "", fmt.Errorf("the selector of %s: %w", ref, err)
	}
	pods, err := client.CoreV1().Pods(ref.Namespace).List(ctx, metav1.ListOptions{LabelSelector: s.String()})
	if err != nil {
		return "", fmt.Errorf("listing the pods of %s: %w", ref, err)
	}
	var off []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if p.Spec.SchedulerName != fargate.SchedulerName || p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			off = append(off, fmt.Sprintf("%s %s on %q", p.Name, p.Status.Phase, p.Spec.NodeName))
		}
	}
	return strings.Join(off, ", "), nil
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
