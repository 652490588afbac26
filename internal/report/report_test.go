package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/internal/spool"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

var update = flag.Bool("update", false, "rewrite golden files")

func noCheck(*rules.Context, *object.Object, *rules.Workload) []rules.Finding { return nil }

func noClusterCheck(*rules.Context, *rules.Cluster, func(rules.Finding)) {}

var (
	ruleRemovedAPI = &rules.Rule{
		ID: "DEP001", Name: "removed-api", Category: rules.CategoryDeprecation, Severity: rules.Blocker,
		Summary:     "The object uses an API version the target Kubernetes version no longer serves.",
		Doc:         "Kubernetes removes deprecated API versions; the API server rejects objects that use them.",
		Remediation: "Move the object to the replacement API version.",
		Check:       noCheck,
	}
	ruleHostNetwork = &rules.Rule{
		ID: "FG006", Name: "host-network", Category: rules.CategoryFargate, Severity: rules.Blocker,
		Summary:     "Fargate pods cannot use the host network.",
		Doc:         "Fargate runs each pod in its own micro-VM; `hostNetwork: true` is rejected.",
		Remediation: "Remove spec.hostNetwork, or keep the workload on EC2 nodes.",
		Check:       noCheck,
	}
	ruleNoPDB = &rules.Rule{
		ID: "FG101", Name: "no-disruption-budget", Category: rules.CategoryAvailability, Severity: rules.Warning,
		Summary:      "A workload with several replicas has no PodDisruptionBudget.",
		Doc:          "Fargate patches pods by evicting them; without a | budget all replicas may go at once.",
		Remediation:  "Add a PodDisruptionBudget that selects the pods.",
		Unconfirmed:  "How quickly Fargate evicts pods after a patch is announced.",
		CheckCluster: noClusterCheck,
	}
	ruleNoRequests = &rules.Rule{
		ID: "FG201", Name: "no-requests", Category: rules.CategoryCost, Severity: rules.Info,
		Summary:     "No container requests CPU or memory, so the pod gets the smallest size.",
		Doc:         "Fargate sizes a pod from its requests.",
		Remediation: "Set resources.requests on every container.",
		Check:       noCheck,
	}
	ruleUnused = &rules.Rule{
		ID: "FG007", Name: "host-port", Category: rules.CategoryFargate, Severity: rules.Blocker,
		Summary:     "Fargate pods cannot use host ports.",
		Doc:         "Host ports need a node the pod shares.",
		Remediation: "Remove hostPort.",
		Check:       noCheck,
	}
)

