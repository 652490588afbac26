package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/plan"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

func TestParse(t *testing.T) {
	s, err := Parse([]byte("disable: [FG041, job-without-ttl]\nseverity: {affinity-ignored: info}\nignorePaths: ['vendor/**']\n" +
		"allowedCapabilities: []\nrefusePrivilegeEscalation: true\nazChoice: balanced\nhonourZoneSelector: true\nlimits: {selectorsPerProfile: 10}\n" +
		"invalidLogging: enabled\nazOutage: fail\n" +
		"upgrade: {fargateNodesBehind: allow, readinessErrors: allow}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"FG041": true, "FG040": true}, s.Disabled); diff != "" {
		t.Errorf("disabled (-want +got):\n%s", diff)
	}
	if s.Severity["FG030"] != rules.Info {
		t.Errorf("severity = %v", s.Severity)
	}
	want := fargate.Settings{AllowedCapabilities: []string{}, RefusePrivilegeEscalation: true, AZChoice: fargate.AZBalanced, HonourZoneSelector: true,
		Limits: fargate.Limits{ProfilesPerCluster: 10, SelectorsPerProfile: 10, LabelsPerSelector: 5}, InvalidLogging: fargate.InvalidLoggingEnabled, AZOutage: fargate.AZOutageFail}
	if diff := cmp.Diff(want, s.Fargate); diff != "" {
		t.Errorf("fargate settings (-want +got):\n%s", diff)
	}
	if s.Upgrade.RefuseFargateBehind || s.Upgrade.RefuseReadinessErrors {
		t.Errorf("upgrade: allow left %+v", s.Upgrade)
	}
	if n := len(s.Rules()); n != len(builtin.Rules())-2 {
		t.Errorf("%d rules left, want %d", n, len(builtin.Rules())-2)
	}
	for path, want := range map[string]bool{"vendor/a.yaml": true, "vendor/x/b.yaml": true, "src/vendor.yaml": false} {
		if got := s.Ignored(path); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestDeprecatedEscalationSeverity: severity FG005: blocker, what the
// documents once advised, sets refusePrivilegeEscalation.
func TestDeprecatedEscalationSeverity(t *testing.T) {
	s, err := Parse([]byte("severity: {FG005: blocker}\n"))
	if err != nil || !s.Fargate.RefusePrivilegeEscalation || len(s.Severity) != 0 {
		t.Errorf("settings %+v, %v", s, err)
	}
}

func TestPlanRules(t *testing.T) {
	s, err := Parse([]byte("disable: [PL005]\nseverity: {coverage-lost: info}\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := s.Apply([]rules.Finding{{Rule: plan.CoverageGained, Severity: rules.Info}, {Rule: plan.CoverageLost, Severity: rules.Warning}, {Rule: plan.LeavesFargate, Severity: rules.Blocker}})
	var got []string
	for _, f := range fs {
		got = append(got, f.Rule.ID+" "+f.Severity.String())
	}
	if diff := cmp.Diff([]string{"PL004 info", "PL001 blocker"}, got); diff != "" {
		t.Errorf("findings after the settings (-want +got):\n%s", diff)
	}
}

func TestParseDefaults(t *testing.T) {
	s, err := Parse([]byte("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fargate.DefaultSettings(), s.Fargate); diff != "" {
		t.Errorf("an empty file must give the default settings (-want +got):\n%s", diff)
	}
	if s.Upgrade != eks.DefaultUpgradePolicy {
		t.Errorf("upgrade policy %+v, want the default %+v", s.Upgrade, eks.DefaultUpgradePolicy)
	}
}

func TestParseErrors(t *testing.T) {
	for data, want := range map[string]string{
		"disable: [FG999]\n":                       `disable: unknown rule "FG999"`,
		"severity: {FG030: critical}\n":            `severity.FG030: unknown severity "critical"`,
		"severity: {nope: info}\n":                 `severity: unknown rule "nope"`,
		"severity: {FG003: warning}\n":             `severity.FG003: FG003 reports what fargate-scheduler refuses`,
		"severity: {privilege-escalation: info}\n": `FG005 is a warning, or a blocker with refusePrivilegeEscalation: true`,
		"disable: [host-network]\n":                `disable: FG006 reports what fargate-scheduler refuses`,
		"ignorePaths: ['[']\n":                     `invalid pattern "["`,
		"disabled: [FG001]\n":                      `unknown field "disabled"`,
		"disable: [FG999]\nseverity: {FG030: x}\n": `unknown severity "x"`,
		"azChoice: roundrobin\n":                   `azChoice: "roundrobin" is not an AZ choice model`,
		"limits: {labelsPerSelector: 0}\n":         `limits.labelsPerSelector: must be at least 1`,
		"upgrade: {fargateNodesBehind: warn}\n":    `upgrade.fargateNodesBehind: "warn" is not refuse or allow`,
		"upgrade: {readinessErrors: force}\n":      `upgrade.readinessErrors: "force" is not refuse or allow`,
		"invalidLogging: ignored\n":                `invalidLogging: "ignored" is not disabled or enabled`,
		"azOutage: retry\n":                        `azOutage: "retry" is not an AZ outage model`,
	} {
		_, err := Parse([]byte(data))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

// TestParseErrorsInOrder gives several wrong severities: the joined error
// names them in key order, the same on every run (a map's order is not).
func TestParseErrorsInOrder(t *testing.T) {
	data := []byte("severity: {FG030: a, FG031: b, FG032: c, FG040: d, FG041: e, nope: info}\n")
	want := strings.Join([]string{
		`severity.FG030: unknown severity "a" (want blocker, warning or info)`,
		`severity.FG031: unknown severity "b" (want blocker, warning or info)`,
		`severity.FG032: unknown severity "c" (want blocker, warning or info)`,
		`severity.FG040: unknown severity "d" (want blocker, warning or info)`,
		`severity.FG041: unknown severity "e" (want blocker, warning or info)`,
		`severity: unknown rule "nope"`,
	}, "\n")
	for range 20 {
		_, err := Parse(data)
		if err == nil {
			t.Fatal("Parse gave no error")
		}
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Fatalf("Parse's error (-want +got):\n%s", diff)
		}
	}
}

func TestIgnoredRelativeToFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("ignorePaths: ['vendor/**']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(dir, "vendor", "a.yaml"):        true, // absolute, as `check $PWD` gives it
		filepath.Join(dir, "app", "vendor", "a.yaml"): false,
		filepath.Join(dir, "app.yaml"):                false,
	} {
		if got := s.Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if s, err := Resolve(""); err != nil || len(s.Disabled) != 0 || s.Path != "" {
		t.Errorf("without a file the settings must be the defaults, got %+v, %v", s, err)
	}
	if _, err := Resolve("missing.yaml"); err == nil {
		t.Error("a missing --settings file must be an error")
	}
	if err := os.WriteFile(FileName, []byte("disable: [FG030]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := Resolve(""); err != nil || !s.Disabled["FG030"] || s.Path != filepath.Join(dir, FileName) {
		t.Errorf("the working directory's %s must be read, got %+v, %v", FileName, s, err)
	}
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte("disable: [nope]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v does not name the file", err)
	}
}

// TestREADMESettings parses the settings example of the README, so that
// the document shows a file fargatekit reads.
func TestREADMESettings(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Settings")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no yaml block under ### Settings")
	}
	s, err := Parse([]byte(block))
	if err != nil {
		t.Fatalf("README.md's settings: %v", err)
	}
	if diff := cmp.Diff(fargate.DefaultSettings().Limits, s.Fargate.Limits); diff != "" {
		t.Errorf("the README's limits are not the defaults it says they are (-want +got):\n%s", diff)
	}
	if s.Upgrade != eks.DefaultUpgradePolicy {
		t.Errorf("the README's upgrade policy is not the default it says it is: %+v", s.Upgrade)
	}
}
