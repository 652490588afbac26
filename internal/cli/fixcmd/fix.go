// Package fixcmd implements `fargatekit fix`: repairs of what scan finds.
package fixcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/clusterflags"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/repair"
	"github.com/fargatekit/fargatekit/pkg/fargate"
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
	scan           clusterflags.Scan
	apply          bool
	deleteBarePods bool
	allowRecreate  bool
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
			"maxUnavailable holds; PodDisruptionBudgets are not consulted), waits for each rollout, undoes one that\n" +
			"does not complete, and checks that the new pods run on Fargate. It does not restart a workload whose\n" +
			"pods Fargate would refuse, nor a Recreate Deployment without --allow-recreate. Bare pods are listed,\n" +
			"and deleted only with --delete-bare-pods (nothing recreates them); Jobs, CronJobs and Argo Rollouts\n" +
			"are listed with their command. Progress goes to standard error.\n\n" +
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
	fl.BoolVar(&f.allowRecreate, "allow-recreate", false, "with --apply, restart Deployments whose strategy is Recreate too (every pod stops before the new ones start)")
	return cmd
}

func runDrift(ctx context.Context, s streams.Streams, f *driftFlags) error {
	if f.timeout < time.Second {
		return fmt.Errorf("--timeout %s: must be at least 1s, how long each workload's rollout may take", f.timeout)
	}
	if err := f.scan.Check(); err != nil {
		return err
	}
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
	drifts := repair.Drifted(snap)
	if len(drifts) == 0 {
		fmt.Fprintln(s.Out, "No drift: every pod a Fargate profile matches runs on Fargate.")
		return nil
	}
	if !f.apply {
		fmt.Fprintf(s.Out, "# %s drifted off Fargate; run these, or fargatekit fix drift --apply:\n", plural(len(drifts), "workload"))
		for _, d := range drifts {
			if why := repair.Refused(d.Workload, fargate.DefaultSettings()); why != "" {
				fmt.Fprintf(s.Out, "# %s: not restarted: %s\n", d.Workload.Object.Ref, why)
				continue
			}
			fmt.Fprintln(s.Out, d.Command)
		}
		return nil
	}
	r := &repair.Restarter{Client: conn.Client, Timeout: f.timeout, DeleteBarePods: f.deleteBarePods, AllowRecreate: f.allowRecreate, Progress: s.ErrOut}
	res, err := r.Run(ctx, drifts)
	if err != nil {
		fmt.Fprintf(s.Out, "Repaired: %s\nNot repaired: %s\n", listOrNone(refs(res.Restarted)), strings.Join(refs(res.Left), ", "))
		fmt.Fprintf(s.ErrOut, "error: %v\n", err)
		return &streams.ExitError{Code: streams.ExitFindings}
	}
	if len(res.Restarted) > 0 {
		fmt.Fprintf(s.Out, "Repaired %s; their pods run on Fargate: %s\n", plural(len(res.Restarted), "workload"), strings.Join(refs(res.Restarted), ", "))
	}
	if len(res.Deleted) > 0 {
		fmt.Fprintf(s.Out, "Deleted %s (nothing recreates them): %s\n", plural(len(res.Deleted), "bare pod"), strings.Join(refs(res.Deleted), ", "))
	}
	if len(res.Skipped) > 0 {
		var skipped []string
		for _, d := range res.Skipped {
			skipped = append(skipped, fmt.Sprintf("%s: %s\n    %s", d.Workload.Object.Ref, d.Skipped, d.Command))
		}
		fmt.Fprintf(s.Out, "Not restarted, still off Fargate (do it by hand):\n  %s\n", strings.Join(skipped, "\n  "))
		return &streams.ExitError{Code: streams.ExitFindings}
	}
	return nil
}

// refs names the drifted workloads.
func refs(ds []repair.Drift) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Workload.Object.Ref.String())
	}
	return out
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
