package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/plan"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// The page's template, style and script, inlined into every report so that
// the file needs no network.
var (
	//go:embed html/report.html.tmpl
	htmlTemplate string
	//go:embed html/report.css
	htmlCSS string
	//go:embed html/report.js
	htmlJS string
)

var pageTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"usd":     func(v float64) string { return fmt.Sprintf("$%.2f", v) },
	"percent": func(v float64) string { return fmt.Sprintf("%.0f%%", v*100) },
	"lower":   func(s fmt.Stringer) string { return strings.ToLower(s.String()) },
	"rule":    RuleURL,
	"plural":  plural,
	"add":     func(a, b int) int { return a + b },
}).Parse(htmlTemplate))

// maxChartBars caps the cost chart; the workloads table lists them all.
const maxChartBars = 25

// page is what the HTML template shows.
type page struct {
	Title   string
	About   string
	CSS     template.CSS
	JS      template.JS
	Summary Summary
	Cost    *chart
	// Workloads are the rows of the workloads table.
	Workloads []htmlWorkload
	// Objects are the findings grouped per object.
	Objects []htmlObject
	Errors  []string
	Plan    *htmlPlan
	Cluster *htmlCluster
	Upgrade *htmlUpgrade
}

// htmlWorkload is one row of the workloads table; the Sort fields are the
// values its columns sort by.
type htmlWorkload struct {
	Name, Location, RunsOn, Profile, Requested, Size, Replicas, Price string
	Fargate                                                           bool
	SortCost, Unrequested                                             float64
	Blockers, Warnings, Infos                                         int
	// SortFindings orders by the worst severity, then by count; SortSize by
	// vCPU, then memory.
	SortFindings, SortSize int64
	// Anchor is the id of the workload's findings, "" when it has none.
	Anchor string
}

type azCount struct {
	AZ    string
	Pods  int
	Y     int
	Width float64 // of the bar, in the chart's units
}

type htmlObject struct {
	Name, Location, Placement, Anchor string
	Findings                          []htmlFinding
}

type htmlFinding struct {
	Severity rules.Severity
	Rule     *rules.Rule
	Line     int
	Message  string
}

// chart is a horizontal bar chart of costs: each bar is a workload's
// monthly cost, split into what its requests need and what Fargate's
// rounding adds. Coordinates are in the SVG's units.
type chart struct {
	Bars   []bar
	Height int
	// Max is the largest cost, the full width of a bar.
	Max float64
	// More counts the workloads left out of the chart.
	More int
	// Total and Waste add up every workload's cost and its unrequested part.
	Total, Waste float64
	// Billed is true for the sizes Fargate bills a scanned cluster's pods
	// at (CapacityProvisioned), false for the sizes estimated from manifests.
	Billed bool
}

type bar struct {
	Label, Full                string
	Y                          int
	Cost, Requested, Waste     float64 // dollars a month
	RequestedWidth, WasteWidth float64
}

// Chart geometry, in SVG units: the bars' full width and a row's height.
// The template puts the labels' column left of x=250 and the values at 640.
const (
	chartBars = 380
	chartRow  = 24
)

// costChart draws the costs, largest first: requested is what the requests
// need at Fargate's prices, waste what rounding up to a size adds.
func costChart(costs []bar) *chart {
	c := &chart{}
	for _, b := range costs {
		c.Total += b.Requested + b.Waste
		c.Waste += b.Waste
	}
	costs = slices.DeleteFunc(costs, func(b bar) bool { return b.Requested+b.Waste <= 0 })
	if len(costs) == 0 {
		return nil
	}
	slices.SortStableFunc(costs, func(a, b bar) int { return cmp.Compare(b.Requested+b.Waste, a.Requested+a.Waste) })
	if len(costs) > maxChartBars {
		c.More, costs = len(costs)-maxChartBars, costs[:maxChartBars]
	}
	c.Max = costs[0].Requested + costs[0].Waste
	for i, b := range costs {
		b.Y, b.Cost = i*chartRow, b.Requested+b.Waste
		b.RequestedWidth = b.Requested / c.Max * chartBars
		b.WasteWidth = b.Waste / c.Max * chartBars
		b.Label = shorten(b.Full, 36)
		c.Bars = append(c.Bars, b)
	}
	c.Height = len(c.Bars) * chartRow
	return c
}

