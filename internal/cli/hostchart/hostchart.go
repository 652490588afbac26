// Package hostchart is what `spread install`, `watch install` and their
// uninstall share: finding the emulator, and the command that uninstalls
// a chart of fargatekit from it and stops the process standing in for its
// pod.
package hostchart

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/emulator"
)

// NewUninstall returns `fargatekit NAME uninstall --emulator` for the chart
// c of the component name (spread, watch).
func NewUninstall(s streams.Streams, name string, c emulator.HostChart) *cobra.Command {
	var stateDir string
	var onEmulator bool
	cmd := &cobra.Command{
		Use:     "uninstall --emulator",
		Short:   fmt.Sprintf("Uninstall %s's Helm release from the emulator and stop its process", name),
		Example: fmt.Sprintf("  fargatekit %s uninstall --emulator", name),
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if !onEmulator {
				return fmt.Errorf("only --emulator is supported here: uninstall the Helm release in a cluster (helm uninstall -n %s %s)", c.Namespace, c.Release)
			}
			dir, _, err := emulator.Target(stateDir)
			if err != nil {
				return err
			}
			found, err := emulator.UninstallHostChart(filepath.Join(dir, "kubeconfig"), dir, c)
			if err != nil {
				return err
			}
			if found {
				fmt.Fprintln(s.Out, name+" removed")
			} else {
				fmt.Fprintln(s.Out, name+" was not installed")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&onEmulator, "emulator", false, "uninstall from the emulator (required)")
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "the emulator's state directory (default: the only emulator)")
	return cmd
}

// Emulator is what `install --emulator` needs of the running emulator.
type Emulator struct {
	// Dir is its state directory, Record its record.
	Dir    string
	Record *emulator.Record
	// Client is its admin's.
	Client kubernetes.Interface
	// Self is this fargatekit binary, which stands in for the chart's pod.
	Self string
}

// Open finds the emulator of stateDir, or the only one.
func Open(stateDir string) (*Emulator, error) {
	dir, rec, err := emulator.Target(stateDir)
	if err != nil {
		return nil, err
	}
	client, err := emulator.AdminClient(dir)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the fargatekit binary: %w", err)
	}
	return &Emulator{Dir: dir, Record: rec, Client: client, Self: self}, nil
}
