// Package plancmd implements `fargatekit plan`: what a change of Fargate
// profiles does to the pods of the workloads it touches, and how to make it
// without moving them off Fargate.
package plancmd

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/reportflags"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/internal/render"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/plan"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/compat"
)

type flagpole struct {
	report      reportflags.Flags
	terraform   string
	oldConfig   string
	newConfig   string
	cluster     string
	nodeGroups  string
	durations   plan.Durations
	namespace   string
	maxFileSize int64
	render      render.Options
	settings    string
}

// NewCommand returns the plan command.
func NewCommand(s streams.Streams) *cobra.Command {
	f := &flagpole{durations: plan.DefaultDurations}
	cmd := &cobra.Command{
		Use:   "plan (--terraform PLAN.json | --old OLD --new NEW) [flags] [PATH...]",
		Short: "Find the workloads a Fargate profile change would move off Fargate",
		Long: "plan reads a change of Fargate profiles (a Terraform plan, or an old and a new eksctl ClusterConfig)\n" +
			"and the workloads it affects (manifests as for check), and simulates the change the way EKS makes it:\n" +
			"one profile operation at a time per cluster, in the worst order the tool may choose, with pods placed\n" +
			"only when they are created. It reports the workloads whose pods leave Fargate during the change,\n" +
			"where they go, those left on EC2 until restarted, the selector coverage lost and gained, how long the\n" +
			"operations take, and the two-phase sequence that keeps the pods on Fargate.\n\n" +
			"Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it (a workload leaving Fargate\n" +
			"is a blocker); 2 usage or input errors.",
		Example: "  # A Terraform plan and the manifests of the namespaces it touches\n" +
			"  terraform plan -out plan.tfplan && terraform show -json plan.tfplan > plan.json\n" +
			"  fargatekit plan --terraform plan.json deploy/\n\n" +
			"  # Two versions of an eksctl ClusterConfig\n" +
			"  git show main:cluster.yaml > old.yaml\n" +
			"  fargatekit plan --old old.yaml --new cluster.yaml deploy/\n\n" +
			"  # Workloads from a Helm chart and from a Kustomize overlay\n" +
			"  fargatekit plan --terraform plan.json charts/shop -f values-prod.yaml deploy/overlays/prod\n\n" +
			"  # Selector coverage only, without workloads; slower profile operations\n" +
			"  fargatekit plan --terraform plan.json --delete-duration 20m\n\n" +
			"  # The timeline of the change as a page: where each workload's pods are, operation by operation\n" +
			"  fargatekit plan --terraform plan.json -o html deploy/ > plan.html",
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, s, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.terraform, "terraform", "", "the JSON of a Terraform plan: terraform show -json PLAN > plan.json")
	fl.StringVar(&f.oldConfig, "old", "", "the profiles before the change: an eksctl ClusterConfig (eksctl's semantics: delete first; give Terraform plans with --terraform)")
	fl.StringVar(&f.newConfig, "new", "", "the profiles after the change: an eksctl ClusterConfig (with --old)")
	fl.StringVar(&f.cluster, "cluster", "", "cluster name for the commands of the safe sequence (default: from the plan or config)")
	fl.StringVar(&f.nodeGroups, "node-groups", "auto", "whether the cluster has EC2 nodes for pods no profile takes: yes, no, or auto (from the plan or config)")
	fl.DurationVar(&f.durations.Create, "create-duration", plan.DefaultDurations.Create, "how long one profile creation takes")
	fl.DurationVar(&f.durations.Delete, "delete-duration", plan.DefaultDurations.Delete, "how long one profile deletion takes")
	fl.StringVarP(&f.namespace, "namespace", "n", "default", "namespace of objects that name none")
	f.report.Add(fl)
	fl.Int64Var(&f.maxFileSize, "max-file-size", manifest.DefaultMaxFileSize, "largest file read, and most a chart or kustomization renders, in bytes")
	settings.AddFlag(fl, &f.settings)
	f.render.AddFlags(fl)
	return cmd
}

// change is a profile change read from a Terraform plan or two configs.
type change struct {
	source     string
	changes    []plan.Change
	unchanged  []fargate.Profile
	nodeGroups bool
	// tool makes the change; the safe sequence is written in its commands.
	tool plan.Tool
}

func run(cmd *cobra.Command, s streams.Streams, f *flagpole, paths []string) error {
	for _, d := range []struct {
		flag string
		d    time.Duration
	}{{"--create-duration", f.durations.Create}, {"--delete-duration", f.durations.Delete}} {
		if d.d < time.Second {
			return fmt.Errorf("%s %s: must be at least 1s, how long EKS takes over one profile", d.flag, d.d)
		}
	}
	out, err := f.report.Resolve(s.Out)
	if err != nil {
		return err
	}
	ch, err := readChange(f)
	if err != nil {
		return err
	}
	switch f.nodeGroups {
	case "yes":
		ch.nodeGroups = true
	case "no":
		ch.nodeGroups = false
	case "auto":
	default:
		return fmt.Errorf("--node-groups must be yes, no or auto, not %q", f.nodeGroups)
	}
	ch.tool.Cluster = cmp.Or(f.cluster, ch.tool.Cluster, "CLUSTER")
	if f.durations.Create <= 0 || f.durations.Delete <= 0 {
		return fmt.Errorf("--create-duration and --delete-duration must be positive")
	}

	set, err := settings.Resolve(f.settings)
	if err != nil {
		return err
	}
	rep := &report.Report{Version: cmd.Root().Version, Rules: set.Enabled(planRules), Target: eks.DefaultTarget(time.Now())}
	workloads := loadWorkloads(s, f, set, paths, rep, rep.Target)
	in := plan.Input{Changes: ch.changes, Unchanged: ch.unchanged, Workloads: workloads, NodeGroups: ch.nodeGroups, Durations: f.durations}
	if len(ch.changes) == 0 {
		fmt.Fprintf(s.ErrOut, "%s: no Fargate profile is created, deleted or replaced: nothing to analyse\n", ch.source)
	}
	res := plan.Analyze(in)
	rep.Findings = set.Apply(append(plan.Findings(in, res, ch.source), plan.QuotaFindings(in, res, set.Fargate.Limits)...))
	rep.Plan = &report.Plan{Source: ch.source, Result: res, Sequence: plan.Commands(res, ch.tool)}
	if err := out.Write(s.Out, rep, out.Options); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return streams.ExitFor(len(rep.Errors) > 0, rules.Worst(rep.Findings), out.FailOn)
}