// sample is a report with one of everything the formats distinguish.
func sample() *Report {
	ingress := object.Ref{APIVersion: "extensions/v1beta1", Kind: "Ingress", Namespace: "prod", Name: "web"}
	web := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	report := object.Ref{APIVersion: "batch/v1", Kind: "CronJob", Namespace: "prod", Name: "report"}
	agent := object.Ref{APIVersion: "apps/v1", Kind: "DaemonSet", Namespace: "kube-system", Name: "agent"}
	big := object.Ref{APIVersion: "batch/v1", Kind: "Job", Name: "big"}

	return &Report{
		Findings: []rules.Finding{
			{
				Rule: ruleRemovedAPI, Severity: rules.Blocker, Object: ingress,
				Source: object.Source{File: "deploy/ingress.yaml", Line: 1}, Path: "apiVersion",
				Message: "Ingress extensions/v1beta1 was removed in Kubernetes 1.22; use networking.k8s.io/v1",
				Details: map[string]string{"removedIn": "1.22", "replacement": "networking.k8s.io/v1"},
			},
			{
				Rule: ruleNoRequests, Severity: rules.Info, Object: report,
				Source:  object.Source{File: "deploy/report.yaml", Line: 9},
				Path:    "spec.jobTemplate.spec.template.spec.containers[0].resources",
				Message: "no container requests CPU or memory: the pod runs at 0.25vCPU 0.5GB",
			},
			{
				Rule: ruleNoPDB, Severity: rules.Warning, Object: web,
				Source:  object.Source{File: "deploy/web.yaml", Line: 3},
				Message: "3 replicas and no PodDisruptionBudget | Fargate evicts pods to patch them",
			},
			{
				Rule: ruleHostNetwork, Severity: rules.Blocker, Object: web,
				Source: object.Source{File: "deploy/web.yaml", Line: 12}, Path: "spec.template.spec.hostNetwork",
				Message: `hostNetwork is true; Fargate profile "web" matches its pods`,
			},
		},
		Workloads: rules.NewWorkloads([]*rules.Workload{
			{
				Ref: agent, Source: object.Source{File: "deploy/agent.yaml", Line: 1}, Namespace: "kube-system", Replicas: 1,
				Placement: fargate.Placement{Reason: fargate.ReasonEC2Affinity},
				Sizing:    fargate.Sizing{RequestedMilliCPU: 100, RequestedMemoryMiB: 128, Provisioned: fargate.Size{MilliCPU: 250, MemoryMiB: 512}, EphemeralGiB: 20, Fits: true},
			},
			{
				Ref: big, Source: object.Source{File: "deploy/big.yaml", Line: 1}, Namespace: "default", Replicas: 1,
				Placement: fargate.Placement{Fargate: true, Profile: "batch", Matching: []string{"batch"}},
				Sizing:    fargate.Sizing{RequestedMilliCPU: 32000, RequestedMemoryMiB: 65536, EphemeralGiB: 20},
				Refusals:  []fargate.Refusal{{Kind: fargate.RefuseOversize}},
			},
			{
				Ref: report, Source: object.Source{File: "deploy/report.yaml", Line: 1}, Namespace: "prod", Replicas: 1,
				Placement:     fargate.Placement{Fargate: true, Profile: "prod", Matching: []string{"prod"}},
				Sizing:        fargate.Sizing{Provisioned: fargate.Size{MilliCPU: 250, MemoryMiB: 512}, EphemeralGiB: 20, Fits: true, NothingRequested: true},
				HourlyCostUSD: 0.0123425,
			},
			{
				Ref: web, Source: object.Source{File: "deploy/web.yaml", Line: 3}, Namespace: "prod", Replicas: 3,
				Placement:      fargate.Placement{Fargate: true, Profile: "web", Matching: []string{"web"}},
				Sizing:         fargate.Sizing{RequestedMilliCPU: 1500, RequestedMemoryMiB: 8192, Provisioned: fargate.Size{MilliCPU: 2000, MemoryMiB: 9216}, EphemeralGiB: 20, Fits: true},
				HourlyCostUSD:  0.362895,
				MonthlyCostUSD: 264.91335,
			},
		}...),
		Errors: []manifest.Error{
			{File: "deploy/broken.yaml", Line: 7, Message: "mapping values are not allowed in this context"},
		},
		Rules:   []*rules.Rule{ruleRemovedAPI, ruleHostNetwork, ruleUnused, ruleNoPDB, ruleNoRequests},
		Target:  "1.35",
		Region:  "us-east-1",
		Version: "0.1.0-test",
	}
}

func empty() *Report {
	return &Report{Target: "1.35", Region: "us-east-1", Version: "0.1.0-test"}
}

func write(t *testing.T, format string, r *Report, o Options) []byte {
	t.Helper()
	w, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := w(&b, r, o); err != nil {
		t.Fatalf("writing %s: %v", format, err)
	}
	return b.Bytes()
}

func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestGolden(t *testing.T) {
	for _, format := range FormatNames() {
		t.Run(format, func(t *testing.T) {
			golden(t, format+".golden", write(t, format, sample(), Options{}))
		})
		t.Run("empty/"+format, func(t *testing.T) {
			golden(t, filepath.Join("empty", format+".golden"), write(t, format, empty(), Options{}))
		})
	}
}

