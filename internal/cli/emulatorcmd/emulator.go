// Package emulatorcmd implements `fargatekit emulator`: EKS on Fargate on a
// laptop or in CI.
package emulatorcmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/settings"
)

type flagpole struct {
	configPath   string
	settingsPath string
	stateDir     string
	binDir       string
	eksPort      int
	webhookPort  int
	recreate     bool
}

// Default ports of the daemon.
const (
	defaultEKSPort     = 8780
	defaultWebhookPort = 8781
)

// NewCommand returns the emulator command.
func NewCommand(s streams.Streams) *cobra.Command {
	f := &flagpole{}
	cmd := &cobra.Command{
		Use:   "emulator",
		Short: "Run EKS on Fargate locally: a real control plane, the EKS Fargate API, webhook and fargate-scheduler",
		Long: "The emulator runs a real Kubernetes control plane (kube-apiserver, etcd, controller-manager and\n" +
			"scheduler built from source, started by kwokctl, with KWOK as kubelets) and emulates what EKS adds\n" +
			"for Fargate: the EKS API for Fargate profiles, the admission webhook that sends matched pods to\n" +
			"fargate-scheduler, and fargate-scheduler, which gives each pod a node of its own in a random subnet.\n" +
			"Build the control plane once with `make controlplane`. See docs/emulator.md.\n\n" +
			"An emulator lives in a state directory, which records the configuration it was created with and\n" +
			"its ports: every command given that directory (--state-dir) acts on that emulator. Without\n" +
			"--state-dir, --config names the directory ($XDG_STATE_HOME/fargatekit/emulator/<cluster>);\n" +
			"without either, the commands act on the only emulator there (list shows them all).",
		Example: "  fargatekit emulator up\n" +
			"  eval \"$(fargatekit emulator env)\"\n" +
			"  aws eks list-fargate-profiles --cluster-name fargatekit\n" +
			"  fargatekit emulator status\n" +
			"  fargatekit emulator down      # stop it; its state stays for the next up\n" +
			"  fargatekit emulator delete    # stop it and remove its state",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.configPath, "config", "", "cluster configuration (default: the recorded one, or one cluster in us-east-1; see docs/emulator.md)")
	settings.AddFlag(pf, &f.settingsPath)
	pf.StringVar(&f.stateDir, "state-dir", "", "where the emulator keeps its state (default: $XDG_STATE_HOME/fargatekit/emulator/<cluster>)")
	pf.StringVar(&f.binDir, "bin-dir", "", "directory of the control plane binaries (default: $FARGATEKIT_CONTROLPLANE, or the newest build of hack/build-controlplane.sh)")
	pf.IntVar(&f.eksPort, "eks-port", defaultEKSPort, "loopback port of the EKS API (default: the recorded one, else 8780)")
	pf.IntVar(&f.webhookPort, "webhook-port", defaultWebhookPort, "loopback port of the Fargate admission webhook (default: the recorded one, else 8781)")

	up := &cobra.Command{Use: "up", Short: "Start the emulator (created on the first run, restarted with its state afterwards)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o, err := f.options(cmd, s, "up")
			if err != nil {
				return err
			}
			if err := emulator.Up(cmd.Context(), o); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "EKS cluster %q (Kubernetes %s, %s) is up, state in %s.\n\n", o.Config.Metadata.Name, o.KubernetesVersion(), o.Config.Metadata.Region, o.StateDir)
			for _, l := range envLines(o) {
				fmt.Fprintln(s.Out, "  "+l)
			}
			fmt.Fprintf(s.Out, "  kubectl get nodes\n")
			fmt.Fprintf(s.Out, "  aws eks list-fargate-profiles --cluster-name %s\n", o.Config.Metadata.Name)
			return nil
		}}
	up.Flags().BoolVar(&f.recreate, "recreate", false, "stop the emulator of the state directory, remove its state, and start afresh")

	cmd.AddCommand(up,
		&cobra.Command{Use: "down", Short: "Stop every process of the emulator; its state stays for the next up", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "down")
				if err != nil {
					return err
				}
				ran, err := emulator.Down(cmd.Context(), o)
				report(s, o, ran, "stopped")
				return err
			}},
		&cobra.Command{Use: "delete", Short: "Stop the emulator and remove its state directory", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "delete")
				if err != nil {
					return err
				}
				ran, err := emulator.Delete(cmd.Context(), o)
				report(s, o, ran, "stopped")
				if err == nil {
					fmt.Fprintf(s.Out, "deleted %s\n", o.StateDir)
				}
				return err
			}},
		&cobra.Command{Use: "status", Short: "Say what runs of the emulator, from its processes (exit code 1 when not everything does)", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "status")
				if err != nil {
					return err
				}
				st, err := emulator.GetStatus(o)
				if err != nil {
					return err
				}
				printStatus(s, o, st)
				if !st.AllRunning() {
					return &streams.ExitError{Code: streams.ExitFindings}
				}
				return nil
			}},
		&cobra.Command{Use: "list", Short: "List the emulators under the state root, with their ports and whether they run", Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error { return list(s) }},
		&cobra.Command{Use: "kubeconfig", Short: "Print the path of the emulated cluster's kubeconfig", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "kubeconfig")
				if err != nil {
					return err
				}
				if err := started(o); err != nil {
					return err
				}
				fmt.Fprintln(s.Out, o.Kubeconfig())
				return nil
			}},
		&cobra.Command{Use: "env", Short: "Print the exports that point kubectl, the AWS CLI (v1 and v2) and the AWS SDKs at the emulator",
			Example: `  eval "$(fargatekit emulator env)"`, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "env")
				if err != nil {
					return err
				}
				if err := started(o); err != nil {
					return err
				}
				for _, l := range envLines(o) {
					fmt.Fprintln(s.Out, l)
				}
				return nil
			}},
		newFaultCommand(f, s),
		&cobra.Command{Use: "serve", Short: "Run the emulator's daemon in the foreground (emulator up starts it)", Hidden: true, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(cmd, s, "serve")
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return emulator.RunDaemon(ctx, emulator.DaemonOptions{
					Config: o.Config, Settings: o.Settings.Fargate, Upgrade: o.Settings.Upgrade, StateDir: o.StateDir, Kubeconfig: o.Kubeconfig(),
					EKSAddr: fmt.Sprintf("127.0.0.1:%d", o.EKSPort), WebhookAddr: fmt.Sprintf("127.0.0.1:%d", o.WebhookPort), EgressSocket: o.EgressSocket(),
					ServeVersion: o.ServeVersion,
				})
			}},
	)
	return cmd
}

