// Package emulatorcmd implements `fargatekit emulator`: EKS on Fargate on a
// laptop or in CI.
package emulatorcmd

import (
	"cmp"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/emulator/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/settings"
)

type flagpole struct {
	configPath   string
	settingsPath string
	stateDir     string
	binDir       string
	eksPort      int
	webhookPort  int
}

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
			"Build the control plane once with `make controlplane`. See docs/emulator.md.",
		Example: "  fargatekit emulator up\n" +
			"  export KUBECONFIG=$(fargatekit emulator kubeconfig)\n" +
			"  aws eks list-fargate-profiles --cluster-name fargatekit --endpoint-url http://127.0.0.1:8780\n" +
			"  fargatekit emulator down",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.configPath, "config", "", "cluster configuration (default: one cluster in us-east-1, see docs/emulator.md)")
	settings.AddFlag(pf, &f.settingsPath)
	pf.StringVar(&f.stateDir, "state-dir", "", "where the emulator keeps its state (default: $XDG_STATE_HOME/fargatekit/emulator/<cluster>)")
	pf.StringVar(&f.binDir, "bin-dir", "", "directory of the control plane binaries (default: $FARGATEKIT_CONTROLPLANE, or the newest build of hack/build-controlplane.sh)")
	pf.IntVar(&f.eksPort, "eks-port", 8780, "loopback port of the EKS API")
	pf.IntVar(&f.webhookPort, "webhook-port", 8781, "loopback port of the Fargate admission webhook")
	cmd.AddCommand(
		&cobra.Command{Use: "up", Short: "Start the emulator (created on the first run, restarted with its state afterwards)", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(s)
				if err != nil {
					return err
				}
				if err := emulator.Up(cmd.Context(), o); err != nil {
					return err
				}
				fmt.Fprintf(s.Out, "EKS cluster %q (Kubernetes %s, %s) is up.\n\n", o.Config.Metadata.Name, o.Config.KubernetesVersion, o.Config.Metadata.Region)
				fmt.Fprintf(s.Out, "  export KUBECONFIG=%s\n", o.Kubeconfig())
				fmt.Fprintf(s.Out, "  export AWS_ENDPOINT_URL_EKS=%s AWS_REGION=%s AWS_ACCESS_KEY_ID=emulator AWS_SECRET_ACCESS_KEY=emulator\n", o.EKSEndpoint(), o.Config.Metadata.Region)
				fmt.Fprintf(s.Out, "  kubectl get nodes\n")
				fmt.Fprintf(s.Out, "  aws eks list-fargate-profiles --cluster-name %s --endpoint-url %s\n", o.Config.Metadata.Name, o.EKSEndpoint())
				return nil
			}},
		&cobra.Command{Use: "down", Short: "Stop every process the emulator started; its state stays for the next up", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(s)
				if err != nil {
					return err
				}
				return emulator.Down(cmd.Context(), o)
			}},
		&cobra.Command{Use: "status", Short: "Say what runs (exit code 1 when not everything does)", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(s)
				if err != nil {
					return err
				}
				st := emulator.GetStatus(cmd.Context(), o)
				fmt.Fprintf(s.Out, "control plane: %s\ndaemon: %s\nstate: %s\n", upDown(st.ControlPlane), upDown(st.DaemonPID > 0), o.StateDir)
				if !st.ControlPlane || st.DaemonPID == 0 {
					return &streams.ExitError{Code: streams.ExitFindings}
				}
				return nil
			}},
		&cobra.Command{Use: "kubeconfig", Short: "Print the path of the emulated cluster's kubeconfig", Args: cobra.NoArgs,
			RunE: func(*cobra.Command, []string) error {
				o, err := f.options(s)
				if err != nil {
					return err
				}
				fmt.Fprintln(s.Out, o.Kubeconfig())
				return nil
			}},
		&cobra.Command{Use: "serve", Short: "Run the emulator's daemon in the foreground (emulator up starts it)", Hidden: true, Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				o, err := f.options(s)
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				return emulator.RunDaemon(ctx, emulator.DaemonOptions{
					Config: o.Config, Settings: o.Settings.Fargate, StateDir: o.StateDir, Kubeconfig: o.Kubeconfig(),
					EKSAddr: fmt.Sprintf("127.0.0.1:%d", o.EKSPort), WebhookAddr: fmt.Sprintf("127.0.0.1:%d", o.WebhookPort),
				})
			}},
	)
	return cmd
}

func upDown(ok bool) string {
	if ok {
		return "running"
	}
	return "stopped"
}

// options resolves the flags into the emulator's options.
func (f *flagpole) options(s streams.Streams) (*emulator.Options, error) {
	cfg, err := clusterconfig.Load(f.configPath)
	if err != nil {
		return nil, err
	}
	set, err := settings.Resolve(f.settingsPath)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckLimits(set.Fargate.Limits); err != nil {
		return nil, fmt.Errorf("emulator config %s: %w", cmp.Or(f.configPath, "(defaults)"), err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the fargatekit binary: %w", err)
	}
	configPath := f.configPath
	if configPath != "" {
		if configPath, err = filepath.Abs(configPath); err != nil {
			return nil, err
		}
	}
	stateDir := f.stateDir
	if stateDir == "" {
		home, _ := os.UserHomeDir()
		stateDir = filepath.Join(cmp.Or(os.Getenv("XDG_STATE_HOME"), filepath.Join(home, ".local", "state")), "fargatekit", "emulator", cfg.Metadata.Name)
	}
	if stateDir, err = filepath.Abs(stateDir); err != nil {
		return nil, err
	}
	return &emulator.Options{
		Config: cfg, ConfigPath: configPath, Settings: set, SettingsPath: set.Path, StateDir: stateDir, BinDir: cmp.Or(f.binDir, os.Getenv("FARGATEKIT_CONTROLPLANE"), newestBuild()),
		Self: self, EKSPort: f.eksPort, WebhookPort: f.webhookPort, Progress: s.ErrOut,
	}, nil
}

// newestBuild returns the newest bin directory hack/build-controlplane.sh made.
func newestBuild() string {
	home, _ := os.UserHomeDir()
	cache := cmp.Or(os.Getenv("FARGATEKIT_CACHE"), filepath.Join(cmp.Or(os.Getenv("XDG_CACHE_HOME"), filepath.Join(home, ".cache")), "fargatekit"))
	dirs, _ := filepath.Glob(filepath.Join(cache, "controlplane", "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int {
		ai, _ := os.Stat(a)
		bi, _ := os.Stat(b)
		if ai == nil || bi == nil {
			return 0
		}
		return bi.ModTime().Compare(ai.ModTime())
	})
	if len(dirs) == 0 {
		return filepath.Join(cache, "controlplane", "bin")
	}
	return dirs[0]
}