func TestFormatNames(t *testing.T) {
	want := []string{"html", "json", "junit", "markdown", "sarif", "text"}
	if diff := cmp.Diff(want, FormatNames()); diff != "" {
		t.Errorf("FormatNames() (-want +got):\n%s", diff)
	}
	if _, err := Lookup("yaml"); err == nil || !strings.Contains(err.Error(), "html, json, junit, markdown, sarif, text") {
		t.Errorf("Lookup(yaml) = %v, want an error naming the formats", err)
	}
}

func TestSummary(t *testing.T) {
	// web has a blocker and big fits no size, so only the CronJob would run
	// on Fargate; it runs to completion and has no monthly cost.
	want := Summary{Findings: 4, Blocker: 2, Warning: 1, Info: 1, Errors: 1, Objects: 3, FargateWorkloads: 1, MonthlyCostUSD: 0}
	if diff := cmp.Diff(want, sample().Summary()); diff != "" {
		t.Errorf("Summary() (-want +got):\n%s", diff)
	}
}

func TestTextColor(t *testing.T) {
	for _, r := range []*Report{sample(), empty()} {
		if plain := write(t, "text", r, Options{}); bytes.ContainsRune(plain, 0x1b) {
			t.Errorf("text without colour has escape sequences:\n%s", plain)
		}
	}
	colored := write(t, "text", sample(), Options{Color: true})
	for _, code := range []string{ansiRed, ansiYellow, ansiCyan, ansiBold} {
		if !bytes.Contains(colored, []byte(code)) {
			t.Errorf("text with colour lacks %q:\n%s", code, colored)
		}
	}
	// Colour must not change the text itself.
	strip := strings.NewReplacer(ansiReset, "", ansiBold, "", ansiRed, "", ansiYellow, "", ansiCyan, "")
	if diff := cmp.Diff(string(write(t, "text", sample(), Options{})), strip.Replace(string(colored))); diff != "" {
		t.Errorf("coloured text differs from plain text (-plain +stripped):\n%s", diff)
	}
}

// The mirror of the JSON contract in docs/json-output.md. Decoding with
// DisallowUnknownFields proves the output has no field the document lacks.
type contractRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

type contract struct {
	Findings []struct {
		Rule     string            `json:"rule"`
		Name     string            `json:"name"`
		Category string            `json:"category"`
		Severity string            `json:"severity"`
		Object   contractRef       `json:"object"`
		File     string            `json:"file"`
		Line     int               `json:"line"`
		Path     string            `json:"path"`
		Message  string            `json:"message"`
		Details  map[string]string `json:"details"`
	} `json:"findings"`
	Workloads []struct {
		Object              contractRef `json:"object"`
		File                string      `json:"file"`
		Line                int         `json:"line"`
		Fargate             bool        `json:"fargate"`
		Profile             string      `json:"profile"`
		Reason              string      `json:"reason"`
		CapacityProvisioned string      `json:"capacityProvisioned"`
		EphemeralStorageGiB int         `json:"ephemeralStorageGiB"`
		Replicas            int         `json:"replicas"`
		HourlyCostUSD       float64     `json:"hourlyCostUSD"`
		MonthlyCostUSD      float64     `json:"monthlyCostUSD"`
	} `json:"workloads"`
	Errors []struct {
		File    string `json:"file"`
		Line    int    `json:"line"`
		Message string `json:"message"`
	} `json:"errors"`
	Summary struct {
		Blocker          int     `json:"blocker"`
		Warning          int     `json:"warning"`
		Info             int     `json:"info"`
		Errors           int     `json:"errors"`
		FargateWorkloads int     `json:"fargateWorkloads"`
		MonthlyCostUSD   float64 `json:"monthlyCostUSD"`
	} `json:"summary"`
	Target  string `json:"target"`
	Region  string `json:"region"`
	Version string `json:"version"`
}

