package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// The JSON output is a public contract, documented in docs/json-output.md:
// fields are only added, never renamed or removed, within a major version.
// These types are its only definition; keep the document in step.

type jsonReport struct {
	Findings  []jsonFinding  `json:"findings"`
	Workloads []jsonWorkload `json:"workloads"`
	jsonRest
}

// jsonRest is the report after its two long arrays, which writeJSON
// writes one element at a time.
type jsonRest struct {
	Errors  []jsonError  `json:"errors"`
	Summary jsonSummary  `json:"summary"`
	Target  string       `json:"target"`
	Region  string       `json:"region"`
	Version string       `json:"version"`
	Plan    *jsonPlan    `json:"plan,omitempty"`
	Cluster *jsonCluster `json:"cluster,omitempty"`
}

type jsonRef struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
}

type jsonFinding struct {
	Rule     string            `json:"rule"`
	Name     string            `json:"name"`
	Category string            `json:"category"`
	Severity string            `json:"severity"`
	Object   jsonRef           `json:"object"`
	File     string            `json:"file"`
	Line     int               `json:"line"`
	Path     string            `json:"path,omitempty"`
	Message  string            `json:"message"`
	Details  map[string]string `json:"details,omitempty"`
}

type jsonWorkload struct {
	Object              jsonRef `json:"object"`
	File                string  `json:"file"`
	Line                int     `json:"line"`
	Fargate             bool    `json:"fargate"`
	Profile             string  `json:"profile"`
	Reason              string  `json:"reason"`
	CapacityProvisioned string  `json:"capacityProvisioned"`
	EphemeralStorageGiB int64   `json:"ephemeralStorageGiB"`
	Replicas            int     `json:"replicas"`
	HourlyCostUSD       float64 `json:"hourlyCostUSD"`
	MonthlyCostUSD      float64 `json:"monthlyCostUSD"`
}

type jsonError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

type jsonSummary struct {
	Blocker          int     `json:"blocker"`
	Warning          int     `json:"warning"`
	Info             int     `json:"info"`
	Errors           int     `json:"errors"`
	FargateWorkloads int     `json:"fargateWorkloads"`
	MonthlyCostUSD   float64 `json:"monthlyCostUSD"`
}

func toJSONRef(r object.Ref) jsonRef {
	return jsonRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// toJSON converts a report to the contract's shape; arrays are never nil.
func toJSON(r *Report) jsonReport {
	out := jsonReport{
		Findings:  []jsonFinding{},
		Workloads: make([]jsonWorkload, 0, r.Workloads.Len()),
		jsonRest:  restJSON(r, r.Summary()),
	}
	for f := range r.findings() {
		out.Findings = append(out.Findings, findingJSON(f))
	}
	for w := range r.Workloads.Sorted() {
		out.Workloads = append(out.Workloads, workloadJSON(w))
	}
	return out
}

func findingJSON(f rules.Finding) jsonFinding {
	jf := jsonFinding{
		Rule:     ruleID(f),
		Name:     ruleName(f),
		Category: string(ruleCategory(f)),
		Severity: f.Severity.String(),
		Object:   toJSONRef(f.Object),
		File:     f.Source.File,
		Line:     f.Source.Line,
		Path:     f.Path,
		Message:  f.Message,
	}
	if len(f.Details) > 0 {
		jf.Details = f.Details
	}
	return jf
}

func workloadJSON(w *rules.Workload) jsonWorkload {
	return jsonWorkload{
		Object:              toJSONRef(w.Ref),
		File:                w.Source.File,
		Line:                w.Source.Line,
		Fargate:             w.Placement.Fargate,
		Profile:             w.Placement.Profile,
		Reason:              w.Placement.Reason,
		CapacityProvisioned: capacity(w),
		EphemeralStorageGiB: w.Sizing.EphemeralGiB,
		Replicas:            w.Replicas,
		HourlyCostUSD:       hourly(w),
		MonthlyCostUSD:      monthly(w),
	}
}

func restJSON(r *Report, s Summary) jsonRest {
	out := jsonRest{
		Errors: make([]jsonError, 0, len(r.Errors)),
		Summary: jsonSummary{
			Blocker: s.Blocker, Warning: s.Warning, Info: s.Info, Errors: s.Errors,
			FargateWorkloads: s.FargateWorkloads, MonthlyCostUSD: s.MonthlyCostUSD,
		},
		Target:  r.Target,
		Region:  r.Region,
		Version: r.Version,
	}
	for _, e := range r.Errors {
		out.Errors = append(out.Errors, jsonError{File: e.File, Line: e.Line, Message: e.Message})
	}
	if r.Plan != nil {
		out.Plan = r.Plan.toJSON()
	}
	if r.Cluster != nil {
		out.Cluster = r.Cluster.toJSON()
	}
	return out
}

// writeJSON writes the report as the JSON contract, indented by two spaces:
// the bytes json.Encoder writes of toJSON(r) (but for invalid UTF-8, see
// jsonOptions), one finding and one workload at a time, so that a large
// report is never held twice in memory.
func writeJSON(w io.Writer, r *Report, _ Options) error {
	out := bufio.NewWriterSize(w, 64<<10)
	err := writeJSONTo(out, r)
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		return fmt.Errorf("writing the json report: %w", err)
	}
	return nil
}

