// Package checkcmd implements `fargatekit check`: static analysis of manifests
// for EKS on Fargate.
package checkcmd

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
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
	"github.com/fargatekit/fargatekit/internal/spool"
	"github.com/fargatekit/fargatekit/pkg/deprecation"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

type flagpole struct {
	report        reportflags.Flags
	profileFiles  []string
	inline        []string
	namespace     string
	targetVersion string
	region        string
	settingsPath  string
	maxFileSize   int64
	skipOther     bool
	render        render.Options
}

// NewCommand returns the check command.
func NewCommand(s streams.Streams) *cobra.Command {
	f := &flagpole{}
	cmd := &cobra.Command{
		Use:   "check [flags] PATH...",
		Short: "Check manifests for Fargate readiness, size, cost and removed APIs",
		Long: "check reads Kubernetes manifests (files; directories searched for .yaml, .yml and .json; Helm charts,\n" +
			"rendered as `helm template` does; Kustomize directories, built as `kustomize build` does; or - for\n" +
			"standard input), decides which workloads Fargate profiles place on Fargate, and reports what\n" +
			"fargate-scheduler would refuse, what Fargate ignores, what each workload costs there, and which\n" +
			"API versions the target Kubernetes version no longer serves.\n\n" +
			"Without profiles, every workload is assessed as a Fargate candidate.\n\n" +
			"Exit codes: 0 no finding at or above --fail-on; 1 findings at or above it; 2 usage or input errors\n" +
			"(the other files are still checked).",
		Example: "  # Check a directory, every workload treated as a Fargate candidate\n" +
			"  fargatekit check deploy/\n\n" +
			"  # Use the profiles of an eksctl ClusterConfig, or of `aws eks describe-fargate-profile`\n" +
			"  fargatekit check --profiles cluster.yaml deploy/\n\n" +
			"  # An inline profile: namespaces prod-*, pods labelled app=web\n" +
			"  fargatekit check --fargate-profile 'name=web,namespace=prod-*,labels=app=web' deploy/\n\n" +
			"  # Rendered Helm output from standard input, SARIF for GitHub code scanning\n" +
			"  helm template my-chart | fargatekit check -o sarif - > fargatekit.sarif\n\n" +
			"  # A page to open in a browser: costs as a chart, workloads in a table that sorts\n" +
			"  fargatekit check -o html deploy/ > report.html\n\n" +
			"  # A Helm chart rendered with values and --set, and a Kustomize overlay\n" +
			"  fargatekit check charts/shop -f values-prod.yaml --set replicas=3\n" +
			"  fargatekit check deploy/overlays/prod",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("no input: give files, directories, or - for standard input (see fargatekit check --help)")
			}
			return run(cmd, s, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.profileFiles, "profiles", nil, "a `FILE` of Fargate profiles: an eksctl ClusterConfig, the JSON of aws eks describe-fargate-profile, "+
		"terraform show -json of a plan or state, a CloudFormation template, or an emulator configuration (repeatable)")
	fl.StringArrayVar(&f.inline, "fargate-profile", nil, "an inline Fargate profile: name=N,namespace=NS[,labels=K=V[,K=V]][,namespace=NS2...] (repeatable)")
	fl.StringVarP(&f.namespace, "namespace", "n", "default", "namespace of objects that name none")
	fl.StringVar(&f.targetVersion, "target-version", "", "Kubernetes minor version to check API versions against (default: newest EKS version in standard support today)")
	fl.StringVar(&f.region, "region", fargate.DefaultRegion, "AWS region for prices ("+strings.Join(fargate.Regions(), ", ")+")")
	f.report.Add(fl)
	settings.AddFlag(fl, &f.settingsPath)
	fl.StringVar(&f.settingsPath, "config", "", "")
	_ = fl.MarkDeprecated("config", "use --settings") // its name before the emulator's --config took it
	fl.Int64Var(&f.maxFileSize, "max-file-size", manifest.DefaultMaxFileSize, "largest file read, and most a chart or kustomization renders, in bytes")
	fl.BoolVar(&f.skipOther, "skip-non-manifests", false, "skip files that hold no Kubernetes object (CI configurations, Helm values) instead of reporting them as errors; the pre-commit hook sets it")
	f.render.AddFlags(fl)
	return cmd
}

