package watchcmd

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/deploy"
	"github.com/fargatekit/fargatekit/internal/cli/hostchart"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/watch"
)

// The release `watch install --emulator` makes of the chart.
const release = "fargatekit-watch"

// watchChart is watch's chart as the emulator runs it: the release
// fargatekit-watch/fargatekit-watch, whose pod runs on the host.
var watchChart = emulator.HostChart{
	Component: emulator.ComponentWatch,
	Namespace: release, Release: release, Deployment: release,
	Command:       []string{"watch", "serve"},
	LoopbackFlags: []string{"--metrics-listen"},
	Install: func(ctx context.Context, kubeconfig, namespace, name string, values map[string]any) error {
		return deploy.Install(ctx, kubeconfig, deploy.WatchChartDir, namespace, name, values)
	},
	Uninstall: deploy.Uninstall,
}

// metricsPath is where the API server's service proxy serves watch's
// metrics, as in a cluster.
var metricsPath = fmt.Sprintf("/api/v1/namespaces/%s/services/%s:metrics/proxy/metrics", release, release)

func newInstall(s streams.Streams) *cobra.Command {
	var stateDir string
	var onEmulator, repairDrift bool
	var eksInterval, coalesce, resync, repairAfter time.Duration
	cmd := &cobra.Command{
		Use:   "install --emulator",
		Short: "Install watch's Helm chart into the running emulator and run its pod on this host",
		Long: "install --emulator installs the Helm chart built into fargatekit (deploy/charts/fargatekit-watch) as the\n" +
			"release fargatekit-watch/fargatekit-watch, as `helm upgrade --install` would in a cluster. KWOK runs no\n" +
			"container, so the chart's pod runs on this host: `fargatekit watch serve` with the Deployment's arguments\n" +
			"and environment and a token of its service account (the chart's RBAC, nothing more), on a\n" +
			"loopback port. The emulator sends the API server's calls to the chart's Service there, so its metrics\n" +
			"are read through the API server as in a cluster (install waits for that, a minute at most):\n" +
			"  kubectl get --raw " + metricsPath + "\n" +
			"The chart's pod is placed as any other (a node group, or a Fargate profile of its namespace): the Service\n" +
			"has an endpoint only once it runs. `emulator down` stops the process; `watch uninstall --emulator`\n" +
			"uninstalls the release.\n\n" +
			"Install it in a cluster with helm (docs/watch.md).",
		Example: "  fargatekit watch install --emulator\n" +
			"  fargatekit watch install --emulator --state-dir /tmp/fk --eks-interval 10s --coalesce 500ms\n" +
			"  fargatekit watch install --emulator --repair-drift --repair-after 30s",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !onEmulator {
				return errors.New("only --emulator is supported here: install watch in a cluster with helm install fargatekit-watch deploy/charts/fargatekit-watch (docs/watch.md)")
			}
			if err := checkIntervals(eksInterval, coalesce, resync); err != nil {
				return err
			}
			if repairAfter < 0 {
				return fmt.Errorf("--repair-after %s: must not be negative", repairAfter)
			}
			em, err := hostchart.Open(stateDir)
			if err != nil {
				return err
			}
			dir, rec, client := em.Dir, em.Record, em.Client
			ports, err := emulator.FreePorts(1)
			if err != nil {
				return err
			}
			values := map[string]any{
				"clusterName": rec.Config.Metadata.Name, "region": rec.Config.Metadata.Region,
				"env":         emulator.AWSEnv(fmt.Sprintf("http://127.0.0.1:%d", rec.EKSPort)),
				"metrics":     map[string]any{"port": ports[0]},
				"eksInterval": eksInterval.String(), "coalesce": coalesce.String(), "resync": resync.String(),
				"repair": map[string]any{"drift": repairDrift, "after": repairAfter.String()},
			}
			host, err := emulator.InstallHostChart(cmd.Context(), client, watchChart, emulator.HostInstall{
				StateDir: dir, Kubeconfig: filepath.Join(dir, "kubeconfig"), Self: em.Self, Values: values,
				ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0]),
			})
			if err != nil {
				return err
			}
			if err := servedByAPIServer(cmd.Context(), client, time.Minute); err != nil {
				fmt.Fprintf(s.ErrOut, "warning: %v\n", err)
			}
			fmt.Fprintf(s.Out, "Helm release %s/%s installed; its pod runs on this host (pid %d)\n", release, release, host.PID)
			fmt.Fprintf(s.Out, "metrics: kubectl get --raw %s\n", metricsPath)
			fmt.Fprintf(s.Out, "         http://127.0.0.1:%d/metrics\nlog: %s\n", ports[0], host.Log)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&onEmulator, "emulator", false, "install for the emulator (required)")
	fl.StringVar(&stateDir, "state-dir", "", "the emulator's state directory (default: the only emulator)")
	fl.DurationVar(&eksInterval, "eks-interval", 30*time.Second, "the chart's eksInterval: how often the EKS API is read")
	fl.DurationVar(&coalesce, "coalesce", 2*time.Second, "the chart's coalesce: how long an analysis waits for the changes that come with one")
	fl.DurationVar(&resync, "resync", time.Minute, "the chart's resync: the longest time between two analyses")
	fl.BoolVar(&repairDrift, "repair-drift", false, "the chart's repair.drift: watch restarts the workloads that drifted off Fargate")
	fl.DurationVar(&repairAfter, "repair-after", 2*time.Minute, "the chart's repair.after: how long a drift lasts before it is repaired")
	return cmd
}