// readChange reads the change from a Terraform plan or two profile sources.
func readChange(f *flagpole) (*change, error) {
	switch {
	case f.terraform != "" && (f.oldConfig != "" || f.newConfig != ""):
		return nil, fmt.Errorf("give either --terraform or --old and --new, not both")
	case f.terraform != "":
		data, err := os.ReadFile(f.terraform)
		if err != nil {
			return nil, fmt.Errorf("reading the Terraform plan: %w", err)
		}
		tp, err := profiles.ParseTerraform(f.terraform, data)
		if err != nil {
			return nil, err // names the file
		}
		clusters := map[string]bool{}
		for _, c := range tp.Changes {
			if c.Cluster != "" {
				clusters[c.Cluster] = true
			}
		}
		if len(clusters) > 1 && f.cluster == "" {
			return nil, fmt.Errorf("%s changes the Fargate profiles of several clusters (%s): choose one with --cluster, since each cluster runs its own profile operations",
				f.terraform, strings.Join(slices.Sorted(maps.Keys(clusters)), ", "))
		}
		ch := &change{source: f.terraform, nodeGroups: tp.EC2Capacity(cmp.Or(f.cluster, tp.Cluster())), tool: plan.Tool{Terraform: true}}
		ch.changes, ch.unchanged, ch.tool.Cluster = tp.PlanChanges(f.cluster)
		return ch, nil
	case f.oldConfig != "" && f.newConfig != "":
		before, err := readConfig(f.oldConfig)
		if err != nil {
			return nil, err
		}
		after, err := readConfig(f.newConfig)
		if err != nil {
			return nil, err
		}
		ch := &change{}
		ch.changes, ch.unchanged = plan.Diff(before.Profiles, after.Profiles)
		ch.source = f.oldConfig + " -> " + f.newConfig
		ch.tool.Config = f.newConfig
		ch.nodeGroups = after.NodeGroups > 0 || before.NodeGroups > 0
		ch.tool.Cluster = cmp.Or(after.Cluster, before.Cluster)
		return ch, nil
	}
	return nil, fmt.Errorf("give the change: --terraform PLAN.json, or --old OLD --new NEW (see fargatekit plan --help)")
}

// readConfig reads an eksctl ClusterConfig for --old or --new. Only eksctl's
// semantics (delete first, one profile at a time) are modelled for two
// configs: other formats have their own (CloudFormation creates first).
func readConfig(path string) (profiles.Set, error) {
	set, err := profiles.ReadFile(path)
	if err != nil {
		return set, fmt.Errorf("%s: %w", path, err)
	}
	if set.Format != profiles.FormatEksctl {
		return set, fmt.Errorf("%s: --old and --new compare eksctl ClusterConfigs, not %s; for Terraform, give the plan with --terraform", path, set.Format)
	}
	return set, nil
}

// loadWorkloads reads the manifests and keeps what the simulation needs.
func loadWorkloads(s streams.Streams, f *flagpole, set *settings.Settings, paths []string, rep *report.Report, target string) []plan.Workload {
	if len(paths) == 0 {
		return nil
	}
	// An empty list of profiles: placement then says only which pods EKS's
	// webhook leaves alone whatever the profiles (the compute-type
	// annotation, a scheduler of their own).
	engine := rules.NewEngine(&rules.Context{Namespace: f.namespace, Profiles: []fargate.Profile{}}, nil, rules.Options{})
	f.render.Namespace, f.render.KubeVersion, f.render.MaxOutput = f.namespace, target, f.maxFileSize
	loader := &manifest.Loader{MaxFileSize: f.maxFileSize, Stdin: s.In, Expand: f.render.Expand, Skip: set.Ignored}
	loader.Load(paths, engine.Add, func(e manifest.Error) { rep.Errors = append(rep.Errors, e) })
	var out []plan.Workload
	for w := range engine.Result().Workloads.Sorted() {
		off := w.Placement.Reason
		if off == fargate.ReasonNoProfile {
			off = ""
		}
		out = append(out, plan.Workload{Ref: w.Ref, Source: w.Source, Namespace: w.Namespace, Labels: w.Labels, OffFargate: off})
	}
	return out
}

// planRules are the rules whose findings plan reports.
var planRules = append(slices.Clone(plan.Rules), compat.ProfileQuota)
