// Package cli builds the fargatekit command tree. Only Main's caller exits.
package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/checkcmd"
	"github.com/fargatekit/fargatekit/internal/cli/emulatorcmd"
	"github.com/fargatekit/fargatekit/internal/cli/fixcmd"
	"github.com/fargatekit/fargatekit/internal/cli/plancmd"
	"github.com/fargatekit/fargatekit/internal/cli/rulescmd"
	"github.com/fargatekit/fargatekit/internal/cli/scancmd"
	"github.com/fargatekit/fargatekit/internal/cli/spreadcmd"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cli/upgradecmd"
	"github.com/fargatekit/fargatekit/internal/cli/versioncmd"
	"github.com/fargatekit/fargatekit/internal/cli/watchcmd"
)

// Version, Commit and BuildDate are set by release builds with -ldflags
// "-X github.com/fargatekit/fargatekit/internal/cli.Version=...";
// unset, `fargatekit version` reads what Go recorded in the binary.
var (
	Version   string
	Commit    string
	BuildDate string
)

// build is what the release build set.
func build() versioncmd.Build {
	return versioncmd.Build{Version: Version, Commit: Commit, Date: BuildDate}
}

// The names the binary answers to besides fargatekit: kubectl runs a plugin
// named kubectl-fargatekit for `kubectl fargatekit ...`, and asks one named
// kubectl_complete-fargatekit for the completions of its arguments.
const (
	Plugin           = "kubectl-fargatekit"
	PluginCompletion = "kubectl_complete-fargatekit"
)

// Main runs fargatekit, invoked as arg0 (os.Args[0]) with args, and returns
// the exit code.
func Main(arg0 string, args []string, s streams.Streams) int {
	cmd := NewCommand(s)
	switch name := strings.TrimSuffix(filepath.Base(arg0), ".exe"); name {
	case Plugin, PluginCompletion:
		Rename(cmd, "kubectl fargatekit")
		if name == PluginCompletion {
			args = append([]string{cobra.ShellCompRequestCmd}, args...)
		}
	}
	cmd.SetArgs(args)
	err := cmd.Execute()
	var exit *streams.ExitError
	switch {
	case err == nil:
		return streams.ExitOK
	case errors.As(err, &exit):
		return exit.Code
	default:
		fmt.Fprintf(s.ErrOut, "error: %v\n", err)
		return streams.ExitInvalid
	}
}

var exampleCommand = regexp.MustCompile(`(^|[\s"(])fargatekit `)

// Rename makes the help of the command tree under root name it as it was
// invoked: its usage lines and the commands of its examples.
func Rename(root *cobra.Command, name string) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = exampleCommand.ReplaceAllString(c.Example, "${1}"+name+" ")
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// NewCommand returns the root command.
func NewCommand(s streams.Streams) *cobra.Command {
	var logLevel string
	cmd := &cobra.Command{
		Use:   "fargatekit",
		Short: "Find what breaks, moves or costs money on Amazon EKS with AWS Fargate",
		Long: "fargatekit knows the hidden rules of EKS on Fargate: which pods Fargate profiles place there, what\n" +
			"fargate-scheduler refuses, how it sizes and bills a pod, and what an upgrade removes; in manifests\n" +
			"(check, plan) and in running clusters (scan, fix, spread).",
		Example: "  # Check manifests against Fargate profiles from an eksctl config\n" +
			"  fargatekit check --profiles cluster.yaml deploy/\n\n" +
			"  # What a Terraform change of Fargate profiles does to the pods\n" +
			"  fargatekit plan --terraform plan.json deploy/\n\n" +
			"  # A running cluster: pods left off Fargate, refused, piled into one AZ; then repair the drift\n" +
			"  fargatekit scan\n" +
			"  fargatekit fix drift --apply\n\n" +
			"  # Replicas balanced across AZs on Fargate (one profile per AZ, a webhook that picks)\n" +
			"  fargatekit spread install --emulator\n\n" +
			"  # EKS on Fargate locally (build the control plane once: make controlplane)\n" +
			"  fargatekit emulator up\n\n" +
			"  # List the rules\n" +
			"  fargatekit rules",
		Version:       versioncmd.Current(build()).Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return fmt.Errorf("--log-level: %w", err)
			}
			slog.SetDefault(slog.New(slog.NewTextHandler(s.ErrOut, &slog.HandlerOptions{Level: level})))
			return nil
		},
	}
	cmd.SetIn(s.In)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.PersistentFlags().StringVar(&logLevel, "log-level", "warn", "log level: debug, info, warn or error (logs go to standard error)")
	cmd.AddCommand(checkcmd.NewCommand(s), plancmd.NewCommand(s), scancmd.NewCommand(s), fixcmd.NewCommand(s), spreadcmd.NewCommand(s), upgradecmd.NewCommand(s), watchcmd.NewCommand(s), emulatorcmd.NewCommand(s), rulescmd.NewCommand(s), versioncmd.NewCommand(s, build()))
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	return cmd
}

// refuseUnknownSubcommands makes every command under c that only groups
// others (fix, spread, emulator, ...) refuse an argument that names none of
// them, with cobra's suggestion, as kubectl does: cobra checks the
// subcommands of the root only, and shows a group's help and succeeds for
// `fargatekit fix drfit`, so a script with a typo would pass doing nothing.
// With no argument, the group still shows its help.
func refuseUnknownSubcommands(c *cobra.Command) {
	for _, sub := range c.Commands() {
		refuseUnknownSubcommands(sub)
	}
	if !c.HasSubCommands() || c.Runnable() {
		return
	}
	// cobra sets the distance only for the root's own suggestions.
	c.SuggestionsMinimumDistance = 2
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if suggestions := c.SuggestionsFor(args[0]); len(suggestions) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(suggestions, "\n\t")
		}
		return errors.New(msg + "\n\nRun '" + c.CommandPath() + " --help' for usage.")
	}
	c.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
}