// shorten cuts s to n characters, ending with an ellipsis.
func shorten(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// writeHTML writes the report as one self-contained HTML page: a summary
// band, a chart of the monthly cost per workload, the workloads in a table
// that sorts and filters, the findings per object, and what plan and scan
// add (the profile operations and each workload's placement through them;
// the pods per AZ).
func writeHTML(w io.Writer, r *Report, _ Options) error {
	summary, blocked := r.summarize()
	p := page{Title: "fargatekit check", Summary: summary, About: r.about()}

	row := map[objectKey]int{} // index into p.Workloads
	var costs []bar
	for wl := range r.Workloads.Sorted() {
		st := r.Cluster.state(wl.Ref)
		key := objectKey{wl.Ref, wl.Source.File}
		d := describe(wl, blocked[key], st)
		hw := htmlWorkload{
			Name: wl.Ref.String(), Location: location(wl.Source), RunsOn: d.runsOn, Profile: d.profile, Size: d.size,
			Replicas: d.replicas, Price: d.price, Fargate: wl.Placement.Fargate,
		}
		if d.size != "-" {
			hw.SortSize = wl.Sizing.Provisioned.MilliCPU*1_000_000 + wl.Sizing.Provisioned.MemoryMiB
		}
		if wl.Placement.Fargate && wl.Sizing.Fits && !wl.Sizing.NothingRequested {
			hw.Requested = wl.Sizing.Requested()
		}
		cost := bar{Full: wl.Ref.String()}
		switch {
		case st != nil:
			hw.SortCost = cents(st.BilledMonthlyUSD)
			cost.Requested = min(st.RequestedMonthlyUSD, st.BilledMonthlyUSD)
			cost.Waste = st.BilledMonthlyUSD - cost.Requested
			if st.BilledMonthlyUSD > 0 {
				hw.Unrequested = cost.Waste / st.BilledMonthlyUSD
			}
		case wl.Runs() && !blocked[key]:
			hw.SortCost, hw.Unrequested = monthly(wl), wl.Unrequested
			cost.Requested, cost.Waste = hw.SortCost*(1-wl.Unrequested), hw.SortCost*wl.Unrequested
		}
		costs = append(costs, cost)
		row[key] = len(p.Workloads)
		p.Workloads = append(p.Workloads, hw)
	}
	if p.Cost = costChart(costs); p.Cost != nil {
		p.Cost.Billed = r.Cluster != nil
	}

	for _, e := range entries(r, false) {
		o := htmlObject{Name: e.ref.String(), Location: location(e.source), Anchor: fmt.Sprintf("o-%d", len(p.Objects)+1)}
		if e.workload != nil {
			o.Placement = "not on Fargate: " + e.workload.Placement.Reason
			if e.workload.Placement.Fargate {
				o.Placement = "Fargate: profile " + cmp.Or(e.workload.Placement.Profile, "(no profiles given)")
			}
		}
		i, ok := row[objectKey{e.ref, e.source.File}]
		if ok {
			p.Workloads[i].Anchor = o.Anchor
		}
		for _, f := range e.findings {
			o.Findings = append(o.Findings, htmlFinding{Severity: f.Severity, Rule: f.Rule, Line: f.Source.Line, Message: f.Message})
			if !ok {
				continue
			}
			hw := &p.Workloads[i]
			switch f.Severity {
			case rules.Blocker:
				hw.Blockers++
			case rules.Warning:
				hw.Warnings++
			case rules.Info:
				hw.Infos++
			}
		}
		p.Objects = append(p.Objects, o)
	}
	for i := range p.Workloads {
		w := &p.Workloads[i]
		w.SortFindings = int64(w.Blockers)*1_000_000 + int64(w.Warnings)*1_000 + int64(w.Infos)
	}
	for _, e := range r.Errors {
		p.Errors = append(p.Errors, e.Error())
	}
	if r.Plan != nil {
		p.Title, p.Plan = "fargatekit plan", planTimeline(r.Plan)
	}
	if r.Cluster != nil {
		p.Title, p.Cluster = "fargatekit scan", clusterView(r.Cluster, r.findings())
	}

	return writePage(w, p)
}

// writePage renders a page with the style and script inlined.
func writePage(w io.Writer, p page) error {
	p.CSS, p.JS = template.CSS(htmlCSS), template.JS(htmlJS)
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	return nil
}

// htmlPlan is what plan adds: the timeline of the change in the worst order,
// the timeline of the safe sequence, and the safe sequence's commands.
type htmlPlan struct {
	Source, Duration, SafeDuration string
	Worst, Safe                    *timeline
	Sequence                       string
}

// timeline draws profile operations and, under them, one lane per
// workload, each segment where its pods are from one moment to the next.
type timeline struct {
	ID     string
	Steps  []planStep
	Lanes  []lane
	Height int
	Ticks  []tick
}

type planStep struct {
	N             int
	Kind, Profile string
	Start, End    string
	X, Width, Y   float64
}

type lane struct {
	Name     string
	Y        float64
	Segments []segment
	Restart  string
}

type segment struct {
	Where, Text string
	X, Width    float64
}

type tick struct {
	X      float64
	Label  string
	Anchor string // the label's text-anchor
	Line   bool
}

// Timeline geometry: the labels' column, the column of where the pods are
// before the change, the time axis, a row.
const (
	timelineLabel  = 230
	timelineBefore = 50
	timelineAxis   = 430
	timelineRow    = 22
)

func planTimeline(p *Plan) *htmlPlan {
	r := p.Result
	worst := func(w plan.WorkloadPlan) []plan.TimedPlacement {
		var out []plan.TimedPlacement
		for i, at := range w.StoppedAt {
			out = append(out, plan.TimedPlacement{At: at, Placement: w.Moves[i]})
		}
		return out
	}
	safe := func(w plan.WorkloadPlan) []plan.TimedPlacement { return w.Safe }
	out := &htmlPlan{Source: p.Source, Duration: plan.FormatDuration(r.Duration), SafeDuration: plan.FormatDuration(r.Safe.Duration),
		Sequence: strings.Join(p.Sequence, "\n"), Worst: drawTimeline("worst", r.Steps, r.Duration, r.Workloads, worst)}
	if len(r.Safe.Steps) > 0 {
		out.Safe = drawTimeline("safe", r.Safe.Steps, r.Safe.Duration, r.Workloads, safe)
	}
	return out
}

// drawTimeline lays out steps lasting total in all, and a lane per
// workload from where its pods are before the change through the moves
// that moves gives.
func drawTimeline(id string, steps []plan.Step, total time.Duration, workloads []plan.WorkloadPlan, moves func(plan.WorkloadPlan) []plan.TimedPlacement) *timeline {
	out := &timeline{ID: id}
	span := max(total.Seconds(), 1)
	x := func(s float64) float64 { return timelineLabel + timelineBefore + s/span*timelineAxis }
	y := 20.0
	for i, s := range steps {
		out.Steps = append(out.Steps, planStep{N: i + 1, Kind: string(s.Kind), Profile: s.Profile,
			Start: plan.FormatDuration(s.Start), End: plan.FormatDuration(s.End),
			X: x(s.Start.Seconds()), Width: max((s.End-s.Start).Seconds()/span*timelineAxis, 2), Y: y})
		y += timelineRow
	}
	y += timelineRow / 2
	for _, w := range workloads {
		l := lane{Name: shorten(w.Ref.String(), 32), Y: y}
		l.Segments = append(l.Segments, segment{Where: string(w.Before.Where), Text: "before the change: " + w.Before.String(), X: timelineLabel, Width: timelineBefore - 4})
		where, from := w.Before, 0.0
		for _, m := range moves(w) {
			if at := m.At.Seconds(); at > from {
				l.Segments = append(l.Segments, segment{Where: string(where.Where), Text: where.String(), X: x(from), Width: x(at) - x(from)})
				from = at
			}
			where = m.Placement
		}
		l.Segments = append(l.Segments, segment{Where: string(where.Where), Text: where.String(), X: x(from), Width: x(span) - x(from)})
		if id == "worst" && w.RestartNeeded {
			l.Restart = "stays off Fargate until restarted (profile " + w.Matched + " matches)"
		}
		out.Lanes = append(out.Lanes, l)
		y += timelineRow
	}
	out.Height = int(y) + 10
	out.Ticks = append(out.Ticks, tick{X: timelineLabel + timelineBefore/2 - 2, Label: "before", Anchor: "middle"})
	for i := 0; i <= 4; i++ {
		s := span * float64(i) / 4
		t := tick{X: x(s), Label: "+" + plan.FormatDuration(time.Duration(s*float64(time.Second))), Anchor: "middle", Line: true}
		switch i {
		case 0:
			t.Anchor = "start"
		case 4:
			t.Anchor = "end"
		}
		out.Ticks = append(out.Ticks, t)
	}
	return out
}

// htmlCluster is what scan adds: the cluster, its nodes and its Fargate
// pods per AZ, whose largest count is the full width of a bar.
type htmlCluster struct {
	Name, Version, Region, Profiles string
	FargateNodes, EC2Nodes          int
	AZ                              []azCount
	AZHeight                        int
	// Nodes are the nodes of each AZ, Fargate and EC2, stacked.
	Nodes       []azNodes
	NodesHeight int
	// Spread are the workloads with Fargate pods, each with its pods per AZ;
	// Skewed when LV005 az-skew found them piled up.
	Spread []spreadRow
}

type azNodes struct {
	AZ                     string
	Fargate, EC2, Y        int
	FargateWidth, EC2Width float64
}

type spreadRow struct {
	Name   string
	AZ     []azCount
	Skewed bool
}

// azBar is the full width of a pods-per-AZ bar.
const azBar = 160.0

func clusterView(c *Cluster, findings iter.Seq[rules.Finding]) *htmlCluster {
	out := &htmlCluster{Name: c.Name, Version: c.Version, Region: c.Region, Profiles: "not read: " + c.ProfilesError}
	if c.Profiles != nil {
		var names []string
		for _, pr := range c.Profiles {
			names = append(names, pr.Name+" ("+pr.Status+")")
		}
		out.Profiles = cmp.Or(strings.Join(names, ", "), "none")
	}
	a := c.Analysis
	if a == nil {
		return out
	}
	out.FargateNodes, out.EC2Nodes = a.FargateNodes, a.EC2Nodes
	zones := slices.Sorted(maps.Keys(a.PodsPerAZ))
	out.AZ = perAZ(zones, a.PodsPerAZ)
	for i := range out.AZ {
		out.AZ[i].Y = i * chartRow
	}
	out.AZHeight = len(out.AZ) * chartRow
	most := 0
	for _, n := range a.NodesPerAZ {
		most = max(most, n.Fargate+n.EC2)
	}
	for i, az := range slices.Sorted(maps.Keys(a.NodesPerAZ)) {
		n := a.NodesPerAZ[az]
		out.Nodes = append(out.Nodes, azNodes{AZ: cmp.Or(az, "(no zone)"), Fargate: n.Fargate, EC2: n.EC2, Y: i * chartRow,
			FargateWidth: float64(n.Fargate) / float64(most) * azBar, EC2Width: float64(n.EC2) / float64(most) * azBar})
	}
	out.NodesHeight = len(out.Nodes) * chartRow
	skewed := map[object.Ref]bool{}
	for f := range findings {
		if f.Rule == live.AZSkew {
			skewed[f.Object] = true
		}
	}
	for _, st := range a.Workloads {
		if st.Fargate == 0 {
			continue
		}
		ref := st.Workload.Object.Ref
		out.Spread = append(out.Spread, spreadRow{Name: ref.String(), AZ: perAZ(zones, st.PodsPerAZ), Skewed: skewed[ref]})
	}
	return out
}

// perAZ counts pods in every zone of zones, a bar's width scaled to the
// largest count.
func perAZ(zones []string, pods map[string]int) []azCount {
	most := 0
	for _, z := range zones {
		most = max(most, pods[z])
	}
	out := make([]azCount, 0, len(zones))
	for _, z := range zones {
		c := azCount{AZ: z, Pods: pods[z]}
		if most > 0 {
			c.Width = float64(c.Pods) / float64(most) * azBar
		}
		out = append(out, c)
	}
	return out
}
