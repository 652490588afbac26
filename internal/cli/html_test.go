package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fargatekit/fargatekit/internal/browser"
	"github.com/fargatekit/fargatekit/internal/cli/versioncmd"
	"github.com/fargatekit/fargatekit/pkg/eks"
)

// htmlReports are the HTML reports of the bundled examples: check on the
// example shop, plan on the incident, as make demo runs them, and the
// upgrade of the shop's manifests from 1.32 to 1.35 (no golden file: its
// support dates and prices are those of today).
var htmlReports = []struct {
	name   string
	args   []string
	code   int
	golden bool
}{
	{"check", []string{"check", "--profiles", "examples/profiles/cluster.yaml", "--target-version", "1.35", "-o", "html", "examples/manifests/"}, 1, true},
	{"plan", []string{"plan", "--terraform", "examples/incident/plan.json", "-o", "html", "examples/incident/manifests/"}, 1, true},
	{"upgrade", []string{"upgrade", "plan", "--from", "1.32", "--to", "1.35", "-o", "html", "examples/manifests/"}, 0, false},
}

// htmlReport runs a command of htmlReports from the repository's root, as
// the README does, and returns its page.
func htmlReport(t *testing.T, args []string, wantCode int) string {
	t.Helper()
	var out string
	t.Run("fargatekit "+args[0], func(t *testing.T) { // whose end takes the test back to its directory
		t.Chdir("../..")
		code, stdout, stderr := run(t, "", args...)
		if code != wantCode {
			t.Fatalf("fargatekit %s: exit %d, want %d; stderr: %s", strings.Join(args, " "), code, wantCode, stderr)
		}
		out = stdout
	})
	return out
}

// TestHTMLGolden: the HTML reports of the examples (-update rewrites them).
func TestHTMLGolden(t *testing.T) {
	for _, r := range htmlReports {
		if !r.golden {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			page := htmlReport(t, r.args, r.code)
			// The version, and plan's default target (the newest EKS version today), made constant.
			page = strings.ReplaceAll(page, "fargatekit "+versioncmd.Current(build()).Version, "fargatekit test")
			page = strings.ReplaceAll(page, "Kubernetes "+eks.DefaultTarget(time.Now())+" ", "Kubernetes TARGET ")
			checkGolden(t, filepath.Join("testdata/html", r.name+".html"), page)
		})
	}
}

