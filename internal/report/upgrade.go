package report

import (
	"fmt"
	"io"

	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// htmlUpgrade is the page of `fargatekit upgrade plan`: the path of minor
// versions as a chain, then each hop with what blocks it and its steps.
type htmlUpgrade struct {
	*upgrade.Plan
	Support  []string
	Blocked  int // hops blocked
	Blockers int
	Warnings int
	// Path is the chain of versions, a node per version and a link per hop.
	Path   []pathNode
	Width  int
	Errors []string
}

type pathNode struct {
	Version string
	X       int
	// Hop is the hop that leads to the next node; nil for the last.
	Hop     *upgrade.Hop
	Blocked bool
}

// pathStep is the distance between two versions of the chain, in SVG units.
const pathStep = 150

// WriteUpgradeHTML writes an upgrade plan as a page, with what could not
// be read (the plan does not account for it).
func WriteUpgradeHTML(w io.Writer, p *upgrade.Plan, errs []error, version string) error {
	u := &htmlUpgrade{Plan: p, Support: []string{p.Current.String(), p.Target.String()}}
	for i := range p.Hops {
		h := &p.Hops[i]
		if h.Blocked() {
			u.Blocked++
		}
		for _, is := range h.Issues {
			switch is.Severity {
			case upgrade.Blocker:
				u.Blockers++
			case upgrade.Warning:
				u.Warnings++
			}
		}
		u.Path = append(u.Path, pathNode{Version: h.From, X: 40 + i*pathStep, Hop: h, Blocked: h.Blocked()})
	}
	if n := len(p.Hops); n > 0 {
		u.Path = append(u.Path, pathNode{Version: p.Hops[n-1].To, X: 40 + n*pathStep})
	}
	u.Width = 80 + len(p.Hops)*pathStep
	for _, e := range errs {
		u.Errors = append(u.Errors, e.Error())
	}
	if err := writePage(w, page{Title: "fargatekit upgrade plan", About: "fargatekit " + version, Upgrade: u}); err != nil {
		return fmt.Errorf("writing the upgrade plan: %w", err)
	}
	return nil
}
