package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"iter"
	"runtime"
	"sync"
	"sync/atomic"

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

// arrayBatch is how many elements of an array one goroutine encodes at a
// time: at 256, the batches in flight added 5 MB to the peak of a report of
// 100,000 objects and saved 60 ms of 0.8 s.
const arrayBatch = 64

// writeArray writes one of the report's arrays, the JSON of conv of each
// element of seq, as the Encoder of the whole report would (but for
// invalid UTF-8, see jsonOptions): seq is read on
// a goroutine of its own, and the elements are encoded in batches on every
// core, then written in order (a large report is mostly these arrays).
func writeArray[T, J any](out io.Writer, name string, seq iter.Seq[T], conv func(T) J) error {
	if _, err := io.WriteString(out, `  "`+name+`": [`); err != nil {
		return err
	}
	type encoded struct {
		data *bytes.Buffer
		err  error
	}
	// Four batches per core in flight besides those being read and
	// written, so that a core never waits for the one batch it must write
	// next: on two cores, a report of 100,000 objects took 0.53 s rather
	// than 0.62 s with one per core, and its peak stayed at 88-89 MB (the
	// collector's budget bounds it).
	pending := make(chan chan encoded, 4*runtime.GOMAXPROCS(0))
	// The batches' elements and buffers, used again once written: each new
	// made a quarter of what a check allocates, for the collector to free.
	var batches, buffers sync.Pool
	var stop atomic.Bool
	go func() {
		defer close(pending)
		next := func() []T {
			if b, ok := batches.Get().(*[]T); ok {
				return (*b)[:0]
			}
			return make([]T, 0, arrayBatch)
		}
		batch, first := next(), true
		flush := func() {
			ch := make(chan encoded, 1)
			pending <- ch
			go func(batch []T, first bool) {
				defer func() { clear(batch); batches.Put(&batch) }()
				buf, ok := buffers.Get().(*bytes.Buffer)
				if !ok {
					buf = new(bytes.Buffer)
				}
				buf.Reset()
				for i, v := range batch {
					if !first || i > 0 {
						buf.WriteByte(',')
					}
					buf.WriteString("\n    ")
					if err := jsonv2.MarshalWrite(buf, conv(v), elementOptions); err != nil {
						ch <- encoded{err: err}
						return
					}
				}
				ch <- encoded{data: buf}
			}(batch, first)
			batch, first = next(), false
		}
		for v := range seq {
			if stop.Load() {
				return
			}
			if batch = append(batch, v); len(batch) == arrayBatch {
				flush()
			}
		}
		if len(batch) > 0 {
			flush()
		}
	}()
	var err error
	wrote := false
	for ch := range pending { // every batch, even after an error, so that no goroutine is left
		e := <-ch
		if err == nil {
			if err = e.err; err == nil {
				_, err = out.Write(e.data.Bytes())
				wrote = true
			}
			stop.Store(err != nil)
		}
		if e.data != nil {
			buffers.Put(e.data)
		}
	}
	if err != nil {
		return err
	}
	end := "],\n"
	if wrote {
		end = "\n  ],\n"
	}
	_, err = io.WriteString(out, end)
	return err
}
