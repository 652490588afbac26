package report

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Report is what a run produced.
type Report struct {
	// Findings are sorted by file and line, as the engine returns them.
	Findings []rules.Finding
	// Spilled, when set, holds the findings instead of Findings: more than
	// memory holds, read again from disk each time it is ranged over
	// (check's spool.Findings.All).
	Spilled iter.Seq[rules.Finding]
	// Workloads are the objects that create pods, read Sorted, by file and
	// line.
	Workloads *rules.Workloads
	// Errors are problems with the input.
	Errors []manifest.Error
	// Rules lists every rule that ran (SARIF tool.driver.rules, docs links).
	Rules []*rules.Rule
	// Target is the Kubernetes minor version checked against, e.g. "1.35".
	Target string
	// Region is the AWS region costs were computed for.
	Region string
	// Version is the fargatekit version.
	Version string
	// Plan is the simulated profile change of `fargatekit plan`; nil for check.
	Plan *Plan
	// Cluster is the cluster `fargatekit scan` read; nil for check and plan.
	Cluster *Cluster
}

// Options change how a report is written.
type Options struct {
	// Color turns on ANSI colours in the text format. The caller decides:
	// on when writing to a terminal and NO_COLOR is unset.
	Color bool
}

// Writer writes a report in one format.
type Writer func(w io.Writer, r *Report, o Options) error

// Formats maps a format name to its writer.
var Formats = map[string]Writer{
	"text":     writeText,
	"json":     writeJSON,
	"sarif":    writeSARIF,
	"junit":    writeJUnit,
	"markdown": writeMarkdown,
	"html":     writeHTML,
}

