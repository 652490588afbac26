// Package watchcmd implements `fargatekit watch`: scan's findings as they
// happen, as Prometheus metrics and Events.
package watchcmd

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/clusterflags"
	"github.com/fargatekit/fargatekit/internal/cli/hostchart"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/livereport"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/internal/watch"
	"github.com/fargatekit/fargatekit/pkg/eks"
)

// NewCommand returns the watch command group.
func NewCommand(s streams.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Publish scan's findings as they happen: Prometheus metrics and Events on the workloads",
		Long: "watch runs scan's analysis whenever the cluster changes and publishes what it finds: Prometheus\n" +
			"metrics (fargatekit_findings, fargatekit_pods, fargatekit_fargate_cost_dollars_per_month) and, for\n" +
			"what happened in the cluster (scan's LV rules), a Warning Event on the workload when a finding\n" +
			"appears and a Normal one when it is resolved. docs/watch.md lists every metric.",
		Example: "  # In the foreground, on the cluster of the current context\n" +
			"  fargatekit watch serve --metrics-listen 127.0.0.1:9090\n\n" +
			"  # Its Helm chart, into the emulator; the metrics through the API server\n" +
			"  fargatekit watch install --emulator\n" +
			"  kubectl get --raw " + metricsPath,
	}
	cmd.AddCommand(newServe(s), newInstall(s), hostchart.NewUninstall(s, "watch", watchChart))
	return cmd
}

func newServe(s streams.Streams) *cobra.Command {
	f := &clusterflags.Scan{}
	o := watch.ServeOptions{}
	var repairDrift bool
	ro := watch.RepairOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Watch the cluster and serve the findings' metrics until stopped",
		Long: "serve lists what scan reads once, then keeps it up to date through watches (informers): pods,\n" +
			"nodes, the pods' Warning events, the workloads and the objects check's rules read; it reads the\n" +
			"Fargate profiles and the cluster from the EKS API every --eks-interval (longer after a failure).\n" +
			"Each change, and the changes that follow it within --coalesce, triggers one analysis, the same as\n" +
			"scan's; with no change, one runs every --resync. It serves /metrics, /healthz and /readyz (ready once the first analysis is published) on\n" +
			"--metrics-listen, and records Events as the component fargatekit-watch. It only reads the cluster,\n" +
			"but for Events, unless --repair-drift: then it restarts the workloads whose pods drifted off Fargate\n" +
			"(LV001) once the drift lasted --repair-after, as `fix drift --apply` does (one at a time, never what\n" +
			"Fargate would refuse, undone when the rollout fails), each at most once an hour and at most\n" +
			"--repair-per-hour in the cluster, with an Event on each. It stops on SIGINT or SIGTERM.",
		Example: "  fargatekit watch serve\n" +
			"  fargatekit watch serve --context prod --cluster-name prod --metrics-listen :9090 --eks-interval 1m\n" +
			"  fargatekit watch serve --repair-drift --repair-after 5m --repair-per-hour 3",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Check(); err != nil {
				return err
			}
			if err := checkIntervals(o.EKSInterval, o.Coalesce, o.Resync); err != nil {
				return err
			}
			if err := checkRepair(ro); err != nil {
				return err
			}
			if f.TargetVersion != "" {
				if _, err := eks.ParseMinor(f.TargetVersion); err != nil {
					return fmt.Errorf("--target-version: %w", err)
				}
			}
			set, err := settings.Resolve(f.SettingsPath)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.Conn, err = cluster.Connect(ctx, f.Target); err != nil {
				return err
			}
			if o.Conn.EKSError != "" {
				fmt.Fprintf(s.ErrOut, "warning: the EKS API cannot be read (%s): no finding that needs the Fargate profiles\n", o.Conn.EKSError)
			}
			o.Analysis = livereport.Options{Target: f.TargetVersion, StuckAfter: f.StuckAfter, SubnetHeadroom: f.SubnetHeadroom, Settings: set}
			if repairDrift {
				ro.Settings = &set.Fargate
				o.Repair = &ro
			}
			return watch.Serve(ctx, o)
		},
	}
	fl := cmd.Flags()
	f.Add(fl)
	_ = fl.MarkHidden("helm") // Helm release Secrets are not watched
	clusterflags.AddMetricsListen(fl, &o.MetricsAddr)
	fl.DurationVar(&o.EKSInterval, "eks-interval", 30*time.Second, "how often the EKS API is read (profiles, cluster)")
	fl.DurationVar(&o.Coalesce, "coalesce", 2*time.Second, "how long an analysis waits, after a change, for the changes that come with it")
	fl.DurationVar(&o.Resync, "resync", time.Minute, "the longest time between two analyses, changes or not (findings that depend on time)")
	fl.BoolVar(&o.Profiling, "profiling", false, "serve Go's profiles at /debug/pprof/ on --metrics-listen (heap, CPU, goroutines)")
	fl.BoolVar(&repairDrift, "repair-drift", false, "restart the workloads whose pods drifted off Fargate (LV001), as fix drift --apply does")
	fl.DurationVar(&ro.After, "repair-after", 2*time.Minute, "how long a drift lasts before --repair-drift restarts the workload")
	fl.IntVar(&ro.PerHour, "repair-per-hour", 6, "at most this many restarts by --repair-drift in any hour")
	fl.DurationVar(&ro.Timeout, "repair-timeout", 10*time.Minute, "how long each restart's rollout and its pods on Fargate may take before it is undone")
	return cmd
}
