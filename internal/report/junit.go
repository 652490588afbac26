package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string         `xml:"classname,attr"`
	Name      string         `xml:"name,attr"`
	Failures  []junitFailure `xml:"failure"`
	Error     *junitFailure  `xml:"error"`
	SystemOut string         `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes one test suite with a test case per workload and per
// other object with findings, a failure per blocker or warning, info
// findings as system-out, and a test case with an error per input error.
// The counts are of test cases: failures counts the cases with at least
// one failure.
func writeJUnit(w io.Writer, r *Report, _ Options) error {
	suite := junitSuite{Name: toolName}
	for _, p := range []junitProperty{{"target", r.Target}, {"region", r.Region}, {"version", r.Version}} {
		if p.Value != "" {
			suite.Properties = append(suite.Properties, p)
		}
	}
	for _, e := range entries(r, true) {
		c := junitCase{ClassName: e.source.File, Name: e.ref.String()}
		var out []string
		for _, f := range e.findings {
			head := fmt.Sprintf("%s %s %s at %s", strings.ToUpper(f.Severity.String()), ruleID(f), ruleName(f), location(f.Source))
			if f.Path != "" {
				head += " (" + f.Path + ")"
			}
			if f.Severity < rules.Warning {
				out = append(out, head+": "+f.Message)
				continue
			}
			text := head + "\n" + f.Message
			if f.Rule != nil && f.Rule.Remediation != "" {
				text += "\nRemediation: " + f.Rule.Remediation
			}
			c.Failures = append(c.Failures, junitFailure{Type: ruleID(f), Message: f.Message, Text: text})
		}
		if len(out) > 0 {
			c.SystemOut = strings.Join(out, "\n")
		}
		if len(c.Failures) > 0 {
			suite.Failures++
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, e := range r.Errors {
		suite.Cases = append(suite.Cases, junitCase{
			ClassName: e.File,
			Name:      "input " + location(object.Source{File: e.File, Line: e.Line}),
			Error:     &junitFailure{Type: "input", Message: e.Message, Text: e.Error()},
		})
		suite.Errors++
	}
	suite.Tests = len(suite.Cases)
	doc := junitSuites{Name: toolName, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors, Suites: []junitSuite{suite}}

	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing the junit report: %w", err)
	}
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the junit report: %w", err)
	}
	return nil
}