// required lists the keys that are always present, per JSON object.
var required = map[string][]string{
	"":        {"findings", "workloads", "errors", "summary", "target", "region", "version"},
	"finding": {"rule", "name", "category", "severity", "object", "file", "line", "message"},
	"object":  {"apiVersion", "kind", "name"},
	"workload": {"object", "file", "line", "fargate", "profile", "reason", "capacityProvisioned",
		"ephemeralStorageGiB", "replicas", "hourlyCostUSD", "monthlyCostUSD"},
	"error":   {"file", "line", "message"},
	"summary": {"blocker", "warning", "info", "errors", "fargateWorkloads", "monthlyCostUSD"},
}

func hasKeys(t *testing.T, what string, v any) {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s is %T, want an object", what, v)
	}
	for _, k := range required[what] {
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q: %v", what, k, m)
		}
	}
}

func TestJSONContract(t *testing.T) {
	for name, r := range map[string]*Report{"sample": sample(), "empty": empty()} {
		t.Run(name, func(t *testing.T) {
			out := write(t, "json", r, Options{})
			if !bytes.HasSuffix(out, []byte("}\n")) || !bytes.HasPrefix(out, []byte("{\n  \"")) {
				t.Errorf("output is not indented by two spaces with a trailing newline:\n%s", out)
			}

			var c contract
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&c); err != nil {
				t.Fatalf("output does not match the contract: %v\n%s", err, out)
			}
			s := r.Summary()
			if len(c.Findings) != len(r.Findings) || len(c.Workloads) != r.Workloads.Len() || len(c.Errors) != len(r.Errors) ||
				c.Summary.Blocker != s.Blocker || c.Summary.Errors != s.Errors || c.Target != r.Target {
				t.Errorf("decoded report does not match the input: %+v", c)
			}

			var doc map[string]any
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			hasKeys(t, "", doc)
			hasKeys(t, "summary", doc["summary"])
			for _, key := range []string{"findings", "workloads", "errors"} {
				if _, ok := doc[key].([]any); !ok {
					t.Errorf("%s is %v, want an array ([] when empty)", key, doc[key])
				}
			}
			for _, f := range doc["findings"].([]any) {
				hasKeys(t, "finding", f)
				hasKeys(t, "object", f.(map[string]any)["object"])
			}
			for _, w := range doc["workloads"].([]any) {
				hasKeys(t, "workload", w)
				hasKeys(t, "object", w.(map[string]any)["object"])
			}
			for _, e := range doc["errors"].([]any) {
				hasKeys(t, "error", e)
			}
		})
	}
}

func TestJSONValues(t *testing.T) {
	var c contract
	if err := json.Unmarshal(write(t, "json", sample(), Options{}), &c); err != nil {
		t.Fatal(err)
	}
	dep := c.Findings[0]
	if dep.Severity != "blocker" || dep.Category != "deprecation" || dep.Details["removedIn"] != "1.22" || dep.Path != "apiVersion" {
		t.Errorf("deprecation finding = %+v", dep)
	}
	if pdb := c.Findings[2]; pdb.Path != "" || pdb.Details != nil {
		t.Errorf("finding without path or details = %+v, want them omitted", pdb)
	}
	byName := map[string]int{}
	for i, w := range c.Workloads {
		byName[w.Object.Name] = i
	}
	web, agent, big, rep := c.Workloads[byName["web"]], c.Workloads[byName["agent"]], c.Workloads[byName["big"]], c.Workloads[byName["report"]]
	if web.CapacityProvisioned != "2vCPU 9GB" || web.HourlyCostUSD != 0.3629 || web.MonthlyCostUSD != 264.91 || web.Profile != "web" || web.Reason != "" {
		t.Errorf("Fargate workload = %+v", web)
	}
	if agent.Fargate || agent.Reason == "" || agent.CapacityProvisioned != "" || agent.HourlyCostUSD != 0 {
		t.Errorf("EC2 workload = %+v", agent)
	}
	if !big.Fargate || big.CapacityProvisioned != "" || big.MonthlyCostUSD != 0 || big.Object.Namespace != "" {
		t.Errorf("workload that does not fit = %+v", big)
	}
	if rep.HourlyCostUSD != 0.0123 || rep.MonthlyCostUSD != 0 {
		t.Errorf("CronJob = %+v", rep)
	}
	if c.Summary.FargateWorkloads != 1 || c.Summary.MonthlyCostUSD != 0 {
		t.Errorf("summary = %+v", c.Summary)
	}
}