func run(cmd *cobra.Command, s streams.Streams, f *flagpole, paths []string) error {
	out, err := f.report.Resolve(s.Out)
	if err != nil {
		return err
	}
	target := eks.DefaultTarget(time.Now())
	if f.targetVersion != "" {
		if target, err = eks.ParseMinor(f.targetVersion); err != nil {
			return fmt.Errorf("--target-version: %w", err)
		}
		if _, known := eks.Lookup(target); !known {
			slog.Warn("the target version is not in fargatekit's EKS calendar: API removals after its data are not known",
				"target", target, "calendar", eks.Versions()[0].Minor+"–"+eks.Versions()[len(eks.Versions())-1].Minor,
				"removals-known-through", deprecation.NewestRemoval())
		}
	}
	price, err := fargate.PriceIn(f.region)
	if err != nil {
		return fmt.Errorf("--region: %w", err)
	}
	set, err := settings.Resolve(f.settingsPath)
	if err != nil {
		return err
	}

	rep := &report.Report{Target: target, Region: f.region, Version: cmd.Root().Version, Rules: set.Rules()}
	ctx := &rules.Context{Namespace: f.namespace, TargetVersion: target, Region: f.region, Price: price, Settings: set.Fargate}
	ctx.Profiles, ctx.PodIdentity, ctx.Foundation, rep.Errors = loadProfiles(f)
	slog.Debug("check starts", "target", target, "region", f.region, "rules", len(rep.Rules),
		"profiles", len(ctx.Profiles), "profilesGiven", ctx.Profiles != nil, "settings", set.Path)

	progress := newProgress(s.ErrOut)
	loader := &manifest.Loader{MaxFileSize: f.maxFileSize, SkipNonManifests: f.skipOther, Stdin: s.In, Skip: set.Ignored, OnFile: progress.file}
	f.render.Namespace, f.render.KubeVersion, f.render.MaxOutput = f.namespace, target, f.maxFileSize
	loader.Expand = f.render.Expand
	disk := newDisk(rep.Rules)
	res, errs := analyze(ctx, rep.Rules, set.Options(), loader, paths, progress.object, disk)
	defer func() {
		if err := disk.Close(); err != nil {
			slog.Warn("a temporary file was left", "error", err)
		}
	}()
	found := disk.findings
	progress.done()
	rep.Spilled, rep.Workloads, rep.Errors = found.All(), res.Workloads, append(rep.Errors, errs...)
	slog.Debug("check done", "files", progress.files, "objects", progress.objects,
		"workloads", res.Workloads.Len(), "findings", found.Len(), "errors", len(rep.Errors))
	if err := out.Write(s.Out, rep, out.Options); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	if err := errors.Join(found.Err(), res.Workloads.Err()); err != nil {
		return err
	}
	return streams.ExitFor(len(rep.Errors) > 0, found.Worst(), out.FailOn)
}

// analyze reads every path and runs the rules on what it finds: the whole
// check between the flags and the report. onObject is called per object
// read. The findings go to a spool, which writes them to disk when they are
// more than memory should hold, and the workload summaries to disk a
// buffer at a time (d): memory stays flat.
func analyze(ctx *rules.Context, rs []*rules.Rule, opts rules.Options, loader *manifest.Loader, paths []string, onObject func(), d *disk) (*rules.Result, []manifest.Error) {
	opts.Found, opts.Spill = d.findings.Add, &d.workloads
	engine := rules.NewEngine(ctx, rs, opts)
	loader.Prepare = engine.Prepare
	var errs []manifest.Error
	loader.Load(paths, func(o *object.Object) {
		onObject()
		engine.Add(o)
	}, func(e manifest.Error) { errs = append(errs, e) })
	return engine.Result(), errs
}

// disk is what a check keeps in temporary files; Close removes them.
type disk struct {
	findings  *spool.Findings
	workloads spool.Blocks
}

func newDisk(rs []*rules.Rule) *disk { return &disk{findings: spool.New(rs)} }

func (d *disk) Close() error { return errors.Join(d.findings.Close(), d.workloads.Close()) }

// loadProfiles reads every profile source; a bad one becomes an input error
// and the others still count. nil profiles means none were given; a nil
// foundation, that no source describes the infrastructure.
func loadProfiles(f *flagpole) ([]fargate.Profile, []rules.PodIdentityAssociation, *foundation.Foundation, []manifest.Error) {
	var (
		list     []fargate.Profile
		identity []rules.PodIdentityAssociation
		found    *foundation.Foundation
		errs     []manifest.Error
	)
	for _, path := range f.profileFiles {
		set, err := profiles.ReadFile(path)
		if err != nil {
			errs = append(errs, manifest.Error{File: path, Message: err.Error()})
		}
		list = append(list, set.Profiles...)
		identity = append(identity, set.PodIdentity...)
		if set.Foundation != nil {
			if found == nil {
				found = &foundation.Foundation{}
			}
			found.Add(set.Foundation)
		}
	}
	for _, spec := range f.inline {
		p, err := profiles.ParseInline(spec)
		if err != nil {
			errs = append(errs, manifest.Error{File: "--fargate-profile", Message: err.Error()})
			continue
		}
		list = append(list, p)
	}
	if list == nil && (len(f.profileFiles) > 0 || len(f.inline) > 0) {
		list = []fargate.Profile{} // profiles were given but none is usable: nothing is on Fargate
	}
	return list, identity, found, errs
}

// progress reports on a terminal how far a long scan got.
type progress struct {
	w              *os.File
	files, objects int
	last           time.Time
	shown          bool
}

func newProgress(w any) *progress {
	f, ok := w.(*os.File)
	if !ok || !streams.IsTerminal(f) {
		return &progress{}
	}
	return &progress{w: f, last: time.Now()}
}

func (p *progress) file(string) { p.files++; p.tick() }
func (p *progress) object()     { p.objects++ }

func (p *progress) tick() {
	if p.w == nil || time.Since(p.last) < 500*time.Millisecond {
		return
	}
	p.last, p.shown = time.Now(), true
	fmt.Fprintf(p.w, "\rread %d files, %d objects…", p.files, p.objects)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
