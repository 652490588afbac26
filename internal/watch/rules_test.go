package watch

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// metricNames are the metrics watch publishes.
var metricNames = []string{findingsMetric, podsMetric, costMetric, zonePodsMetric, lastAnalysisMetric, eksErrorsMetric, durationMetric, repairsMetric}

// rulesFile is the alerting rules on watch's metrics.
var rulesFile = filepath.Join("..", "..", "deploy", "prometheus", "fargatekit-rules.yaml")

type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// TestAlertRules: every alert names only metrics watch publishes, has a
// severity, a summary, a description and a runbook that is a section of
// docs/watch.md, and the alerts issue 47 names are there.
func TestAlertRules(t *testing.T) {
	data, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var rg ruleGroups
	if err := yaml.UnmarshalStrict(data, &rg); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "watch.md"))
	if err != nil {
		t.Fatal(err)
	}
	ours := metricNames
	metricName := regexp.MustCompile(`fargatekit_[a-z_]+`)
	var alerts []string
	for _, g := range rg.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			for _, m := range metricName.FindAllString(r.Expr, -1) {
				if !slices.Contains(ours, m) {
					t.Errorf("%s: %s is no metric of watch", r.Alert, m)
				}
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: severity %q, summary %q, description %q: want all three", r.Alert, r.Labels["severity"], r.Annotations["summary"], r.Annotations["description"])
			}
			const base = "https://github.com/fargatekit/fargatekit/blob/main/docs/watch.md#"
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], base)
			if !ok || !strings.Contains(strings.ToLower(string(doc)), "\n### "+anchor+"\n") {
				t.Errorf("%s: runbook %q is not a ### section of docs/watch.md", r.Alert, r.Annotations["runbook_url"])
			}
		}
	}
	for _, want := range []string{"FargatekitPodsOffFargate", "FargatekitPodsRefused", "FargatekitAZSkew", "FargatekitSubnetHeadroom", "FargatekitKubeletBehind", "FargatekitWatchDown"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
		}
	}
}

// TestPromtoolRules runs `promtool test rules` on the rules' tests: each
// alert fires when it should and a near miss does not. promtool comes from
// FARGATEKIT_PROMTOOL (hack/tools.sh promtool builds it; make test sets it).
func TestPromtoolRules(t *testing.T) {
	promtool := os.Getenv("FARGATEKIT_PROMTOOL")
	if promtool == "" {
		const how = "FARGATEKIT_PROMTOOL is not set: export FARGATEKIT_PROMTOOL=$(hack/tools.sh promtool), or run `make test`"
		if os.Getenv("FARGATEKIT_INTEGRATION") == "required" {
			t.Fatal(how)
		}
		t.Skip(how)
	}
	cmd := exec.Command(promtool, "test", "rules", "fargatekit-rules_test.yaml")
	cmd.Dir = filepath.Dir(rulesFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// TestDashboard: the Grafana dashboard is JSON whose panels query only
// metrics watch publishes, and each panel has a query.
func TestDashboard(t *testing.T) {
	path := filepath.Join("..", "..", "deploy", "grafana", "fargatekit-dashboard.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	metricName := regexp.MustCompile(`fargatekit_[a-z_]+`)
	exprs := map[string]string{}
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs[p.Title] = tg.Expr
		}
	}
	for _, v := range d.Templating.List {
		exprs["variable"] += v.Definition
	}
	for title, expr := range exprs {
		names := metricName.FindAllString(expr, -1)
		if len(names) == 0 && title != "variable" {
			t.Errorf("panel %q queries no metric of watch: %s", title, expr)
		}
		for _, m := range names {
			if !slices.Contains(metricNames, m) {
				t.Errorf("panel %q: %s is no metric of watch", title, m)
			}
		}
	}
}