// sarifLog is the part of SARIF 2.1.0 the checks below read.
type sarifLog struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           string `json:"name"`
				InformationURI string `json:"informationUri"`
				Version        string `json:"version"`
				Rules          []struct {
					ID               string `json:"id"`
					Name             string `json:"name"`
					ShortDescription struct {
						Text string `json:"text"`
					} `json:"shortDescription"`
					FullDescription struct {
						Text string `json:"text"`
					} `json:"fullDescription"`
					Help struct {
						Text     string `json:"text"`
						Markdown string `json:"markdown"`
					} `json:"help"`
					DefaultConfiguration struct {
						Level string `json:"level"`
					} `json:"defaultConfiguration"`
					Properties struct {
						Tags []string `json:"tags"`
					} `json:"properties"`
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Results []struct {
			RuleID    string `json:"ruleId"`
			RuleIndex *int   `json:"ruleIndex"`
			Level     string `json:"level"`
			Message   struct {
				Text string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
		} `json:"results"`
		Invocations []struct {
			ExecutionSuccessful        *bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level   string `json:"level"`
				Message struct {
					Text string `json:"text"`
				} `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
	} `json:"runs"`
}

func TestSARIF(t *testing.T) {
	r := sample()
	r.Findings = append(r.Findings, rules.Finding{
		Rule: ruleHostNetwork, Severity: rules.Blocker, Object: r.Findings[3].Object,
		Source: object.Source{File: "/abs/dir/web 2.yaml"}, Message: "unknown line",
	})
	var log sarifLog
	if err := json.Unmarshal(write(t, "sarif", r, Options{}), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || log.Schema != sarifSchema || len(log.Runs) != 1 {
		t.Fatalf("version %q, schema %q, %d runs", log.Version, log.Schema, len(log.Runs))
	}
	run := log.Runs[0]
	if d := run.Tool.Driver; d.Name != "fargatekit" || d.InformationURI != toolURI || d.Version != "0.1.0-test" {
		t.Errorf("driver = %+v", d)
	}
	var ids []string
	for _, rule := range run.Tool.Driver.Rules {
		ids = append(ids, rule.ID)
		if rule.ShortDescription.Text == "" || rule.FullDescription.Text == "" || rule.Help.Text == "" || rule.Help.Markdown == "" ||
			rule.DefaultConfiguration.Level == "" || len(rule.Properties.Tags) != 1 {
			t.Errorf("rule %s is incomplete: %+v", rule.ID, rule)
		}
	}
	if want := []string{"DEP001", "FG006", "FG007", "FG101", "FG201"}; !cmp.Equal(want, ids) {
		t.Errorf("driver rules = %v, want %v", ids, want)
	}
	if len(run.Results) != len(r.Findings) {
		t.Fatalf("%d results, want %d", len(run.Results), len(r.Findings))
	}
	for i, res := range run.Results {
		if !slices.Contains(ids, res.RuleID) || res.RuleIndex == nil || ids[*res.RuleIndex] != res.RuleID {
			t.Errorf("result %d: ruleId %q (index %v) is not among the driver rules", i, res.RuleID, res.RuleIndex)
		}
		if len(res.Locations) != 1 || res.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("result %d: locations %+v, want one with startLine >= 1", i, res.Locations)
		}
		if want := level(r.Findings[i].Severity); res.Level != want {
			t.Errorf("result %d: level %q, want %q", i, res.Level, want)
		}
	}
	rel, abs := run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation, run.Results[4].Locations[0].PhysicalLocation.ArtifactLocation
	if rel.URI != "deploy/ingress.yaml" || rel.URIBaseID != "%SRCROOT%" {
		t.Errorf("relative location = %+v", rel)
	}
	if abs.URI != "file:///abs/dir/web%202.yaml" || abs.URIBaseID != "" {
		t.Errorf("absolute location = %+v", abs)
	}
	if len(run.Invocations) != 1 || run.Invocations[0].ExecutionSuccessful == nil || *run.Invocations[0].ExecutionSuccessful ||
		len(run.Invocations[0].ToolExecutionNotifications) != 1 {
		t.Errorf("invocations = %+v, want one unsuccessful with one notification", run.Invocations)
	}

	if err := json.Unmarshal(write(t, "sarif", empty(), Options{}), &log); err != nil {
		t.Fatal(err)
	}
	if inv := log.Runs[0].Invocations; len(inv) != 1 || inv[0].ExecutionSuccessful == nil || !*inv[0].ExecutionSuccessful {
		t.Errorf("empty report invocations = %+v, want one successful", inv)
	}
}

func TestArtifactLocation(t *testing.T) {
	for _, tc := range []struct{ file, uri, base string }{
		{"deploy/web.yaml", "deploy/web.yaml", "%SRCROOT%"},
		{"./deploy/web.yaml", "deploy/web.yaml", "%SRCROOT%"},
		{`deploy\web.yaml`, "deploy/web.yaml", "%SRCROOT%"},
		{"a b/c:d.yaml", "a%20b/c:d.yaml", "%SRCROOT%"},
		{"/srv/app/web.yaml", "file:///srv/app/web.yaml", ""},
		{"C:/app/web.yaml", "file:///C:/app/web.yaml", ""},
	} {
		if filepath.Separator != '\\' && strings.Contains(tc.file, `\`) {
			continue // filepath.ToSlash converts only the OS separator
		}
		loc := artifactLocation(tc.file)
		base := ""
		if loc.URIBaseId != nil {
			base = *loc.URIBaseId
		}
		if *loc.URI != tc.uri || base != tc.base {
			t.Errorf("artifactLocation(%q) = %q base %q, want %q base %q", tc.file, *loc.URI, base, tc.uri, tc.base)
		}
	}
}

type junitDoc struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Cases    []struct {
			ClassName string `xml:"classname,attr"`
			Name      string `xml:"name,attr"`
			Failures  []struct {
				Type    string `xml:"type,attr"`
				Message string `xml:"message,attr"`
			} `xml:"failure"`
			Errors    []struct{} `xml:"error"`
			SystemOut string     `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestJUnit(t *testing.T) {
	for _, tc := range []struct {
		name                    string
		r                       *Report
		tests, failures, errors int
		failureElements         int
	}{
		// Cases: ingress, web, report (info only), agent, big, and the input error.
		{"sample", sample(), 6, 2, 1, 3},
		{"empty", empty(), 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := write(t, "junit", tc.r, Options{})
			dec := xml.NewDecoder(bytes.NewReader(out))
			for { // well-formed from start to end
				if _, err := dec.Token(); err != nil {
					if err.Error() != "EOF" {
						t.Fatalf("not well-formed XML: %v\n%s", err, out)
					}
					break
				}
			}
			var doc junitDoc
			if err := xml.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Suites) != 1 || doc.Suites[0].Name != "fargatekit" {
				t.Fatalf("want one testsuite named fargatekit, got %+v", doc.Suites)
			}
			s := doc.Suites[0]
			var cases, failing, failures, errs int
			for _, c := range s.Cases {
				cases++
				failures += len(c.Failures)
				if len(c.Failures) > 0 {
					failing++
				}
				errs += len(c.Errors)
			}
			if s.Tests != tc.tests || cases != tc.tests || s.Failures != tc.failures || failing != tc.failures ||
				s.Errors != tc.errors || errs != tc.errors || failures != tc.failureElements {
				t.Errorf("tests=%d (%d cases) failures=%d (%d failing cases, %d elements) errors=%d (%d elements); want %d, %d (%d elements), %d",
					s.Tests, cases, s.Failures, failing, failures, s.Errors, errs, tc.tests, tc.failures, tc.failureElements, tc.errors)
			}
			if doc.Tests != s.Tests || doc.Failures != s.Failures || doc.Errors != s.Errors {
				t.Errorf("testsuites counts %d/%d/%d differ from the testsuite's", doc.Tests, doc.Failures, doc.Errors)
			}
		})
	}
}

func TestMarkdownCell(t *testing.T) {
	if got, want := cell("a|b\n<stdin> & c"), `a\|b<br>&lt;stdin&gt; &amp; c`; got != want {
		t.Errorf("cell() = %q, want %q", got, want)
	}
	md := string(write(t, "markdown", sample(), Options{}))
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 6 && n != 7 {
			t.Errorf("table row has %d unescaped pipes: %s", n, line)
		}
	}
}

