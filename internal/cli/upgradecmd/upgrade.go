// Package upgradecmd implements `fargatekit upgrade`: the plan of an EKS
// cluster's upgrade, one minor version at a time, and the check of its next
// hop, read from the running cluster.
package upgradecmd

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/fargatekit/fargatekit/internal/cli/clusterflags"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/profiles"
	"github.com/fargatekit/fargatekit/internal/render"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// flagpole holds the flags of plan and check.
type flagpole struct {
	target       cluster.Target
	to           string
	from         string
	helm         bool
	settingsPath string
	output       string
	render       render.Options
	paths        []string
}

func (f *flagpole) add(cmd *cobra.Command, formats string) {
	fl := cmd.Flags()
	clusterflags.AddTarget(fl, &f.target)
	fl.BoolVar(&f.helm, "helm", true, "read Helm 3 release Secrets (label owner=helm) for removed APIs; --helm=false needs no access to Secrets")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: "+formats)
	fl.StringVar(&f.from, "from", "", "plan without reading a cluster, from a `VERSION|FILE`: the version and managed node groups of an eksctl ClusterConfig, of terraform show -json output (then with eksctl's or Terraform's steps) or of an emulator configuration")
	f.render.AddFlags(fl)
	settings.AddFlag(fl, &f.settingsPath)
}

// NewCommand returns the upgrade command.
func NewCommand(s streams.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Plan an EKS cluster's upgrade one minor version at a time, and check that the next step can go",
		Long: "EKS moves a control plane one minor version at a time, and refuses to while a managed node group is\n" +
			"on an older version; Fargate pods keep the kubelet they started with until they are recreated; a node\n" +
			"group update drains its nodes through the Eviction API and fails when pods do not leave; and each\n" +
			"version removes APIs. upgrade reads the running cluster (kubeconfig and EKS API, as scan does, never\n" +
			"writing) and lays out the path. See docs/upgrade.md.",
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newPlan(s), newCheck(s))
	return cmd
}

func newPlan(s streams.Streams) *cobra.Command {
	f := &flagpole{}
	cmd := &cobra.Command{
		Use:   "plan [--to VERSION] [PATH...]",
		Short: "Print the path to a later Kubernetes version: what blocks each hop, and its steps with their commands",
		Long: "plan prints, for each minor version on the way: the blockers (node groups and Fargate pods behind the\n" +
			"control plane, objects declared with API versions it removes, drains that will not finish because a\n" +
			"PodDisruptionBudget allows no disruption or a pod is stuck Terminating, EKS's upgrade insights in\n" +
			"ERROR) and the risks (pods without a controller, single replicas), then the steps in order with their\n" +
			"aws and kubectl commands, and the support dates and price of the current and target versions.\n" +
			"-o markdown writes it as a runbook for a change ticket; -o json is documented in docs/upgrade.md.\n\n" +
			"PATHs are manifests, Helm charts and kustomizations (as check reads them, rendered for the target\n" +
			"version) whose removed API versions count too, and whose workloads selecting other pods than the live\n" +
			"ones get the steps that change an immutable selector without downtime. With --from the cluster is\n" +
			"not read: --from VERSION plans for a cluster at VERSION whose node groups and Fargate pods are\n" +
			"unknown, from the files alone; --from FILE takes the version and managed node groups of an eksctl\n" +
			"ClusterConfig (and gives eksctl's commands), of the aws_eks_cluster and aws_eks_node_group resources\n" +
			"of `terraform show -json` output, a state or a saved plan (and gives the versions to set in the\n" +
			"configuration, then terraform apply; --cluster-name picks one of several clusters), or of an emulator\n" +
			"configuration.\n\n" +
			"Exit codes: 0 the plan was made; 2 the cluster, part of it or a PATH could not be read (the plan is\n" +
			"printed from what was read).",
		Example: "  # The cluster of the current kubeconfig context, to the next minor version\n" +
			"  fargatekit upgrade plan\n\n" +
			"  # Two versions on, as a runbook\n" +
			"  fargatekit upgrade plan --to 1.35 -o markdown > upgrade.md\n\n" +
			"  # The manifests and charts of a repository, without a cluster\n" +
			"  fargatekit upgrade plan --from 1.32 --to 1.34 deploy/ charts/web\n\n" +
			"  # A cluster managed with eksctl, from its ClusterConfig\n" +
			"  fargatekit upgrade plan --from cluster.yaml --to 1.35 -o markdown\n\n" +
			"  # A cluster managed with Terraform, from its state\n" +
			"  terraform show -json > state.json && fargatekit upgrade plan --from state.json",
		RunE: func(cmd *cobra.Command, args []string) error {
			f.paths = args
			p, errs, err := run(cmd.Context(), f)
			if err != nil {
				return err
			}
			if err := write(s, cmd.Root().Version, f.output, p, errs); err != nil {
				return err
			}
			if len(errs) > 0 {
				return &streams.ExitError{Code: streams.ExitInvalid}
			}
			return nil
		},
	}
	f.add(cmd, "text, json, markdown or html")
	cmd.Flags().StringVar(&f.to, "to", "", "the Kubernetes minor version to reach, such as 1.35 (default: the next one)")
	return cmd
}