// FormatNames returns the names of the formats, sorted, for --help and errors.
func FormatNames() []string {
	names := make([]string, 0, len(Formats))
	for n := range Formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the writer of a format, or an error naming the known formats.
func Lookup(format string) (Writer, error) {
	if w, ok := Formats[format]; ok {
		return w, nil
	}
	return nil, fmt.Errorf("unknown output format %q (want %s)", format, strings.Join(FormatNames(), ", "))
}

// DocsURL is where the rules are documented; RuleURL links into it.
const DocsURL = "https://github.com/fargatekit/fargatekit/blob/main/docs/rules.md"

// RuleURL returns the link to a rule's documentation: DocsURL with the
// anchor GitHub gives a heading "FG006 host-network".
func RuleURL(r *rules.Rule) string {
	return DocsURL + "#" + strings.ToLower(r.ID) + "-" + r.Name
}

// Summary counts what a report holds.
type Summary struct {
	// Findings counts every finding; Blocker, Warning and Info count them
	// by severity.
	Findings, Blocker, Warning, Info int
	// Errors counts input errors.
	Errors int
	// Objects counts the objects with at least one finding.
	Objects int
	// FargateWorkloads counts the workloads that would run on Fargate: their
	// pods go there, fit a size, are not DaemonSet pods, and no blocker
	// stands against them.
	FargateWorkloads int
	// MonthlyCostUSD adds up the monthly cost of those workloads, rounded to cents.
	MonthlyCostUSD float64
}

// findings yields the report's findings, in order, from Findings or Spilled.
func (r *Report) findings() iter.Seq[rules.Finding] {
	if r.Spilled != nil {
		return r.Spilled
	}
	return slices.Values(r.Findings)
}

// Summary counts the findings by severity, the input errors, and the
// workloads on Fargate with their cost.
func (r *Report) Summary() Summary {
	s, _ := r.summarize()
	return s
}

// summarize returns the Summary and the objects a blocker finding stands
// against (their pods do not run on Fargate, and the summary counts neither
// them nor their price), reading the findings once.
func (r *Report) summarize() (Summary, map[objectKey]bool) {
	z := r.newSummarizer()
	for f := range r.findings() {
		z.finding(f)
	}
	for w := range r.Workloads.Sorted() {
		z.workload(w)
	}
	return z.summary(), z.blocked
}

// summarizer adds up a report's Summary from its findings, then its
// workloads, as they are read: the JSON writer counts what it writes.
type summarizer struct {
	r *Report
	s Summary
	// seen holds a hash of each object with findings, not its key: a report
	// of a hundred thousand objects would hold 12 MB of keys for a count.
	// Spilled findings come by file (the spool's order), and an object is
	// of one file: seen then holds the objects of one file at a time.
	seen    map[uint64]bool
	seed    maphash.Seed
	file    string
	blocked map[objectKey]bool
}

func (r *Report) newSummarizer() *summarizer {
	return &summarizer{r: r, seen: map[uint64]bool{}, seed: maphash.MakeSeed(), blocked: map[objectKey]bool{}}
}

func (z *summarizer) finding(f rules.Finding) {
	if z.r.Spilled != nil && f.Source.File != z.file {
		clear(z.seen)
		z.file = f.Source.File
	}
	k := objectKey{f.Object, f.Source.File}
	z.s.Findings++
	switch f.Severity {
	case rules.Blocker:
		z.s.Blocker++
		z.blocked[k] = true
	case rules.Warning:
		z.s.Warning++
	case rules.Info:
		z.s.Info++
	}
	if h := maphash.Comparable(z.seed, k); !z.seen[h] {
		z.seen[h] = true
		z.s.Objects++
	}
}

func (z *summarizer) workload(w *rules.Workload) {
	if w.Runs() && !z.blocked[objectKey{w.Ref, w.Source.File}] {
		z.s.FargateWorkloads++
		z.s.MonthlyCostUSD += monthly(w)
	}
}

// summary is the Summary of what the summarizer was given.
func (z *summarizer) summary() Summary {
	s := z.s
	s.Errors = len(z.r.Errors)
	s.MonthlyCostUSD = cents(s.MonthlyCostUSD)
	return s
}

// objectKey tells the objects of a report apart.
type objectKey struct {
	ref  object.Ref
	file string
}

// row is how a report shows a workload: where its pods run, under which
// profile, at what size, how many, and at what price; "-" where there is
// nothing to say.
type row struct{ runsOn, profile, size, replicas, price string }

// describe words a workload for the tables of the text and Markdown
// reports. A workload with a blocker finding shows without a price, as the
// summary leaves it out.
func describe(w *rules.Workload, blocked bool, st *live.WorkloadState) row {
	r := row{runsOn: "EC2: " + w.Placement.Reason, profile: "-", size: "-", replicas: fmt.Sprint(w.Replicas), price: "-"}
	if st != nil { // a live workload: where its pods are, and what Fargate bills
		r.runsOn = podsText(st)
		if w.Placement.Fargate {
			r.profile = cmp.Or(w.Placement.Profile, "-")
		}
		if st.BilledMonthlyUSD > 0 {
			r.price = fmt.Sprintf("$%.2f/month billed", cents(st.BilledMonthlyUSD))
		}
		if w.Runs() {
			r.size = w.Sizing.Provisioned.String()
		}
		return r
	}
	if w.Ref.Kind == "DaemonSet" {
		r.replicas = "per node"
	}
	if !w.Placement.Fargate {
		return r
	}
	r.runsOn, r.profile, r.size = "Fargate", cmp.Or(w.Placement.Profile, "(no profiles given)"), capacity(w)
	switch {
	case !w.Sizing.Fits:
		r.runsOn, r.size = "refused: fits no Fargate size", "-"
	case !w.Runs():
		r.runsOn, r.size = "refused by fargate-scheduler (Pending)", "-"
	case blocked:
		r.runsOn = "Fargate, if its blockers are fixed"
	case w.MonthlyCostUSD > 0:
		r.price = fmt.Sprintf("$%.2f/month", monthly(w))
	case w.HourlyCostUSD > 0:
		r.price = fmt.Sprintf("$%.4f/hour running", hourly(w))
	}
	return r
}

// cents rounds a price to cents.
func cents(usd float64) float64 { return math.Round(usd*100) / 100 }

func monthly(w *rules.Workload) float64 {
	if !w.Runs() {
		return 0
	}
	return cents(w.MonthlyCostUSD)
}

func hourly(w *rules.Workload) float64 {
	if !w.Runs() {
		return 0
	}
	return math.Round(w.HourlyCostUSD*10000) / 10000 // a small pod costs about a cent an hour: keep 4 decimals
}

// capacity is the Fargate size a workload's pods get, "" when none.
func capacity(w *rules.Workload) string {
	if !w.Runs() {
		return ""
	}
	return w.Sizing.Provisioned.String()
}

// entry is one object as the grouped formats show it.
type entry struct {
	ref      object.Ref
	source   object.Source // Line is 0 when unknown
	workload *rules.Workload
	findings []rules.Finding
}

// entries groups findings by object in order of first appearance. With
// workloads set, workloads without findings are added and all entries are
// sorted by file and line.
func entries(r *Report, workloads bool) []*entry {
	// Objects of one name in several files (overlays, environments) are
	// different objects: they are told apart by file.
	type key struct {
		ref  object.Ref
		file string
	}
	var out []*entry
	index := map[key]*entry{}
	for f := range r.findings() {
		k := key{f.Object, f.Source.File}
		e := index[k]
		if e == nil {
			e = &entry{ref: f.Object, source: object.Source{File: f.Source.File}}
			index[k] = e
			out = append(out, e)
		}
		if f.Path == "" && e.source.Line == 0 {
			e.source.Line = f.Source.Line // a finding about the object as a whole stands on its first line (a workload's own line wins, below)
		}
		e.findings = append(e.findings, f)
	}
	// One read of the workloads, which are decoded as they are read, so that
	// only those kept here are in memory: an object with findings takes the
	// first workload of its key; with workloads set, the others are added.
	for w := range r.Workloads.Sorted() {
		k := key{w.Ref, w.Source.File}
		switch e := index[k]; {
		case e == nil && workloads:
			index[k] = &entry{ref: w.Ref, source: w.Source, workload: w}
			out = append(out, index[k])
		case e != nil && e.workload == nil:
			e.workload, e.source = w, w.Source
		}
	}
	if !workloads {
		return out
	}
	slices.SortStableFunc(out, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(a.source.File, b.source.File), cmp.Compare(a.source.Line, b.source.Line))
	})
	return out
}

// ruleID and ruleName tolerate a finding without a rule.
func ruleID(f rules.Finding) string {
	if f.Rule == nil {
		return ""
	}
	return f.Rule.ID
}

func ruleName(f rules.Finding) string {
	if f.Rule == nil {
		return ""
	}
	return f.Rule.Name
}

func ruleCategory(f rules.Finding) rules.Category {
	if f.Rule == nil {
		return ""
	}
	return f.Rule.Category
}

// location renders file:line, or file alone when the line is unknown.
func location(s object.Source) string {
	if s.Line > 0 {
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return s.File
}

// plural renders a count with a noun, adding s for other than one.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