// servedByAPIServer waits until the API server serves watch's /readyz
// through the chart's Service, as `helm install --wait` waits for the
// Service's endpoints; it says why when it does not within timeout.
func servedByAPIServer(ctx context.Context, client kubernetes.Interface, timeout time.Duration) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = client.CoreV1().Services(release).ProxyGet("http", release, "metrics", "readyz", nil).DoRaw(ctx)
		return last == nil, nil
	})
	if err == nil {
		return nil
	}
	why := fmt.Sprint(last)
	pods, perr := client.CoreV1().Pods(release).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=fargatekit-watch"})
	if perr == nil && len(pods.Items) > 0 && pods.Items[0].Spec.NodeName == "" {
		why = fmt.Sprintf("its pod %s is Pending: no node takes it (a node group's, or Fargate with a profile for the namespace %s)", pods.Items[0].Name, release)
	}
	return fmt.Errorf("the API server does not reach watch through the Service %s/%s after %s: %s; its metrics are on the host meanwhile", release, release, timeout, why)
}

// checkRepair refuses what watch serve would refuse of --repair-*.
func checkRepair(o watch.RepairOptions) error {
	switch {
	case o.After < 0:
		return fmt.Errorf("--repair-after %s: must not be negative", o.After)
	case o.PerHour < watch.MinRepairPerHour:
		return fmt.Errorf("--repair-per-hour %d: must be at least %d", o.PerHour, watch.MinRepairPerHour)
	case o.Timeout < watch.MinRepairTimeout:
		return fmt.Errorf("--repair-timeout %s: must be at least %s, how long each workload's rollout may take", o.Timeout, watch.MinRepairTimeout)
	}
	return nil
}

// checkIntervals refuses what watch serve would refuse, naming the flag.
func checkIntervals(eksInterval, coalesce, resync time.Duration) error {
	switch {
	case eksInterval < watch.MinEKSInterval:
		return fmt.Errorf("--eks-interval %s: must be at least %s, how often the EKS API is read", eksInterval, watch.MinEKSInterval)
	case resync < watch.MinResync:
		return fmt.Errorf("--resync %s: must be at least %s, the longest time between two analyses", resync, watch.MinResync)
	case coalesce < watch.MinCoalesce:
		return fmt.Errorf("--coalesce %s: must be at least %s, how long an analysis waits for the changes that come with one", coalesce, watch.MinCoalesce)
	}
	return nil
}
