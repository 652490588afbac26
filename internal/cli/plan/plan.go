// Package plan implements `fargatekit plan`: what a change of Fargate
// profiles does to the pods of the workloads it touches, and how to make it
// without moving them off Fargate.
package plan

import (
	"cmp"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/internal/render"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/plan"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

type flagpole struct {
	terraform   string
	oldConfig   string
	newConfig   string
	cluster     string
	nodeGroups  string
	durations   plan.Durations
	namespace   string
	output      string
	failOn      string
	color       string
	maxFileSize int64
	render      render.Options
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
			"  fargatekit plan --terraform plan.json --delete-duration 20m",
		RunE: func(cmd *cobra.Command, args []string) error {
			return run(cmd, s, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.terraform, "terraform", "", "the JSON of a Terraform plan: terraform show -json PLAN > plan.json")
	fl.StringVar(&f.oldConfig, "old", "", "the profiles before the change: an eksctl ClusterConfig or another --profiles source of check")
	fl.StringVar(&f.newConfig, "new", "", "the profiles after the change (with --old)")
	fl.StringVar(&f.cluster, "cluster", "", "cluster name for the commands of the safe sequence (default: from the plan or config)")
	fl.StringVar(&f.nodeGroups, "node-groups", "auto", "whether the cluster has EC2 nodes for pods no profile takes: yes, no, or auto (from the plan or config)")
	fl.DurationVar(&f.durations.Create, "create-duration", plan.DefaultDurations.Create, "how long one profile creation takes")
	fl.DurationVar(&f.durations.Delete, "delete-duration", plan.DefaultDurations.Delete, "how long one profile deletion takes")
	fl.StringVarP(&f.namespace, "namespace", "n", "default", "namespace of objects that name none")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: "+strings.Join(report.FormatNames(), ", "))
	fl.StringVar(&f.failOn, "fail-on", "blocker", "lowest severity that makes the exit code 1: blocker, warning, info or none")
	fl.StringVar(&f.color, "color", "auto", "colour text output: auto, always or never")
	fl.Int64Var(&f.maxFileSize, "max-file-size", manifest.DefaultMaxFileSize, "largest file read, in bytes")
	f.render.AddFlags(fl)
	return cmd
}

// change is a profile change read from a Terraform plan or two configs.
type change struct {
	source     string
	changes    []plan.Change
	unchanged  []fargate.Profile
	nodeGroups bool
	cluster    string
	terraform  bool
	// newConfig is the file of the new profiles, for eksctl.
	newConfig string
}

func run(cmd *cobra.Command, s streams.Streams, f *flagpole, paths []string) error {
	write, err := report.Lookup(f.output)
	if err != nil {
		return fmt.Errorf("--output: %w", err)
	}
	failOn, err := rules.ParseFailOn(f.failOn)
	if err != nil {
		return err
	}
	color, err := streams.Color(f.color, s.Out)
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
	ch.cluster = cmp.Or(f.cluster, ch.cluster, "CLUSTER")

	rep := &report.Report{Version: cmd.Root().Version, Rules: plan.Rules, Target: eks.DefaultTarget(time.Now())}
	workloads := loadWorkloads(s, f, paths, rep, rep.Target)
	in := plan.Input{Changes: ch.changes, Unchanged: ch.unchanged, Workloads: workloads, NodeGroups: ch.nodeGroups, Durations: f.durations}
	if len(ch.changes) == 0 {
		fmt.Fprintf(s.ErrOut, "%s: no Fargate profile is created, deleted or replaced: nothing to analyse\n", ch.source)
	}
	res := plan.Analyze(in)
	rep.Findings = plan.Findings(in, res, ch.source)
	rep.Plan = &report.Plan{Source: ch.source, Result: res, Sequence: sequence(ch, res)}
	if err := write(s.Out, rep, report.Options{Color: color}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return streams.ExitFor(len(rep.Errors) > 0, rep.Findings, failOn)
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
			return nil, fmt.Errorf("%s: %w", f.terraform, err)
		}
		ch := &change{source: f.terraform, nodeGroups: len(tp.NodeGroups) > 0, terraform: true}
		for _, c := range tp.Changes {
			ch.cluster = cmp.Or(ch.cluster, c.Cluster)
			switch c.Action {
			case profiles.ActionCreate, profiles.ActionDelete, profiles.ActionReplace:
				ch.changes = append(ch.changes, plan.Change{Address: c.Address, Before: c.Before, After: c.After, CreateBeforeDestroy: c.CreateBeforeDestroy})
			default: // no-op, update (tags only)
				if p := cmp.Or(c.After, c.Before); p != nil {
					ch.unchanged = append(ch.unchanged, *p)
				}
			}
		}
		return ch, nil
	case f.oldConfig != "" && f.newConfig != "":
		before, err := profiles.ReadFile(f.oldConfig)
		if err != nil {
			return nil, err
		}
		after, err := profiles.ReadFile(f.newConfig)
		if err != nil {
			return nil, err
		}
		ch := diff(before.Profiles, after.Profiles)
		ch.source = f.oldConfig + " -> " + f.newConfig
		ch.newConfig = f.newConfig
		ch.nodeGroups = after.NodeGroups > 0 || before.NodeGroups > 0
		ch.cluster = cmp.Or(after.Cluster, before.Cluster)
		return ch, nil
	}
	return nil, fmt.Errorf("give the change: --terraform PLAN.json, or --old OLD --new NEW (see fargatekit plan --help)")
}

// diff compares two sets of profiles by name. A profile whose definition
// changed is replaced, deleting first: EKS refuses a second profile of the
// same name, and eksctl cannot update one.
func diff(before, after []fargate.Profile) *change {
	ch := &change{}
	old := map[string]fargate.Profile{}
	for _, p := range before {
		old[p.Name] = p
	}
	seen := map[string]bool{}
	for _, p := range after {
		seen[p.Name] = true
		if o, ok := old[p.Name]; !ok {
			ch.changes = append(ch.changes, plan.Change{Address: p.Name, After: &p})
		} else if !sameProfile(o, p) {
			ch.changes = append(ch.changes, plan.Change{Address: p.Name, Before: &o, After: &p})
		} else {
			ch.unchanged = append(ch.unchanged, p)
		}
	}
	for _, p := range before {
		if !seen[p.Name] {
			ch.changes = append(ch.changes, plan.Change{Address: p.Name, Before: &p})
		}
	}
	slices.SortStableFunc(ch.changes, func(a, b plan.Change) int { return cmp.Compare(a.Address, b.Address) })
	return ch
}

func sameProfile(a, b fargate.Profile) bool {
	norm := func(p fargate.Profile) fargate.Profile {
		p.Subnets = slices.Sorted(slices.Values(p.Subnets))
		p.Status = ""
		return p
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// loadWorkloads reads the manifests and keeps what the simulation needs.
func loadWorkloads(s streams.Streams, f *flagpole, paths []string, rep *report.Report, target string) []plan.Workload {
	if len(paths) == 0 {
		return nil
	}
	// No profiles: placement then only says which workloads keep themselves off Fargate.
	engine := rules.NewEngine(&rules.Context{Namespace: f.namespace}, nil, rules.Options{})
	f.render.Namespace, f.render.KubeVersion = f.namespace, target
	loader := &manifest.Loader{MaxFileSize: f.maxFileSize, Stdin: s.In, Expand: f.render.Expand}
	loader.Load(paths, engine.Add, func(e manifest.Error) { rep.Errors = append(rep.Errors, e) })
	var out []plan.Workload
	for _, w := range engine.Result().Workloads {
		out = append(out, plan.Workload{Ref: w.Ref, Source: w.Source, Namespace: w.Namespace, Labels: w.Labels, OffFargate: w.Placement.Reason})
	}
	return out
}

// sequence writes the safe two-phase sequence as commands.
func sequence(ch *change, r plan.Result) []string {
	safe := r.Safe
	if len(safe.Create) == 0 && len(safe.Delete) == 0 {
		return nil
	}
	var out []string
	if len(safe.Create) > 0 {
		out = append(out, "# Phase 1: create the new profiles, and remove nothing yet")
		for _, name := range safe.Renamed {
			out = append(out, fmt.Sprintf("#   %s keeps its name: give the new version another name (e.g. %s-2), since EKS refuses two profiles of one name", name, name))
		}
		if ch.terraform {
			var targets []string
			for _, c := range safe.Create {
				if c.Before == nil {
					targets = append(targets, fmt.Sprintf("-target='%s'", c.Address))
				}
			}
			if len(targets) > 0 {
				out = append(out, "terraform apply "+strings.Join(targets, " "))
			}
			if len(targets) < len(safe.Create) {
				out = append(out, "#   a replacement cannot be split with -target: add its new version as a new resource (another key or name), apply it, and remove the old one in phase 2")
			}
		} else {
			out = append(out, fmt.Sprintf("eksctl create fargateprofile -f %s   # creates the profiles of the file that do not exist yet", ch.newConfig))
		}
		for _, c := range safe.Create {
			out = append(out, fmt.Sprintf("aws eks wait fargate-profile-active --cluster-name %s --fargate-profile-name %s", ch.cluster, c.After.Name))
		}
	}
	if len(safe.Delete) > 0 && len(safe.Create) == 0 {
		out = append(out, "# Nothing replaces the deleted profiles: the pods they placed leave Fargate for good (PL001, PL004)")
	} else if len(safe.Delete) > 0 {
		out = append(out, "# Phase 2: once every new profile is ACTIVE, remove the old ones")
	}
	if len(safe.Delete) > 0 {
		if ch.terraform {
			out = append(out, "terraform apply")
		} else {
			for _, c := range safe.Delete {
				out = append(out, fmt.Sprintf("eksctl delete fargateprofile --cluster %s --name %s --wait", ch.cluster, c.Before.Name))
			}
		}
	}
	if len(safe.Restart) > 0 {
		out = append(out, "# Then recreate the pods that run off Fargate although a profile matches them, so that EKS places them again")
		for _, w := range safe.Restart {
			out = append(out, plan.RestartCommand(w.Workload))
		}
	}
	return out
}
