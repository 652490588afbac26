package upgradecmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// jsonPlan is the JSON document of a plan (docs/upgrade.md).
type jsonPlan struct {
	*upgrade.Plan
	// Blocked says whether the next hop is blocked.
	Blocked bool `json:"blocked"`
	// Errors are what could not be read.
	Errors []string `json:"errors"`
}

func write(s streams.Streams, version, format string, p *upgrade.Plan, errs []error) error {
	var err error
	switch format {
	case "json":
		doc := jsonPlan{Plan: p, Blocked: p.Hops[0].Blocked(), Errors: []string{}}
		for _, e := range errs {
			doc.Errors = append(doc.Errors, e.Error())
		}
		enc := json.NewEncoder(s.Out)
		enc.SetIndent("", "  ")
		err = enc.Encode(doc)
	case "markdown":
		err = writeMarkdown(s.Out, p, errs)
	case "html":
		err = report.WriteUpgradeHTML(s.Out, p, errs, version)
	default:
		err = writeText(s.Out, p, errs)
	}
	if err != nil {
		return fmt.Errorf("writing the plan: %w", err)
	}
	return nil
}

func hopState(h upgrade.Hop) string {
	if h.Blocked() {
		return "BLOCKED"
	}
	return "ready"
}

func writeText(w io.Writer, p *upgrade.Plan, errs []error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Upgrade of cluster %s: %s → %s, %d hop(s), one minor version at a time\n", p.Cluster, p.From, p.To, len(p.Hops))
	fmt.Fprintf(&b, "  %s\n", p.Current)
	fmt.Fprintf(&b, "  %s\n", p.Target)
	for i, h := range p.Hops {
		fmt.Fprintf(&b, "\nHop %d: %s → %s  %s\n", i+1, h.From, h.To, hopState(h))
		for _, is := range h.Issues {
			fmt.Fprintf(&b, "  %-8s %s %s: %s\n", strings.ToUpper(string(is.Severity)), is.Kind, is.Subject, is.Message)
			if is.Fix != "" {
				fmt.Fprintf(&b, "           fix: %s\n", is.Fix)
			}
		}
		b.WriteString("  Steps:\n")
		for j, st := range h.Steps {
			fmt.Fprintf(&b, "    %d. %s\n", j+1, st.Title)
			for _, c := range st.Commands {
				fmt.Fprintf(&b, "       %s\n", c)
			}
		}
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "\ncould not read: %v", e)
	}
	if len(errs) > 0 {
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeMarkdown(w io.Writer, p *upgrade.Plan, errs []error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# Upgrade of EKS cluster `%s` from %s to %s\n\n", p.Cluster, p.From, p.To)
	fmt.Fprintf(&b, "EKS moves the control plane one minor version at a time: %d hop(s). Made by `fargatekit upgrade plan` on %s.\n\n", len(p.Hops), p.Now.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- %s\n- %s\n", p.Current, p.Target)
	if len(errs) > 0 {
		b.WriteString("\n**Not read** (the plan does not account for it):\n\n")
		for _, e := range errs {
			fmt.Fprintf(&b, "- %v\n", e)
		}
	}
	for i, h := range p.Hops {
		fmt.Fprintf(&b, "\n## Hop %d: %s → %s (%s)\n\n", i+1, h.From, h.To, strings.ToLower(hopState(h)))
		if len(h.Issues) > 0 {
			b.WriteString("### Before starting\n\n")
			for _, is := range h.Issues {
				fmt.Fprintf(&b, "- [ ] **%s** %s: %s", is.Severity, is.Subject, is.Message)
				if is.Fix != "" {
					fmt.Fprintf(&b, " Fix: `%s`", is.Fix)
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		}
		b.WriteString("### Steps\n\n")
		for j, st := range h.Steps {
			fmt.Fprintf(&b, "%d. %s\n\n   ```sh\n", j+1, st.Title)
			for _, c := range st.Commands {
				fmt.Fprintf(&b, "   %s\n", c)
			}
			b.WriteString("   ```\n\n")
		}
	}
	_, err := io.WriteString(w, strings.TrimRight(b.String(), "\n")+"\n")
	return err
}
