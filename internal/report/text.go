package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

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

// writeText writes findings grouped per object, then input errors, then a
// one-line summary.
func writeText(w io.Writer, r *Report, o Options) error {
	p := painter(o.Color)
	var b bytes.Buffer
	groups := entries(r, false)

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
		}
	}
	if len(groups) == 0 {
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
	b.WriteString(summaryLine(r))
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the text report: %w", err)
	}
	return nil
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

// placement describes where a workload's pods run: "Fargate: profile web,
// 2vCPU 9GB ×3, $218.66/month", "Fargate: profile web, refused by
// fargate-scheduler, Pending" or "EC2: no Fargate profile matches".
func placement(w *rules.Workload) string {
	pl := w.Placement
	if !pl.Fargate {
		return "EC2: " + pl.Reason
	}
	parts := []string{"no profiles given"}
	if pl.Profile != "" {
		parts[0] = "profile " + pl.Profile
	}
	switch {
	case !w.Sizing.Fits:
		return "Fargate: " + strings.Join(append(parts, fmt.Sprintf("fits no Fargate size ×%d", w.Replicas)), ", ")
	case !w.Runs():
		return "Fargate: " + strings.Join(append(parts, "refused by fargate-scheduler, Pending"), ", ")
	}
	parts = append(parts, fmt.Sprintf("%s ×%d", capacity(w), w.Replicas))
	switch {
	case w.MonthlyCostUSD > 0:
		parts = append(parts, fmt.Sprintf("$%.2f/month", monthly(w)))
	case w.HourlyCostUSD > 0:
		parts = append(parts, fmt.Sprintf("$%.4f/hour while running", hourly(w)))
	}
	return "Fargate: " + strings.Join(parts, ", ")
}

// summaryLine counts everything in one line:
// "1 blocker, 2 warnings, 0 info in 2 objects; 3 workloads on Fargate, est. $12.34/month (us-east-1); 1 error".
func summaryLine(r *Report) string {
	s := r.Summary()
	if r.Plan != nil { // a plan has no workload sizes or costs
		return fmt.Sprintf("%s, %s, %d info in %s; %s",
			plural(s.Blocker, "blocker"), plural(s.Warning, "warning"), s.Info, plural(s.Objects, "object"), plural(s.Errors, "error"))
	}
	cost := fmt.Sprintf("est. $%.2f/month", s.MonthlyCostUSD)
	if r.Region != "" {
		cost += " (" + r.Region + ")"
	}
	return fmt.Sprintf("%s, %s, %d info in %s; %s on Fargate, %s; %s",
		plural(s.Blocker, "blocker"), plural(s.Warning, "warning"), s.Info, plural(s.Objects, "object"),
		plural(s.FargateWorkloads, "workload"), cost, plural(s.Errors, "error"))
}