func newCheck(s streams.Streams) *cobra.Command {
	f := &flagpole{}
	cmd := &cobra.Command{
		Use:   "check [PATH...]",
		Short: "Exit 1 when the next hop of the upgrade is blocked, for CI",
		Long: "check plans the next hop, to the minor version after the cluster's, and prints it. PATHs and --from\n" +
			"are read as upgrade plan reads them: a repository's pipeline can check its manifests, charts and\n" +
			"kustomizations against the next version without a cluster.\n\n" +
			"Exit codes: 0 the next hop can go; 1 it is blocked; 2 the cluster or a PATH could not be read, or\n" +
			"part of it.",
		Example: "  fargatekit upgrade check\n\n" +
			"  # In a pipeline\n" +
			"  fargatekit upgrade check -o json > next-hop.json\n\n" +
			"  # A repository's manifests, for a cluster managed with eksctl\n" +
			"  fargatekit upgrade check --from cluster.yaml deploy/",
		RunE: func(cmd *cobra.Command, args []string) error {
			f.paths = args
			p, errs, err := run(cmd.Context(), f)
			if err != nil {
				return err
			}
			if err := write(s, cmd.Root().Version, f.output, p, errs); err != nil {
				return err
			}
			switch {
			case len(errs) > 0:
				return &streams.ExitError{Code: streams.ExitInvalid}
			case p.Hops[0].Blocked():
				return &streams.ExitError{Code: streams.ExitFindings}
			}
			return nil
		},
	}
	f.add(cmd, "text, json, markdown or html")
	return cmd
}

// run reads the cluster (unless --from) and the PATHs, and makes the plan.
// errs are what could not be read (the plan is made from the rest); err
// means no plan.
func run(ctx context.Context, f *flagpole) (*upgrade.Plan, []error, error) {
	switch f.output {
	case "text", "json", "markdown", "html":
	default:
		return nil, nil, fmt.Errorf("--output %q: want text, json, markdown or html", f.output)
	}
	set, err := settings.Resolve(f.settingsPath)
	if err != nil {
		return nil, nil, err
	}
	var (
		facts *upgrade.Facts
		errs  []error
	)
	if f.from != "" {
		if facts, err = fromFlag(f.from, f.target.ClusterName); err != nil {
			return nil, nil, err
		}
	} else if facts, errs, err = Read(ctx, f.target, f.helm); err != nil {
		return nil, nil, err
	}
	facts.Policy, facts.Now = set.Upgrade, time.Now()
	to := f.to
	if to == "" {
		to = eks.NextMinor(facts.Version)
	}
	if len(f.paths) > 0 {
		f.render.Namespace, f.render.KubeVersion = "default", to
		facts.Apply = map[string]string{}
		loader := &manifest.Loader{Skip: set.Ignored, Expand: func(path string, info fs.FileInfo, root string) ([]manifest.Document, bool, error) {
			docs, handled, err := f.render.Expand(path, info, root)
			for _, d := range docs { // how the rendered objects are applied
				facts.Apply[d.File] = applyCommand(path, info)
			}
			return docs, handled, err
		}}
		loader.Load(f.paths, func(o *object.Object) { facts.Declared = append(facts.Declared, o) },
			func(e manifest.Error) { errs = append(errs, e) })
	}
	p, err := upgrade.Build(*facts, to)
	if err != nil {
		return nil, nil, fmt.Errorf("--to: %w", err)
	}
	return p, errs, nil
}

// fromFlag reads --from: a version, or a file that says the cluster's
// version and managed node groups (an eksctl ClusterConfig or `terraform
// show -json` output, whose tool the plan's steps then use, or an emulator
// configuration).
func fromFlag(from, cluster string) (*upgrade.Facts, error) {
	if v, err := eks.ParseMinor(from); err == nil {
		return &upgrade.Facts{Cluster: cmp.Or(cluster, "CLUSTER"), Version: v}, nil
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return nil, fmt.Errorf("--from %s: neither a Kubernetes version such as 1.33 nor a file: %w", from, err)
	}
	set, err := profiles.Parse(from, data)
	switch {
	case set.Format == profiles.FormatTerraform:
		return fromTerraform(from, data, cluster)
	case err != nil && set.Version == "":
		return nil, fmt.Errorf("--from %s: %w", from, err)
	case set.Format != profiles.FormatEksctl && set.Format != profiles.FormatEmulator:
		return nil, fmt.Errorf("--from %s: %s does not say the cluster's version; give a version, an eksctl ClusterConfig, `terraform show -json` output or an emulator configuration", from, set.Format)
	}
	v, err := eks.ParseMinor(set.Version)
	if err != nil {
		return nil, fmt.Errorf("--from %s: metadata.version: %w", from, err)
	}
	facts := &upgrade.Facts{Cluster: cmp.Or(cluster, set.Cluster, "CLUSTER"), Version: v}
	if set.Format == profiles.FormatEksctl {
		facts.Eksctl = from
	}
	for _, ng := range set.Managed {
		if err := addNodeGroup(facts, ng.Name, ng.Version, ng.ReleaseVersion); err != nil {
			return nil, fmt.Errorf("--from %s: %w", from, err)
		}
	}
	return facts, nil
}