// TestJSONDocExample keeps the example in docs/json-output.md in step with
// the contract.
func TestJSONDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "json-output.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Example\n\n```json\n")
	example, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("docs/json-output.md has no ```json block under ## Example")
	}
	var c contract
	dec := json.NewDecoder(strings.NewReader(example))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("the example does not match the contract: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(example), &m); err != nil {
		t.Fatal(err)
	}
	hasKeys(t, "", m)
	hasKeys(t, "summary", m["summary"])
	for _, f := range m["findings"].([]any) {
		hasKeys(t, "finding", f)
	}
	for _, w := range m["workloads"].([]any) {
		hasKeys(t, "workload", w)
	}
}

// TestJSONStream: the JSON writer, which writes a finding and a workload at
// a time, writes the bytes json.Encoder writes of the whole report.
func TestJSONStream(t *testing.T) {
	// Many elements, written one at a time.
	large := sample()
	ws := slices.Collect(large.Workloads.All())
	for i := range 199 {
		f := large.Findings[i%len(large.Findings)]
		f.Source.Line, f.Message = i, fmt.Sprint(f.Message, " ", i)
		large.Findings = append(large.Findings, f)
		w := *ws[i%len(ws)]
		w.Source.Line = i
		large.Workloads.Add(&w)
	}
	for name, r := range map[string]*Report{"sample": sample(), "empty": empty(), "large": large} {
		if diff := cmp.Diff(encodeWhole(t, r), string(write(t, "json", r, Options{}))); diff != "" {
			t.Errorf("%s (-json.Encoder +writeJSON):\n%s", name, diff)
		}
	}
}

