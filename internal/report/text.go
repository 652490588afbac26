package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// ANSI escape sequences of the text format.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
)

type painter bool

func (p painter) paint(code, s string) string {
	if !p {
		return s
	}
	return code + s + ansiReset
}

func (p painter) severity(s rules.Severity, padded string) string {
	switch s {
	case rules.Blocker:
		return p.paint(ansiRed+ansiBold, padded)
	case rules.Warning:
		return p.paint(ansiYellow, padded)
	case rules.Info:
		return p.paint(ansiCyan, padded)
	}
	return padded
}

// writeText writes every workload in a table (where its pods run, under
// which profile, at what size and price), then the findings grouped per
// object, then input errors, then a one-line summary.
func writeText(w io.Writer, r *Report, o Options) error {
	p := painter(o.Color)
	var b bytes.Buffer
	summary, blocked := r.summarize()
	groups := entries(r, false)
	if r.Cluster != nil {
		writeClusterText(&b, r.Cluster, p)
	}
	if r.Plan == nil && r.Workloads.Len() > 0 {
		writeWorkloadTable(&b, r, p, blocked)
		if len(groups) > 0 {
			b.WriteString("\n" + p.paint(ansiBold, "Findings") + "\n")
		}
	}

	// Column widths across the whole report keep the findings aligned.
	var wSev, wID, wName, wWhere int
	for _, e := range groups {
		for _, f := range e.findings {
			wSev = max(wSev, len(f.Severity.String()))
			wID = max(wID, len(ruleID(f)))
			wName = max(wName, len(ruleName(f)))
			wWhere = max(wWhere, len(where(e, f)))
		}
	}
	for i, e := range groups {
		if i > 0 {
			b.WriteByte('\n')
		}
		head := location(e.source) + "  " + e.ref.String()
		if e.workload != nil {
			head += "  [" + placement(e.workload) + "]"
		}
		b.WriteString(p.paint(ansiBold, head))
		b.WriteByte('\n')
		for _, f := range e.findings {
			sev := fmt.Sprintf("%-*s", wSev, strings.ToUpper(f.Severity.String()))
			line := fmt.Sprintf("  %s %-*s %-*s  %-*s  %s", p.severity(f.Severity, sev), wID, ruleID(f), wName, ruleName(f), wWhere, where(e, f), f.Message)
			b.WriteString(strings.TrimRight(line, " "))
			b.WriteByte('\n')
			if fix := f.Details[live.FixDetail]; fix != "" {
				b.WriteString("      fix: " + fix + "\n")
			}
		}
	}
	if len(groups) == 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("No findings.\n")
	}
	if r.Plan != nil {
		b.WriteByte('\n')
		writePlanText(&b, r.Plan, p)
	}
	if len(r.Errors) > 0 {
		b.WriteByte('\n')
		b.WriteString(p.paint(ansiBold, "Errors"))
		b.WriteByte('\n')
		for _, e := range r.Errors {
			b.WriteString("  " + p.paint(ansiRed, e.Error()) + "\n")
		}
	}
	b.WriteByte('\n')
	b.WriteString(summaryLine(r, summary))
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the text report: %w", err)
	}
	return nil
}

// writeWorkloadTable lists every workload: where its pods run, the profile,
// the size Fargate gives each pod, the replicas, and the price.
func writeWorkloadTable(b *bytes.Buffer, r *Report, p painter, blocked map[objectKey]bool) {
	b.WriteString(p.paint(ansiBold, "Workloads") + "\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  WORKLOAD\tRUNS ON\tPROFILE\tSIZE\tREPLICAS\tPRICE")
	for w := range r.Workloads.Sorted() {
		d := describe(w, blocked[objectKey{w.Ref, w.Source.File}], r.Cluster.state(w.Ref))
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\n", w.Ref, d.runsOn, d.profile, d.size, d.replicas, d.price)
	}
	_ = tw.Flush()
}

// where says where in its object a finding is: "line 12", or file:line when
// the finding stands in another file than its object's header.
func where(e *entry, f rules.Finding) string {
	if f.Source.File != e.source.File {
		return location(f.Source)
	}
	if f.Source.Line > 0 {
		return fmt.Sprintf("line %d", f.Source.Line)
	}
	return ""
}

// placement says, in the header of a workload's findings, where its pods
// go: "Fargate: profile web", "Fargate: profile web, refused by
// fargate-scheduler" or "EC2: no Fargate profile matches". Sizes and prices
// are in the workload table.
func placement(w *rules.Workload) string {
	pl := w.Placement
	if !pl.Fargate {
		return "EC2: " + pl.Reason
	}
	where := "Fargate: no profiles given"
	if pl.Profile != "" {
		where = "Fargate: profile " + pl.Profile
	}
	if !w.Runs() {
		where += ", refused by fargate-scheduler"
	}
	return where
}

// summaryLine counts everything in one line: "1 blocker, 2 warnings, 0 info
// in 2 objects with findings; 3 of 4 workloads run on Fargate, est.
// $12.34/month (us-east-1); 1 error". A workload runs on Fargate when a
// profile sends it there, fargate-scheduler accepts it, and no blocker
// stands against it; the price is theirs.
func summaryLine(r *Report, s Summary) string {
	if c := r.Cluster; c != nil && c.Analysis != nil { // a scan: where the pods are, and the bill
		var pods live.WorkloadState
		var billed float64
		for _, w := range c.Analysis.Workloads {
			pods.Fargate, pods.EC2, pods.Pending = pods.Fargate+w.Fargate, pods.EC2+w.EC2, pods.Pending+w.Pending
			billed += w.BilledMonthlyUSD
		}
		return fmt.Sprintf("%s, %s, %d info in %s with findings; pods: %s; Fargate bills $%.2f/month; %s",
			plural(s.Blocker, "blocker"), plural(s.Warning, "warning"), s.Info, plural(s.Objects, "object"),
			podsText(&pods), cents(billed), plural(s.Errors, "error"))
	}
	if r.Plan != nil { // a plan has no workload sizes or costs
		return fmt.Sprintf("%s, %s, %d info in %s; %s",
			plural(s.Blocker, "blocker"), plural(s.Warning, "warning"), s.Info, plural(s.Objects, "object"), plural(s.Errors, "error"))
	}
	cost := fmt.Sprintf("est. $%.2f/month", s.MonthlyCostUSD)
	if r.Region != "" {
		cost += " (" + r.Region + ")"
	}
	return fmt.Sprintf("%s, %s, %d info in %s with findings; %d of %s run on Fargate, %s; %s",
		plural(s.Blocker, "blocker"), plural(s.Warning, "warning"), s.Info, plural(s.Objects, "object"),
		s.FargateWorkloads, plural(r.Workloads.Len(), "workload"), cost, plural(s.Errors, "error"))
}
