package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
)

// maxMarkdownRows caps each table so a comment stays within what a
// pull-request comment holds (GitHub: 65,536 characters).
const maxMarkdownRows = 100

// writeMarkdown writes a short report for a pull-request comment: a heading,
// a summary table, findings, workloads and input errors.
func writeMarkdown(w io.Writer, r *Report, _ Options) error {
	var b bytes.Buffer
	s, blocked := r.summarize()

	b.WriteString("## fargatekit\n\n")
	if about := r.about(); about != "" {
		b.WriteString("Checked against " + about + ".\n\n")
	}

	b.WriteString("| Blockers | Warnings | Info | Errors | Fargate workloads | Est. $/month |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | $%.2f |\n\n", s.Blocker, s.Warning, s.Info, s.Errors, s.FargateWorkloads, s.MonthlyCostUSD)

	if r.Plan != nil {
		writePlanMarkdown(&b, r.Plan)
	}
	b.WriteString("### Findings\n\n")
	if s.Findings == 0 {
		b.WriteString("No findings.\n\n")
	} else {
		b.WriteString("| Severity | Rule | Object | Location | Message |\n")
		b.WriteString("| --- | --- | --- | --- | --- |\n")
		i := 0
		for f := range r.findings() {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more; run fargatekit locally for all of them.\n", s.Findings-i)
				break
			}
			i++
			rule := strings.TrimSpace(ruleID(f) + " " + ruleName(f))
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n",
				cell(f.Severity.String()), cell(rule), cell(f.Object.String()), cell(location(f.Source)), cell(f.Message))
		}
		b.WriteByte('\n')
	}

	if r.Workloads.Len() > 0 {
		b.WriteString("### Workloads\n\n")
		b.WriteString("| Object | Runs on | Profile | Size | Replicas | Price |\n")
		b.WriteString("| --- | --- | --- | --- | ---: | ---: |\n")
		i := 0
		for wl := range r.Workloads.Sorted() {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "\n…and %d more.\n", r.Workloads.Len()-i)
				break
			}
			i++
			d := describe(wl, blocked[objectKey{wl.Ref, wl.Source.File}], r.Cluster.state(wl.Ref))
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n",
				cell(wl.Ref.String()), cell(d.runsOn), cell(d.profile), cell(d.size), d.replicas, d.price)
		}
		b.WriteByte('\n')
	}

	if len(r.Errors) > 0 {
		b.WriteString("### Errors\n\n")
		for i, e := range r.Errors {
			if i == maxMarkdownRows {
				fmt.Fprintf(&b, "- …and %d more\n", len(r.Errors)-i)
				break
			}
			b.WriteString("- " + cell(e.Error()) + "\n")
		}
		b.WriteByte('\n')
	}

	out := bytes.TrimRight(b.Bytes(), "\n")
	out = append(out, '\n')
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("writing the markdown report: %w", err)
	}
	return nil
}

var cellEscaper = strings.NewReplacer(
	"|", `\|`,
	"&", "&amp;",
	"<", "&lt;",
	">", "&gt;",
	"\r\n", "<br>",
	"\n", "<br>",
	"\r", "<br>",
)

// cell makes text safe inside a Markdown table cell: pipes are escaped, HTML
// is shown as text and line breaks become <br>.
func cell(s string) string { return cellEscaper.Replace(s) }

// about says what a report was made against: "Kubernetes 1.35 · us-east-1 ·
// fargatekit 0.1.0", leaving out what is unknown.
func (r *Report) about() string {
	var parts []string
	if r.Target != "" {
		parts = append(parts, "Kubernetes "+r.Target)
	}
	if r.Region != "" {
		parts = append(parts, r.Region)
	}
	if r.Version != "" {
		parts = append(parts, "fargatekit "+r.Version)
	}
	return strings.Join(parts, " · ")
}