// TestHTMLInBrowser opens the reports of the examples in headless Chromium,
// on a laptop's screen and on a phone's in dark mode: no console error, no
// page wider than the screen, a sane height, the charts drawn with one mark
// per workload, and the table sorted and filtered by its script. With
// FARGATEKIT_SCREENSHOTS=DIR (make screenshots) it writes DIR/NAME.png, the
// pictures of the README.
func TestHTMLInBrowser(t *testing.T) {
	b := browser.ForTest(t)
	if b == nil {
		t.Skip("no Chromium")
	}
	dir := t.TempDir()
	pages := map[string]string{}
	for _, r := range htmlReports {
		pages[r.name] = filepath.Join(dir, r.name+".html")
		if err := os.WriteFile(pages[r.name], []byte(htmlReport(t, r.args, r.code)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	views := map[string]browser.View{"laptop": {Width: 1280, Height: 900}, "phone, dark": {Width: 390, Height: 844, Dark: true}}
	for name, path := range pages {
		for vname, v := range views {
			t.Run(name+"/"+vname, func(t *testing.T) {
				p, err := b.Open(path, v)
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close()
				problems, err := p.Problems(v)
				if err != nil || len(problems) > 0 {
					t.Errorf("%q (%v)", problems, err)
				}
				// The picture first: the checks below sort and filter the table.
				if out := os.Getenv("FARGATEKIT_SCREENSHOTS"); out != "" && vname == "laptop" {
					if err := p.SaveScreenshot(filepath.Join(out, name+".png")); err != nil {
						t.Fatal(err)
					}
				}
				switch name {
				case "check":
					checkCheckPage(t, p)
				case "plan":
					checkPlanPage(t, p)
				case "upgrade":
					checkUpgradePage(t, p)
				}
			})
		}
	}
}

// counts checks how many elements match each selector.
func counts(t *testing.T, p *browser.Page, want map[string]int) {
	t.Helper()
	for selector, n := range want {
		if got := count(t, p, selector); got != n {
			t.Errorf("%s: %d, want %d", selector, got, n)
		}
	}
}

func count(t *testing.T, p *browser.Page, selector string) int {
	t.Helper()
	n, err := p.Count(selector)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// checkCheckPage: the example shop has 7 workloads, 2 of them billed by the
// month (storefront, rounded up, and catalog), and 12 objects with findings.
func checkCheckPage(t *testing.T, p *browser.Page) {
	t.Helper()
	counts(t, p, map[string]int{
		"#workloads-table tbody tr": 7,
		"svg.cost .bar.requested":   2,
		"details.object":            12,
		".summary .stat":            6,
	})
	// storefront pays for capacity it did not request: its waste bar has a width.
	if w, err := browser.Eval[float64](p, `document.querySelector("svg.cost .bar.waste").getBBox().width`); err != nil || w <= 0 {
		t.Errorf("storefront's waste bar is %v wide (%v)", w, err)
	}
	first := func() string {
		s, err := browser.Eval[string](p, `document.querySelector("#workloads-table tbody tr th").firstChild.textContent`)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	click := func(column string) {
		if _, err := browser.Eval[bool](p, `(() => { const b = Array.from(document.querySelectorAll("#workloads-table thead button")).find(b => b.textContent === "`+column+`"); b.click(); return true })()`); err != nil {
			t.Fatal(err)
		}
	}
	click("$/month")
	if got := first(); got != "Deployment/shop/storefront" {
		t.Errorf("sorted by cost, most first: %s first, want Deployment/shop/storefront", got)
	}
	click("Findings")
	if got := first(); got != "Deployment/shop/orders" && got != "StatefulSet/shop/cache" {
		t.Errorf("sorted by findings, worst first: %s first, want a workload with a blocker", got)
	}
	shown, err := browser.Eval[int](p, `(() => { const i = document.querySelector("input[data-filter]"); i.value = "orders"; i.dispatchEvent(new Event("input")); return Array.from(document.querySelectorAll("#workloads-table tbody tr")).filter(r => !r.hidden).length })()`)
	if err != nil || shown != 1 {
		t.Errorf("filtered on orders: %d rows shown (%v), want 1", shown, err)
	}
}

// checkPlanPage: the incident's 5 operations, and 4 workloads on Fargate
// before that the worst order leaves on EC2 nodes; through the safe
// sequence (apps created, the pods restarted onto it, the 4 old profiles
// deleted) they never leave Fargate.
func checkPlanPage(t *testing.T, p *browser.Page) {
	t.Helper()
	counts(t, p, map[string]int{
		"svg.timeline.worst .step":                5,
		"svg.timeline.worst .lane":                4,
		"svg.timeline.worst .lane .where.fargate": 4,
		"svg.timeline.worst .lane .where.ec2":     4,
		"svg.timeline.safe .step":                 5,
		"svg.timeline.safe .lane":                 4,
		"svg.timeline.safe .lane .where.ec2":      0,
		"#safe-sequence":                          1,
	})
}

// checkUpgradePage: three hops from 1.32, the first blocked by the shop's
// autoscaling/v2beta2 HorizontalPodAutoscaler, each step's commands copyable.
func checkUpgradePage(t *testing.T, p *browser.Page) {
	t.Helper()
	counts(t, p, map[string]int{
		"svg.path .hop":         3,
		"svg.path .hop.blocked": 1,
		"svg.path .version":     4,
		"ul.issues li":          1,
	})
	if n := count(t, p, "ol.steps button.copy-button"); n < 3 {
		t.Errorf("%d copy buttons, want one per step with commands, at least 3", n)
	}
}