func writeJSONTo(out *bufio.Writer, r *Report) error {
	if _, err := out.WriteString("{\n"); err != nil {
		return err
	}
	// The summary, which comes last, counts what the arrays are written
	// of: the findings are read once (from the spool, decoded on one core).
	z := r.newSummarizer()
	if err := writeArray(out, "findings", tap(r.findings(), z.finding), findingJSON); err != nil {
		return err
	}
	if err := writeArray(out, "workloads", tap(r.Workloads.Sorted(), z.workload), workloadJSON); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := jsonv2.MarshalWrite(&buf, restJSON(r, z.summary()), jsonOptions("")); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := out.Write(bytes.TrimPrefix(buf.Bytes(), []byte("{\n")))
	return err
}

// tap yields seq, giving each element to f first.
func tap[T any](seq iter.Seq[T], f func(T)) iter.Seq[T] {
	return func(yield func(T) bool) {
		for v := range seq {
			f(v)
			if !yield(v) {
				return
			}
		}
	}
}

// jsonOptions write JSON as encoding/json's Encoder does with
// SetIndent(prefix, "  ") and SetEscapeHTML(false), but in one pass
// (encoding/json indents in a second pass over the bytes it wrote, which
// took 40% of the time of writing a large report), and invalid UTF-8 as the
// replacement character itself, where encoding/json writes its escape.
func jsonOptions(prefix string) jsonv2.Options {
	return jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(),
		jsontext.WithIndentPrefix(prefix), jsontext.WithIndent("  "), jsontext.EscapeForHTML(false))
}

// elementOptions write an element of the report's arrays.
var elementOptions = jsonOptions("    ")

// writeArray writes one of the report's arrays, the JSON of conv of each
// element of seq, one element at a time, as the Encoder of the whole report
// would (but for invalid UTF-8, see jsonOptions).
func writeArray[T, J any](out io.Writer, name string, seq iter.Seq[T], conv func(T) J) error {
	if _, err := io.WriteString(out, `  "`+name+`": [`); err != nil {
		return err
	}
	var buf bytes.Buffer
	wrote := false
	for v := range seq {
		buf.Reset()
		if wrote {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		if err := jsonv2.MarshalWrite(&buf, conv(v), elementOptions); err != nil {
			return err
		}
		if _, err := out.Write(buf.Bytes()); err != nil {
			return err
		}
		wrote = true
	}
	end := "],\n"
	if wrote {
		end = "\n  ],\n"
	}
	_, err := io.WriteString(out, end)
	return err
}
