package report

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/owenrumney/go-sarif/v2/sarif"

	"github.com/fargatekit/fargatekit/pkg/object"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// SARIF constants. The schema is the one GitHub's documentation names.
const (
	sarifSchema  = "https://json.schemastore.org/sarif-2.1.0.json"
	toolName     = "fargatekit"
	toolURI      = "https://github.com/fargatekit/fargatekit"
	srcRootBase  = "%SRCROOT%"
	sarifVersion = sarif.Version210
)

// level maps a severity to a SARIF level.
func level(s rules.Severity) string {
	switch s {
	case rules.Blocker:
		return "error"
	case rules.Warning:
		return "warning"
	}
	return "note"
}

// writeSARIF writes a SARIF 2.1.0 log with one run, as GitHub code scanning
// accepts it: every result has a rule in tool.driver.rules and a location
// with startLine >= 1; input errors are tool execution notifications.
func writeSARIF(w io.Writer, r *Report, _ Options) error {
	sl, err := sarif.New(sarifVersion, false)
	if err != nil {
		return fmt.Errorf("writing the sarif report: %w", err)
	}
	sl.Schema = sarifSchema

	driver := sarif.NewDriver(toolName).WithInformationURI(toolURI)
	if r.Version != "" {
		driver.WithVersion(r.Version)
	}
	run := sarif.NewRun(*sarif.NewTool(driver))

	known := map[string]bool{}
	addRule := func(rule *rules.Rule) {
		if rule == nil || known[rule.ID] {
			return
		}
		known[rule.ID] = true
		driver.AddRule(sarifRule(rule))
	}
	for _, rule := range r.Rules {
		addRule(rule)
	}
	for f := range r.findings() {
		addRule(f.Rule) // a rule missing from r.Rules still gets a descriptor
	}

	for f := range r.findings() {
		if f.Rule == nil {
			continue
		}
		res := sarif.NewRuleResult(f.Rule.ID).
			WithLevel(level(f.Severity)).
			WithMessage(sarif.NewTextMessage(f.Message)).
			WithLocations([]*sarif.Location{sarifLocation(f.Source)})
		props := sarif.Properties{"object": f.Object.String()}
		if f.Path != "" {
			props["path"] = f.Path
		}
		if len(f.Details) > 0 {
			props["details"] = f.Details
		}
		res.Properties = props
		run.AddResult(res)
	}

	inv := run.AddInvocation(len(r.Errors) == 0)
	for _, e := range r.Errors {
		n := sarif.NewNotification().WithLevel("error").WithTextMessage(e.Message)
		loc := sarif.NewPhysicalLocation().WithArtifactLocation(artifactLocation(e.File))
		if e.Line > 0 {
			loc.WithRegion(sarif.NewRegion().WithStartLine(e.Line))
		}
		n.AddLocation(sarif.NewLocation().WithPhysicalLocation(loc))
		inv.AddTToolExecutionNotification(n)
	}
	sl.AddRun(run)

	var b bytes.Buffer
	if err := sl.PrettyWrite(&b); err != nil {
		return fmt.Errorf("writing the sarif report: %w", err)
	}
	b.WriteByte('\n')
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("writing the sarif report: %w", err)
	}
	return nil
}

func sarifRule(rule *rules.Rule) *sarif.ReportingDescriptor {
	text := rule.Doc + "\n\nRemediation: " + rule.Remediation
	md := rule.Doc + "\n\n**Remediation:** " + rule.Remediation
	if rule.Unconfirmed != "" {
		text += "\n\nUnconfirmed: " + rule.Unconfirmed
		md += "\n\n**Unconfirmed:** " + rule.Unconfirmed
	}
	d := sarif.NewRule(rule.ID).
		WithName(rule.Name).
		WithShortDescription(sarif.NewMultiformatMessageString(rule.Summary)).
		WithFullDescription(sarif.NewMultiformatMessageString(rule.Doc)).
		WithHelp(sarif.NewMultiformatMessageString(text).WithMarkdown(md)).
		WithHelpURI(RuleURL(rule)).
		WithDefaultConfiguration(sarif.NewReportingConfiguration().WithLevel(level(rule.Severity)))
	d.Properties = sarif.Properties{"tags": []string{string(rule.Category)}}
	return d
}

// sarifLocation points at a file and line; SARIF consumers such as GitHub
// require startLine >= 1, so an unknown line becomes the first.
func sarifLocation(s object.Source) *sarif.Location {
	return sarif.NewLocation().WithPhysicalLocation(
		sarif.NewPhysicalLocation().
			WithArtifactLocation(artifactLocation(s.File)).
			WithRegion(sarif.NewRegion().WithStartLine(max(s.Line, 1))))
}

var windowsDrive = regexp.MustCompile(`^[A-Za-z]:/`)

// artifactLocation turns a file path as given into a URI: relative paths
// keep forward slashes and are resolved against %SRCROOT%, absolute paths
// become file URIs.
func artifactLocation(file string) *sarif.ArtifactLocation {
	p := filepath.ToSlash(file)
	if strings.HasPrefix(p, "/") || windowsDrive.MatchString(p) {
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		return sarif.NewSimpleArtifactLocation((&url.URL{Scheme: "file", Path: p}).String())
	}
	p = path.Clean(p)
	return sarif.NewSimpleArtifactLocation((&url.URL{Path: p}).String()).WithUriBaseId(srcRootBase)
}