// envLines are the exports for kubectl, the AWS CLI v1 (AWS_DEFAULT_REGION)
// and v2, and the SDKs (AWS_REGION, AWS_ENDPOINT_URL_EKS, _EC2 and _IAM: one
// endpoint serves the three APIs), with dummy credentials, which the
// emulator does not check.
func envLines(o *emulator.Options) []string {
	region := o.Config.Metadata.Region
	return []string{
		"export KUBECONFIG=" + o.Kubeconfig(),
		"export AWS_ENDPOINT_URL_EKS=" + o.EKSEndpoint() + " AWS_ENDPOINT_URL_EC2=" + o.EKSEndpoint() + " AWS_ENDPOINT_URL_IAM=" + o.EKSEndpoint(),
		"export AWS_REGION=" + region + " AWS_DEFAULT_REGION=" + region,
		"export AWS_ACCESS_KEY_ID=" + emulator.Credentials.AccessKeyID + " AWS_SECRET_ACCESS_KEY=" + emulator.Credentials.SecretAccessKey,
	}
}

// started fails when the emulator never started: its kubeconfig is not there.
func started(o *emulator.Options) error {
	if _, err := os.Stat(o.Kubeconfig()); err != nil {
		return fmt.Errorf("the emulator in %s has no kubeconfig: it has not been started (fargatekit emulator up --state-dir %s)", o.StateDir, o.StateDir)
	}
	return nil
}

// report says which processes a command stopped, or that none ran.
func report(s streams.Streams, o *emulator.Options, ps []emulator.Process, verb string) {
	if len(ps) == 0 {
		fmt.Fprintf(s.Out, "nothing was running in %s\n", o.StateDir)
		return
	}
	if o.Record != nil {
		fmt.Fprintf(s.Out, "%s the emulator %q in %s:\n", verb, o.Config.Metadata.Name, o.StateDir)
	} else {
		fmt.Fprintf(s.Out, "%s the orphaned processes of %s:\n", verb, o.StateDir)
	}
	for _, p := range ps {
		fmt.Fprintf(s.Out, "  %s\n", p)
	}
}

