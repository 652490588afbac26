package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/plan"
)

// Plan is what `fargatekit plan` adds to a report: the simulated change of
// Fargate profiles. nil for `fargatekit check`.
type Plan struct {
	// Source names the change: a Terraform plan file, or "old -> new" for eksctl configs.
	Source string
	Result plan.Result
	// Sequence is the safe way to make the change: commands and comments, in order.
	Sequence []string
}

type jsonPlan struct {
	Source          string             `json:"source"`
	Steps           []jsonPlanStep     `json:"steps"`
	DurationSeconds int                `json:"durationSeconds"`
	Workloads       []jsonPlanWorkload `json:"workloads"`
	CoverageLost    []plan.Selector    `json:"coverageLost"`
	CoverageGained  []plan.Selector    `json:"coverageGained"`
	SafeSequence    []string           `json:"safeSequence"`
	SafeSeconds     int                `json:"safeSequenceSeconds"`
}

type jsonPlanStep struct {
	Operation    plan.Kind `json:"operation"`
	Profile      string    `json:"profile"`
	Address      string    `json:"address"`
	StartSeconds int       `json:"startSeconds"`
	EndSeconds   int       `json:"endSeconds"`
}

type jsonPlanWorkload struct {
	Object              jsonRef          `json:"object"`
	File                string           `json:"file"`
	Line                int              `json:"line"`
	Before              plan.Placement   `json:"before"`
	During              []plan.Placement `json:"during"`
	After               plan.Placement   `json:"after"`
	UncoveredOperations int              `json:"uncoveredOperations"`
	UncoveredSeconds    int              `json:"uncoveredSeconds"`
	MatchedAfter        string           `json:"matchedAfter"`
	RestartNeeded       bool             `json:"restartNeeded"`
	RestartCommand      string           `json:"restartCommand,omitempty"`
}

func seconds(d time.Duration) int { return int(d / time.Second) }

func (p *Plan) toJSON() *jsonPlan {
	r := p.Result
	out := &jsonPlan{
		Source: p.Source, DurationSeconds: seconds(r.Duration),
		Steps: make([]jsonPlanStep, 0, len(r.Steps)), Workloads: make([]jsonPlanWorkload, 0, len(r.Workloads)),
		CoverageLost: nonNil(r.CoverageLost), CoverageGained: nonNil(r.CoverageGained), SafeSequence: nonNil(p.Sequence), SafeSeconds: seconds(r.Safe.Duration),
	}
	for _, s := range r.Steps {
		out.Steps = append(out.Steps, jsonPlanStep{s.Kind, s.Profile, s.Address, seconds(s.Start), seconds(s.End)})
	}
	for _, w := range r.Workloads {
		jw := jsonPlanWorkload{
			Object: toJSONRef(w.Ref), File: w.Source.File, Line: w.Source.Line,
			Before: w.Before, During: nonNil(w.Moves), After: w.After,
			UncoveredOperations: w.Uncovered, UncoveredSeconds: seconds(w.UncoveredFor),
			MatchedAfter: w.Matched, RestartNeeded: w.RestartNeeded,
		}
		if w.RestartNeeded {
			jw.RestartCommand = live.RestartCommand(w.NamespacedRef(), w.Labels)
		}
		out.Workloads = append(out.Workloads, jw)
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writePlanText writes the plan sections of the text format.
func writePlanText(b *bytes.Buffer, p *Plan, pt painter) {
	r := p.Result
	b.WriteString(pt.paint(ansiBold, fmt.Sprintf("Plan (%s): %s, one at a time, about %s in the worst order", p.Source, plural(len(r.Steps), "profile operation"), plan.FormatDuration(r.Duration))))
	b.WriteByte('\n')
	width := 0
	for _, s := range r.Steps {
		width = max(width, len(s.Profile))
	}
	for i, s := range r.Steps {
		fmt.Fprintf(b, "  %2d. %-6s %-*s  %7s → %-7s  %s\n", i+1, s.Kind, width, s.Profile, "+"+plan.FormatDuration(s.Start), "+"+plan.FormatDuration(s.End), s.Address)
	}
	if len(r.Workloads) > 0 {
		b.WriteString("\n" + pt.paint(ansiBold, "Workloads: before → during → after") + "\n")
		for _, w := range r.Workloads {
			path := []string{w.Before.String()}
			for _, m := range w.Moves {
				path = append(path, m.String())
			}
			after := w.After.String()
			if w.RestartNeeded {
				after += " until restarted (profile " + w.Matched + " matches)"
			}
			if len(w.Moves) == 0 {
				path = append(path, after)
			} else {
				path[len(path)-1] = after
			}
			fmt.Fprintf(b, "  %s  %s\n", w.Ref, strings.Join(path, " → "))
		}
	}
	if len(p.Sequence) > 0 {
		b.WriteString("\n" + pt.paint(ansiBold, "Safe sequence (about "+plan.FormatDuration(r.Safe.Duration)+" of profile operations)") + "\n")
		for _, line := range p.Sequence {
			b.WriteString("  " + line + "\n")
		}
	}
}

// writePlanMarkdown writes the plan sections of the markdown format.
func writePlanMarkdown(b *bytes.Buffer, p *Plan) {
	r := p.Result
	fmt.Fprintf(b, "### Plan\n\n%s from %s, one at a time, about %s in the worst order.\n\n", plural(len(r.Steps), "profile operation"), cell(p.Source), plan.FormatDuration(r.Duration))
	b.WriteString("| # | Operation | Profile | Address |\n| ---: | --- | --- | --- |\n")
	for i, s := range r.Steps {
		fmt.Fprintf(b, "| %d | %s | %s | %s |\n", i+1, s.Kind, cell(s.Profile), cell(s.Address))
	}
	if len(p.Sequence) > 0 {
		b.WriteString("\n**Safe sequence** (about " + plan.FormatDuration(r.Safe.Duration) + " of profile operations)\n\n```sh\n" + strings.Join(p.Sequence, "\n") + "\n```\n")
	}
	b.WriteByte('\n')
}
