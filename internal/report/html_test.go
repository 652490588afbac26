package report

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/live"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/upgrade"
)

// TestCostChart: bars largest first, each split into requested and waste
// at the scale of the largest; workloads without a cost left out; at most
// maxChartBars, the rest counted.
func TestCostChart(t *testing.T) {
	if c := costChart([]bar{{Full: "free"}}); c != nil {
		t.Errorf("a chart of workloads without a cost: %+v, want none", c)
	}
	c := costChart([]bar{{Full: "small", Requested: 10}, {Full: "free"}, {Full: "big", Requested: 60, Waste: 40}})
	var got []string
	for _, b := range c.Bars {
		got = append(got, fmt.Sprintf("%s %.0f+%.0f at %d", b.Full, b.RequestedWidth, b.WasteWidth, b.Y))
	}
	want := []string{"big 228+152 at 0", "small 38+0 at 24"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bars (-want +got):\n%s", diff)
	}
	if c.Total != 110 || c.Waste != 40 || c.More != 0 {
		t.Errorf("total %v, waste %v, more %d; want 110, 40, 0", c.Total, c.Waste, c.More)
	}
	var many []bar
	for i := range maxChartBars + 3 {
		many = append(many, bar{Full: fmt.Sprint(i), Requested: float64(i + 1)})
	}
	if c := costChart(many); len(c.Bars) != maxChartBars || c.More != 3 || c.Bars[0].Full != fmt.Sprint(maxChartBars+2) {
		t.Errorf("%d workloads: %d bars, %d more, first %s", len(many), len(c.Bars), c.More, c.Bars[0].Full)
	}
}

// TestHTMLSkewed: a scanned workload is marked skewed where LV005 az-skew
// found it piled up, and only there.
func TestHTMLSkewed(t *testing.T) {
	r := scanned()
	if page := string(write(t, "html", r, Options{})); strings.Contains(page, `class="skewed"`) {
		t.Errorf("without az-skew the page marks a workload skewed")
	}
	var web object.Ref
	for w := range r.Workloads.All() {
		web = w.Ref
		break
	}
	r.Findings = append(r.Findings, rules.Finding{Rule: live.AZSkew, Severity: rules.Warning, Object: web, Message: "piled up"})
	if page := string(write(t, "html", r, Options{})); !strings.Contains(page, `<tr class="skewed"><th scope="row">Deployment/shop/web</th>`) {
		t.Errorf("with az-skew the page does not mark Deployment/shop/web skewed")
	}
}

// TestHTMLEscapes: what the input says is shown as text, never as markup.
func TestHTMLEscapes(t *testing.T) {
	r := sample()
	r.Findings[0].Message = `<script>alert("x")</script>`
	page := string(write(t, "html", r, Options{}))
	if strings.Contains(page, `<script>alert`) || !strings.Contains(page, `&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`) {
		t.Errorf("a finding's message is not escaped")
	}
}

// TestUpgradeHTMLGolden: the page of an upgrade plan of two hops, the first
// blocked, with something not read.
func TestUpgradeHTMLGolden(t *testing.T) {
	p := &upgrade.Plan{
		Cluster: "shop", From: "1.33", To: "1.35",
		Current: upgrade.Support{Version: "1.33", EndOfStandard: "2026-07-29", EndOfExtended: "2027-07-29", Phase: "extended", HourlyPrice: upgrade.ExtendedHourly},
		Target:  upgrade.Support{Version: "1.35", EndOfStandard: "2027-03-27", Phase: "standard", HourlyPrice: upgrade.StandardHourly},
		Hops: []upgrade.Hop{
			{From: "1.33", To: "1.34",
				Issues: []upgrade.Issue{{Kind: "nodegroup", Severity: upgrade.Blocker, Subject: "node group old", Message: "1 node with kubelet 1.32", Fix: "aws eks update-nodegroup-version --cluster-name shop --nodegroup-name old"}},
				Steps:  []upgrade.Step{{Title: "Update the control plane to 1.34", Commands: []string{"aws eks update-cluster-version --name shop --kubernetes-version 1.34"}}}},
			{From: "1.34", To: "1.35", Steps: []upgrade.Step{{Title: "Update the control plane to 1.35", Commands: []string{"aws eks update-cluster-version --name shop --kubernetes-version 1.35"}}}},
		},
	}
	var b strings.Builder
	if err := WriteUpgradeHTML(&b, p, []error{errors.New("listing Secrets: forbidden")}, "0.1.0-test"); err != nil {
		t.Fatal(err)
	}
	golden(t, "upgrade.html.golden", []byte(b.String()))
}