func printStatus(s streams.Streams, o *emulator.Options, st emulator.Status) {
	if !st.Recorded {
		fmt.Fprintf(s.Out, "no emulator is recorded in %s\n", o.StateDir)
		for _, p := range st.Running {
			fmt.Fprintf(s.Out, "  orphaned  %s\n", p)
		}
		return
	}
	fmt.Fprintf(s.Out, "emulator %q in %s (EKS API %s, webhook port %d)\n", o.Config.Metadata.Name, o.StateDir, o.EKSEndpoint(), o.WebhookPort)
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	for _, c := range emulator.Components {
		i := slices.IndexFunc(st.Running, func(p emulator.Process) bool { return p.Component == c })
		if i < 0 {
			fmt.Fprintf(tw, "  %s\tstopped\t\n", c)
			continue
		}
		p := st.Running[i]
		ports := make([]string, len(p.Ports))
		for j, port := range p.Ports {
			ports[j] = fmt.Sprint(port)
		}
		fmt.Fprintf(tw, "  %s\trunning\tpid %d\tports %s\n", c, p.PID, cmp.Or(strings.Join(ports, ", "), "none"))
	}
	_ = tw.Flush()
}

// list prints every emulator under the state root.
func list(s streams.Streams) error {
	root := emulator.StateRoot()
	dirs, err := emulator.Find(root)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		fmt.Fprintf(s.Out, "no emulator in %s\n", root)
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tEKS PORT\tWEBHOOK PORT\tSTATUS")
	for _, dir := range dirs {
		rec, err := emulator.ReadRecord(dir)
		if err != nil {
			fmt.Fprintf(tw, "?\t%s\t\t\t%v\n", dir, err)
			continue
		}
		st, err := emulator.GetStatus(&emulator.Options{StateDir: dir, Record: rec, Config: rec.Config})
		if err != nil {
			return err
		}
		status := "stopped"
		switch n := len(st.Running); {
		case st.AllRunning():
			status = "running"
		case n > 0:
			status = fmt.Sprintf("partly running (%d of %d)", n, len(emulator.Components))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", rec.Config.Metadata.Name, dir, rec.EKSPort, rec.WebhookPort, status)
	}
	return tw.Flush()
}

// options resolves the flags and the state directory's record into the
// options of the emulator a command acts on.
func (f *flagpole) options(cmd *cobra.Command, s streams.Streams, verb string) (*emulator.Options, error) {
	var given *clusterconfig.Config
	if f.configPath != "" {
		var err error
		if given, err = clusterconfig.Load(f.configPath); err != nil {
			return nil, err
		}
	}
	stateDir, err := f.findStateDir(given, verb)
	if err != nil {
		return nil, err
	}
	rec, err := emulator.ReadRecord(stateDir)
	if err != nil && (verb == "down" || verb == "delete") {
		fmt.Fprintf(s.ErrOut, "warning: %v\n", err) // stopping and removing need no record
		rec, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec != nil && verb == "up" && f.recreate {
		o := &emulator.Options{StateDir: stateDir, Record: rec, Config: rec.Config, BinDir: f.bin(), Progress: s.ErrOut}
		ran, err := emulator.Delete(cmd.Context(), o)
		report(s, o, ran, "stopped")
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(s.ErrOut, "removed %s: starting afresh\n", stateDir)
		rec = nil
	}
	o := &emulator.Options{StateDir: stateDir, Record: rec, BinDir: f.bin(), Progress: s.ErrOut,
		Config: given, EKSPort: f.eksPort, WebhookPort: f.webhookPort, SettingsPath: f.settingsPath}
	if o.ConfigPath = f.configPath; o.ConfigPath != "" {
		if o.ConfigPath, err = filepath.Abs(o.ConfigPath); err != nil {
			return nil, err
		}
	}
	if rec != nil {
		if given != nil && verb == "up" {
			if diff := emulator.ConfigDiff(rec.Config, given); len(diff) > 0 {
				return nil, fmt.Errorf("the emulator in %s was created with another configuration (%s): these fields differ: %s; "+
					"start afresh with `fargatekit emulator up --recreate`, or leave out --config to run the recorded one",
					stateDir, cmp.Or(rec.ConfigPath, "the defaults"), strings.Join(diff, ", "))
			}
		}
		o.Config, o.ConfigPath = rec.Config, rec.ConfigPath
		if !cmd.Flags().Changed("eks-port") {
			o.EKSPort = rec.EKSPort
		}
		if !cmd.Flags().Changed("webhook-port") {
			o.WebhookPort = rec.WebhookPort
		}
		if f.settingsPath == "" {
			o.SettingsPath = rec.SettingsPath
		}
		if verb == "up" && (o.EKSPort != rec.EKSPort || o.WebhookPort != rec.WebhookPort) {
			if st, err := emulator.GetStatus(o); err == nil && len(st.Running) > 0 {
				return nil, fmt.Errorf("the emulator in %s runs on ports %d and %d: stop it (fargatekit emulator down) before changing them",
					stateDir, rec.EKSPort, rec.WebhookPort)
			}
		}
	}
	if o.Config == nil {
		o.Config = clusterconfig.Default()
	}
	if rec == nil && o.SettingsPath == "" {
		// The first up reads the working directory's settings file, and
		// records it for the daemon and every later up.
		if _, err := os.Stat(settings.FileName); err == nil {
			o.SettingsPath = settings.FileName
		}
	}
	if o.SettingsPath != "" {
		if o.SettingsPath, err = filepath.Abs(o.SettingsPath); err != nil {
			return nil, err
		}
		if o.Settings, err = settings.Load(o.SettingsPath); err != nil {
			return nil, err
		}
	} else {
		o.Settings = settings.Default()
	}
	if err := o.Config.CheckLimits(o.Settings.Fargate.Limits); err != nil {
		return nil, fmt.Errorf("emulator config %s: %w", cmp.Or(o.ConfigPath, "(defaults)"), err)
	}
	if o.Self, err = os.Executable(); err != nil {
		return nil, fmt.Errorf("finding the fargatekit binary: %w", err)
	}
	return o, nil
}

// findStateDir is the state directory a command acts on: --state-dir;
// else the one of the --config's cluster; else the only emulator under
// the state root (up starts the default one when there is none).
func (f *flagpole) findStateDir(given *clusterconfig.Config, verb string) (string, error) {
	root := emulator.StateRoot()
	switch {
	case f.stateDir != "":
		return filepath.Abs(f.stateDir)
	case given != nil:
		return filepath.Join(root, given.Metadata.Name), nil
	}
	dir, err := emulator.Only(root)
	switch {
	case err != nil || dir != "":
		return dir, err
	case verb == "up" || verb == "serve":
		return filepath.Join(root, clusterconfig.Default().Metadata.Name), nil
	}
	return "", errors.New("no emulator in " + root + ": start one with `fargatekit emulator up`, or name its state directory with --state-dir")
}

// bin is the directory of the control plane binaries.
func (f *flagpole) bin() string {
	return cmp.Or(f.binDir, os.Getenv("FARGATEKIT_CONTROLPLANE"), newestBuild())
}

// newestBuild returns the newest bin directory hack/build-controlplane.sh
// made in its cache, or a path under the cache that says none exists.
func newestBuild() string {
	home, _ := os.UserHomeDir()
	cache := filepath.Join(cmp.Or(os.Getenv("FARGATEKIT_CACHE"), filepath.Join(cmp.Or(os.Getenv("XDG_CACHE_HOME"), filepath.Join(home, ".cache")), "fargatekit")), "controlplane")
	dirs, _ := filepath.Glob(filepath.Join(cache, "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int {
		ai, _ := os.Stat(a)
		bi, _ := os.Stat(b)
		if ai == nil || bi == nil {
			return 0
		}
		return bi.ModTime().Compare(ai.ModTime())
	})
	if len(dirs) == 0 {
		return filepath.Join(cache, "(no build yet)")
	}
	return dirs[0]
}

// newFaultCommand returns `emulator fault`: the faults to rehearse.
func newFaultCommand(f *flagpole, s streams.Streams) *cobra.Command {
	// recorded is the options of the emulator the flags select, which must
	// have been started once.
	recorded := func(cmd *cobra.Command) (*emulator.Options, error) {
		o, err := f.options(cmd, s, "fault")
		if err != nil {
			return nil, err
		}
		return o, started(o)
	}
	fault := &cobra.Command{
		Use:   "fault",
		Short: "Rehearse a fault of AWS in the emulator: an AZ outage, a Fargate OS patch",
		Long: "A fault stays in force, across down and up, until it is cleared; the daemon applies it within a\n" +
			"second. During an outage of an AZ, its nodes (Fargate and node groups) stop heartbeating: the\n" +
			"controller-manager marks them NotReady, taints them and evicts their pods after their\n" +
			"tolerationSeconds for node.kubernetes.io/unreachable, as in a cluster. fargate-scheduler starts\n" +
			"no pod there (a pod whose profile has subnets only there stays Pending with a FailedScheduling\n" +
			"event; the settings' azOutage says what becomes of the others) and node groups create no node\n" +
			"there. Once cleared, the nodes are Ready again and pods are placed there again.\n\n" +
			"A Fargate OS patch recycles the Fargate pods created before it, as EKS does: evicted through\n" +
			"the Eviction API, so that PodDisruptionBudgets hold, one AZ after another. A pod whose budget\n" +
			"keeps refusing gets a Warning event FargatePodScheduledTermination and is deleted later.",
		Example: "  fargatekit emulator fault az-outage us-east-1a\n" +
			"  fargatekit emulator fault fargate-patch --grace 2m --wait\n" +
			"  fargatekit emulator fault list\n" +
			"  fargatekit emulator fault clear us-east-1a\n" +
			"  fargatekit emulator fault clear      # every fault",
	}
	fault.AddCommand(
		&cobra.Command{Use: "az-outage ZONE", Short: "Put an AZ of the cluster down", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				o, err := recorded(cmd)
				if err != nil {
					return err
				}
				started, err := o.StartAZOutage(args[0])
				if err != nil {
					return err
				}
				if !started {
					fmt.Fprintf(s.Out, "%s is already down\n", args[0])
					return nil
				}
				fmt.Fprintf(s.Out, "%s is down: its nodes stop heartbeating, nothing new starts there (fargatekit emulator fault clear %s ends it)\n", args[0], args[0])
				return nil
			}},
		newPatchCommand(recorded, s),
		&cobra.Command{Use: "clear [ZONE|fargate-patch]", Short: "End the outage of an AZ, or the Fargate OS patch, or every fault", Args: cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				o, err := recorded(cmd)
				if err != nil {
					return err
				}
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				up, patch, err := o.ClearFaults(name)
				if err != nil {
					return err
				}
				if len(up) == 0 && !patch {
					fmt.Fprintln(s.Out, "no such fault in force")
				}
				for _, z := range up {
					fmt.Fprintf(s.Out, "%s is up again\n", z)
				}
				if patch {
					fmt.Fprintln(s.Out, "the Fargate OS patch is stopped: no more pod is evicted or deleted for it")
				}
				return nil
			}},
		&cobra.Command{Use: "list", Short: "List the faults in force", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := recorded(cmd)
				if err != nil {
					return err
				}
				faults, err := emulator.ReadFaults(o.StateDir)
				if err != nil {
					return err
				}
				if len(faults.AZOutages) == 0 && faults.FargatePatch == nil {
					fmt.Fprintln(s.Out, "no fault in force")
					return nil
				}
				tw := tabwriter.NewWriter(s.Out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(tw, "FAULT\tZONE\tSTATE")
				for _, z := range faults.AZOutages {
					fmt.Fprintf(tw, "az-outage\t%s\tdown\n", z)
				}
				if p := faults.FargatePatch; p != nil {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", emulator.PatchFault, patchZone(o, p), patchState(o, p))
				}
				return tw.Flush()
			}},
	)
	return fault
}

