// Package scancmd implements `fargatekit scan`: check's rules and the
// incidents of pkg/live on a running cluster, read-only.
package scancmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/clusterflags"
	"github.com/fargatekit/fargatekit/internal/cli/reportflags"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/livereport"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// NewCommand returns the scan command.
func NewCommand(s streams.Streams) *cobra.Command {
	f := &clusterflags.Scan{}
	var rf reportflags.Flags
	cmd := &cobra.Command{
		Use:   "scan [flags]",
		Short: "Find, in a running cluster, pods left off Fargate, refused, piled into one AZ or stuck, and removed APIs in use",
		Long: "scan reads a running EKS cluster (never writes to it): its pods, nodes, events and workloads through the\n" +
			"kubeconfig, as kubectl does, and its Fargate profiles through the EKS API, as the AWS CLI does. It runs\n" +
			"every rule of check on the live workloads and reports what happened in the cluster: pods off Fargate\n" +
			"that a profile matches now (drift), pods refused by fargate-scheduler or placed nowhere, replicas piled\n" +
			"into one AZ, kubelets behind the control plane, pods stuck Terminating, fargate-null nodes, removed\n" +
			"APIs in last-applied configurations and Helm releases, and what Fargate bills. A finding that a\n" +
			"command repairs shows it.\n\n" +
			"When the EKS API cannot be read, scan says why in one line and reports everything else.\n\n" +
			"Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it; 2 the cluster could not be\n" +
			"read, or part of it (the rest is still reported).",
		Example: "  # The cluster of the current kubeconfig context\n" +
			"  fargatekit scan\n\n" +
			"  # The emulator: its environment points kubectl, the AWS CLI and scan at it\n" +
			"  eval \"$(fargatekit emulator env)\"\n" +
			"  fargatekit scan\n\n" +
			"  # Another context and cluster, JSON for a pipeline, failing on warnings\n" +
			"  fargatekit scan --context prod --cluster-name prod -o json --fail-on warning\n\n" +
			"  # A page: each workload's pods per AZ, the billed cost, drift and stuck pods\n" +
			"  fargatekit scan -o html > scan.html",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.Check(); err != nil {
				return err
			}
			out, err := rf.Resolve(s.Out)
			if err != nil {
				return err
			}
			set, err := settings.Resolve(f.SettingsPath)
			if err != nil {
				return err
			}
			rep, err := Scan(cmd.Context(), f, set)
			if err != nil {
				return err
			}
			rep.Version = cmd.Root().Version
			if err := out.Write(s.Out, rep, out.Options); err != nil {
				return fmt.Errorf("writing the report: %w", err)
			}
			return streams.ExitFor(len(rep.Errors) > 0, rules.Worst(rep.Findings), out.FailOn)
		},
	}
	f.Add(cmd.Flags())
	rf.Add(cmd.Flags())
	return cmd
}

// Scan reads the cluster and analyses it. The error means nothing could be read.
func Scan(ctx context.Context, f *clusterflags.Scan, set *settings.Settings) (*report.Report, error) {
	if f.TargetVersion != "" {
		if _, err := eks.ParseMinor(f.TargetVersion); err != nil {
			return nil, fmt.Errorf("--target-version: %w", err)
		}
	}
	conn, err := cluster.Connect(ctx, f.Target)
	if err != nil {
		return nil, err
	}
	snap, read, c := conn.Read(ctx, cluster.ReadOptions{Helm: f.Helm})
	return livereport.Build(snap, read, c, livereport.Options{Target: f.TargetVersion, StuckAfter: f.StuckAfter, SubnetHeadroom: f.SubnetHeadroom, Settings: set})
}
