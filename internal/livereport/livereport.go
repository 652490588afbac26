// Package livereport turns what was read of a running cluster into scan's
// report: pkg/live's analysis of the incidents, and check's rules on the
// live objects. scan runs it once; watch each time the cluster changes.
package livereport

import (
	"cmp"
	"fmt"
	"log/slog"
	"time"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Options are the settings of an analysis.
type Options struct {
	// Target is the minor version upgrades aim at ("1.36"); "" is the one
	// after the cluster's.
	Target string
	// StuckAfter and SubnetHeadroom are pkg/live's.
	StuckAfter     time.Duration
	SubnetHeadroom int
	Settings       *settings.Settings
}

// Build analyses a read of the cluster whose header is c (c.Analysis is
// set); Target must be a valid minor version or "".
func Build(snap *live.Snapshot, read *cluster.Read, c *report.Cluster, o Options) (*report.Report, error) {
	target := o.Target
	if target != "" {
		var err error
		if target, err = eks.ParseMinor(target); err != nil {
			return nil, fmt.Errorf("--target-version: %w", err)
		}
	} else {
		target = eks.NextMinor(snap.Cluster.Version)
	}
	region := cmp.Or(snap.Cluster.Region, fargate.DefaultRegion) // unknown without EKS: the default's prices
	price, err := fargate.PriceIn(region)
	if err != nil {
		slog.Warn("no Fargate prices for the cluster's region: costs are those of "+fargate.DefaultRegion, "region", region)
		price, _ = fargate.PriceIn(fargate.DefaultRegion)
		region = fargate.DefaultRegion
	}
	set := o.Settings
	rep := &report.Report{Target: target, Region: region, Rules: set.Rules(), Cluster: c}
	for _, e := range read.Errors {
		rep.Errors = append(rep.Errors, manifest.Error{Message: e.Error()})
	}
	c.Analysis = live.Analyze(snap, live.Options{StuckAfter: o.StuckAfter, Price: price, SubnetHeadroom: o.SubnetHeadroom, Settings: o.Settings.Fargate})
	rctx := &rules.Context{Namespace: "default", TargetVersion: target, Region: region, Price: price, Settings: set.Fargate,
		Profiles: snap.ActiveProfiles(), Foundation: snap.Foundation}
	if snap.Profiles == nil {
		rctx.Place = observed(c.Analysis.Workloads)
	}
	engine := rules.NewEngine(rctx, rep.Rules, set.Options())
	for _, w := range c.Analysis.Workloads {
		engine.Add(w.Workload.Object)
	}
	for _, o := range read.Objects {
		engine.Add(o)
	}
	res := engine.Result()
	rep.Findings, rep.Workloads = res.Findings, res.Workloads
	rep.Findings = append(rep.Findings, declared(rctx, set, read.Declared)...)
	rep.Findings = append(rep.Findings, set.Apply(c.Analysis.Findings)...)
	return rep, nil
}

// observed places a workload where its pods run, for a scan without the
// profiles: on Fargate when one of its pods was sent there.
func observed(states []live.WorkloadState) func(*object.Object, string) fargate.Placement {
	where := map[*object.Object]fargate.Placement{}
	for _, st := range states {
		w := st.Workload
		pl := fargate.Placement{Reason: "its pods do not run on Fargate (profiles not read)"}
		for _, p := range w.Pods {
			if p.Spec.SchedulerName == fargate.SchedulerName {
				pl = fargate.Placement{Fargate: true, Profile: p.Labels[fargate.ProfileLabel]}
				break
			}
		}
		where[w.Object] = pl
	}
	return func(obj *object.Object, ns string) fargate.Placement {
		if pl, ok := where[obj]; ok {
			return pl
		}
		return fargate.Placement{Reason: "no pods"}
	}
}

// declared runs the removed-API rules on the objects as written. A finding
// about a last-applied-configuration is about the live object.
func declared(rctx *rules.Context, set *settings.Settings, ds []cluster.Declared) []rules.Finding {
	var deprecation []*rules.Rule
	for _, r := range set.Rules() {
		if r.Category == rules.CategoryDeprecation {
			deprecation = append(deprecation, r)
		}
	}
	var out []rules.Finding
	for _, d := range ds {
		e := rules.NewEngine(rctx, deprecation, set.Options())
		e.Add(d.Object)
		for _, f := range e.Result().Findings {
			if d.Live.Kind != "" {
				f.Object, f.Source = d.Live, object.Source{}
				f.Path = object.Key("metadata.annotations", cluster.LastAppliedAnnotation)
				f.Message = "its last-applied-configuration uses " + f.Message
			}
			out = append(out, f)
		}
	}
	return out
}