// newPatchCommand returns `emulator fault fargate-patch`.
func newPatchCommand(recorded func(*cobra.Command) (*emulator.Options, error), s streams.Streams) *cobra.Command {
	var (
		grace, retry, timeout time.Duration
		wait                  bool
	)
	cmd := &cobra.Command{
		Use:   "fargate-patch",
		Short: "Recycle the Fargate pods as EKS does when it patches Fargate",
		Long: "Notifies a Fargate OS patch now. The daemon evicts the Fargate pods created before it through the\n" +
			"Eviction API, so that PodDisruptionBudgets hold, AZ by AZ in the cluster's order, trying a refused\n" +
			"eviction again for --retry. Then the pod gets a Warning event FargatePodScheduledTermination (EKS\n" +
			"sends the EventBridge event \"EKS Fargate Pod Scheduled Termination\" to the account) and the\n" +
			"annotation emulator.fargatekit.io/scheduled-termination, and is deleted --grace later unless it\n" +
			"was restarted meanwhile. On AWS the notification gives a date days away; --grace is short here.",
		Example: "  fargatekit emulator fault fargate-patch\n" +
			"  fargatekit emulator fault fargate-patch --grace 30s --wait --timeout 10m",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if grace < time.Second {
				return fmt.Errorf("--grace %s: must be at least 1s, how long a pod whose eviction is refused runs before it is deleted", grace)
			}
			if retry < time.Second {
				return fmt.Errorf("--retry %s: must be at least 1s, how long a refused eviction is tried again", retry)
			}
			if timeout < time.Second {
				return fmt.Errorf("--timeout %s: must be at least 1s, how long --wait waits for the patch", timeout)
			}
			o, err := recorded(cmd)
			if err != nil {
				return err
			}
			started, err := o.StartFargatePatch(grace, retry)
			if err != nil {
				return err
			}
			if !started {
				fmt.Fprintf(s.Out, "a Fargate OS patch is already under way (fargatekit emulator fault list; fault clear %s stops it)\n", emulator.PatchFault)
			} else {
				fmt.Fprintf(s.Out, "Fargate OS patch notified: the Fargate pods created before now are evicted AZ by AZ; one whose budget refuses is deleted %s after\n", grace)
			}
			if !wait {
				return nil
			}
			return waitPatch(cmd.Context(), o, s, timeout)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&grace, "grace", time.Minute, "how long a pod whose eviction is refused runs before it is deleted")
	fl.DurationVar(&retry, "retry", 30*time.Second, "how long a refused eviction is tried again before the pod's termination is scheduled")
	fl.BoolVar(&wait, "wait", false, "wait until every AZ is patched, saying each")
	fl.DurationVar(&timeout, "timeout", 15*time.Minute, "with --wait, how long to wait (exit 1 after it)")
	return cmd
}