// fromTerraform reads the aws_eks_cluster (named cluster, or the only one)
// and its aws_eks_node_groups of `terraform show -json` output: as they are
// now for a plan.
func fromTerraform(from string, data []byte, cluster string) (*upgrade.Facts, error) {
	tf, err := profiles.ParseTerraform(from, data)
	if err != nil {
		return nil, fmt.Errorf("--from %w", err)
	}
	c, err := tf.EKSCluster(cluster)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w (--cluster-name)", from, err)
	}
	v, err := eks.ParseMinor(c.Version)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %s: version: %w", from, c.Address, err)
	}
	facts := &upgrade.Facts{Cluster: cmp.Or(c.Name, "CLUSTER"), Version: v,
		Terraform: &upgrade.Terraform{Cluster: c.Address, NodeGroups: map[string]string{}}}
	for _, ng := range tf.NodeGroups {
		if !ng.Before || (ng.Cluster != c.Name && ng.Cluster != "") || ng.Deposed() {
			continue // created by the plan, another cluster's, or on its way out
		}
		name := cmp.Or(ng.Name, ng.Address)
		facts.Terraform.NodeGroups[name] = ng.Address
		if err := addNodeGroup(facts, name, cmp.Or(ng.Version, v), ng.ReleaseVersion); err != nil {
			return nil, fmt.Errorf("--from %s: %s: %w", from, ng.Address, err)
		}
	}
	return facts, nil
}

// addNodeGroup adds a managed node group at a version as a source says it.
func addNodeGroup(f *upgrade.Facts, name, version, release string) error {
	v, err := eks.ParseMinor(version)
	if err != nil {
		return fmt.Errorf("node group %s: %w", name, err)
	}
	f.NodeGroups = append(f.NodeGroups, upgrade.NodeGroup{Name: name, Version: v, ReleaseVersion: release})
	return nil
}

// applyCommand is how the objects rendered from a path Expand handled are
// applied: a kustomization with kubectl apply -k, a chart with helm upgrade
// of the release that installed it.
func applyCommand(path string, info fs.FileInfo) string {
	if info.IsDir() && !render.IsChart(path) {
		return "kubectl apply -k " + path
	}
	return "helm upgrade RELEASE " + path + "  # RELEASE: the release that installed it, with its values"
}

// Read reads what a plan needs: the control plane's version, the node
// groups and the upgrade insights from the EKS API; the nodes, pods,
// workloads, PodDisruptionBudgets and declared objects from the Kubernetes
// API. errs are what could not be read; err means the cluster could not be read at all, or not its EKS API,
// without which there is no plan.
func Read(ctx context.Context, t cluster.Target, helm bool) (facts *upgrade.Facts, errs []error, err error) {
	conn, err := cluster.Connect(ctx, t)
	if err != nil {
		return nil, nil, err
	}
	if conn.EKS == nil {
		return nil, nil, fmt.Errorf("an upgrade plan needs the EKS API: %s", conn.EKSError)
	}
	e := conn.EKS
	d, err := e.Describe(ctx)
	if err != nil {
		return nil, nil, err
	}
	if !cluster.SameEndpoint(d.Endpoint, conn.Kube.Config.Host) {
		return nil, nil, fmt.Errorf("EKS cluster %q in %s serves %s, not the API server of context %q (%s): give the --cluster-name and --region of this cluster",
			e.Cluster, e.Region, d.Endpoint, conn.Kube.Context, conn.Kube.Config.Host)
	}
	ngs, err := e.NodeGroups(ctx)
	if err != nil {
		return nil, nil, err
	}
	read := cluster.ReadKube(ctx, conn.Client, conn.Dynamic, cluster.ReadOptions{Helm: helm})
	facts = &upgrade.Facts{Cluster: e.Cluster, Version: d.Version, NodeGroups: ngs, Snapshot: &read.Snapshot}
	errs = read.Errors
	if facts.Insights, err = e.Insights(ctx); err != nil {
		errs = append(errs, err) // the plan is made without them
	}
	for _, o := range read.Objects {
		if pdb, ok := o.Typed.(*policyv1.PodDisruptionBudget); ok {
			facts.PDBs = append(facts.PDBs, pdb)
		}
	}
	for _, dcl := range read.Declared {
		facts.Declared = append(facts.Declared, declared(dcl))
	}
	return facts, errs, nil
}

// declared names a last-applied configuration by its live object.
func declared(d cluster.Declared) *object.Object {
	if d.Live == (object.Ref{}) {
		return d.Object
	}
	o := *d.Object
	o.Ref.Namespace, o.Ref.Name = d.Live.Namespace, d.Live.Name
	return &o
}