// TestSpilledReport: every format writes the same report whether its
// findings are in Findings or spilled to disk (check's spool, here in runs
// of a few findings).
func TestSpilledReport(t *testing.T) {
	for _, format := range FormatNames() {
		r := sample()
		want := write(t, format, r, Options{})
		var rs []*rules.Rule
		for _, f := range r.Findings {
			rs = append(rs, f.Rule)
		}
		found := spool.New(rs)
		found.Limit, found.Dir = 600, t.TempDir()
		for _, f := range slices.Backward(r.Findings) { // out of order: the spool sorts
			found.Add(f)
		}
		r.Findings, r.Spilled = nil, found.All()
		if diff := cmp.Diff(string(want), string(write(t, format, r, Options{}))); diff != "" || found.Err() != nil {
			t.Errorf("%s: %v (-in memory +spilled):\n%s", format, found.Err(), diff)
		}
		if err := found.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSummarySpilled: the objects with findings are counted once each,
// whether the findings are in memory or spilled (read by file), with the
// findings of two objects of one file interleaved, and one name in two files.
func TestSummarySpilled(t *testing.T) {
	a := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "a"}
	b := object.Ref{APIVersion: "v1", Kind: "Service", Namespace: "shop", Name: "b"}
	at := func(ref object.Ref, file string, line int) rules.Finding {
		return rules.Finding{Rule: ruleNoPDB, Severity: rules.Warning, Object: ref, Source: object.Source{File: file, Line: line}, Message: "m"}
	}
	in := []rules.Finding{at(a, "one.yaml", 1), at(b, "one.yaml", 5), at(a, "one.yaml", 9), at(a, "two.yaml", 1), at(b, "one.yaml", 12)}
	found := spool.New([]*rules.Rule{ruleNoPDB})
	found.Limit, found.Dir = 300, t.TempDir()
	t.Cleanup(func() {
		if err := found.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, f := range in {
		found.Add(f)
	}
	memory, spilled := (&Report{Findings: in}).Summary(), (&Report{Spilled: found.All()}).Summary()
	if memory.Objects != 3 || spilled.Objects != 3 || found.Err() != nil {
		t.Errorf("objects: %d in memory, %d spilled (%v); want 3", memory.Objects, spilled.Objects, found.Err())
	}
}

// encodeWhole writes a report as encoding/json's Encoder does, in one piece.
func encodeWhole(t *testing.T, r *Report) string {
	t.Helper()
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(toJSON(r)); err != nil {
		t.Fatal(err)
	}
	return rawReplacement(want.String())
}

// rawReplacement writes the escapes \ufffd that encoding/json writes for
// invalid UTF-8 as the character itself, which is how the report's arrays
// are written (elementOptions): the same JSON string, other bytes.
func rawReplacement(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], `\ufffd`):
			b.WriteString("\ufffd")
			i += len(`\ufffd`) - 1
		case s[i] == '\\' && i+1 < len(s): // an escape, \\ among them: copied whole
			b.WriteString(s[i : i+2])
			i++
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// FuzzJSONStream holds the streamed JSON report, written an element at a
// time, to encoding/json's bytes of the whole report for any text and any
// price: escapes, invalid UTF-8, number formats.
func FuzzJSONStream(f *testing.F) {
	f.Add("<b>&amp;</b> \u2028\u2029 \xff\x01", "a.b/c", "\t", 12, 0.1+0.2, 1e21)
	f.Add("", "", "", 0, 0.0, 1e-7)
	f.Fuzz(func(t *testing.T, message, key, value string, line int, hourly, monthly float64) {
		if math.IsNaN(hourly) || math.IsInf(hourly, 0) || math.IsNaN(monthly) || math.IsInf(monthly, 0) {
			return // not a price
		}
		ref := object.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: value, Name: message}
		r := &Report{
			Findings: []rules.Finding{{
				Rule: ruleNoPDB, Severity: rules.Warning, Object: ref, Source: object.Source{File: key, Line: line},
				Path: value, Message: message, Details: map[string]string{key: value, "z" + key: message},
			}},
			Workloads: rules.NewWorkloads([]*rules.Workload{{
				Ref: ref, Source: object.Source{File: key, Line: line}, Replicas: line,
				Placement: fargate.Placement{Fargate: true, Profile: value, Reason: message},
				Sizing:    fargate.Sizing{Fits: true, EphemeralGiB: int64(line)}, HourlyCostUSD: hourly, MonthlyCostUSD: monthly,
			}}...),
		}
		if diff := cmp.Diff(encodeWhole(t, r), string(write(t, "json", r, Options{}))); diff != "" {
			t.Errorf("(-json.Encoder +writeJSON):\n%s", diff)
		}
	})
}