// waitPatch waits until the patch in force is done, saying each AZ
// patched; it exits 1 after timeout, or when the patch is cleared.
func waitPatch(ctx context.Context, o *emulator.Options, s streams.Streams, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	said := 0
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		f, err := emulator.ReadFaults(o.StateDir)
		if err != nil {
			return err
		}
		p := f.FargatePatch
		if p == nil {
			fmt.Fprintln(s.ErrOut, "error: the Fargate OS patch was cleared before it was done")
			return &streams.ExitError{Code: streams.ExitFindings}
		}
		for ; said < len(p.Patched); said++ {
			fmt.Fprintf(s.Out, "%s patched\n", p.Patched[said])
		}
		if p.Done != nil {
			fmt.Fprintln(s.Out, "the Fargate OS patch is done")
			return nil
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(s.ErrOut, "error: the Fargate OS patch is not done after %s: %s (fargatekit emulator fault list)\n", timeout, patchState(o, p))
			return &streams.ExitError{Code: streams.ExitFindings}
		case <-t.C:
		}
	}
}

// patchZone is the AZ a patch is at, or "-" when it is done.
func patchZone(o *emulator.Options, p *emulator.FargatePatch) string {
	for _, z := range o.Config.AvailabilityZones {
		if p.Done == nil && !slices.Contains(p.Patched, z) {
			return z
		}
	}
	return "-"
}

// patchState says how far a patch is.
func patchState(o *emulator.Options, p *emulator.FargatePatch) string {
	if p.Done != nil {
		return "done at " + p.Done.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("evicting (%d of %d AZs patched)", len(p.Patched), len(o.Config.AvailabilityZones))
}
