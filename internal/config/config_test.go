package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

func TestParse(t *testing.T) {
	reg := builtin.Registry()
	c, err := Parse([]byte("disable: [FG001, host-network]\nseverity: {privilege-escalation: blocker}\nignorePaths: ['vendor/**']\nallowedCapabilities: []\n"), reg)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]bool{"FG001": true, "FG006": true}, c.Disabled); diff != "" {
		t.Errorf("disabled (-want +got):\n%s", diff)
	}
	if c.Severity["FG005"] != rules.Blocker {
		t.Errorf("severity = %v", c.Severity)
	}
	if c.AllowedCapabilities == nil || len(c.AllowedCapabilities) != 0 {
		t.Errorf("an empty allowedCapabilities must stay empty, not default: %#v", c.AllowedCapabilities)
	}
	if n := len(c.Rules(reg)); n != len(reg.Rules())-2 {
		t.Errorf("%d rules left, want %d", n, len(reg.Rules())-2)
	}
	for path, want := range map[string]bool{"vendor/a.yaml": true, "vendor/x/b.yaml": true, "src/vendor.yaml": false} {
		if got := c.Ignored(path); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	reg := builtin.Registry()
	for data, want := range map[string]string{
		"disable: [FG999]\n":                       `disable: unknown rule "FG999"`,
		"severity: {FG001: critical}\n":            `severity.FG001: unknown severity "critical"`,
		"severity: {nope: info}\n":                 `severity: unknown rule "nope"`,
		"ignorePaths: ['[']\n":                     `invalid pattern "["`,
		"disabled: [FG001]\n":                      `unknown field "disabled"`,
		"disable: [FG999]\nseverity: {FG001: x}\n": `unknown severity "x"`,
	} {
		_, err := Parse([]byte(data), reg)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", data, err, want)
		}
	}
}

func TestIgnoredRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("ignorePaths: ['vendor/**']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, true, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		filepath.Join(dir, "vendor", "a.yaml"):        true, // absolute, as `check $PWD` gives it
		filepath.Join(dir, "app", "vendor", "a.yaml"): false,
		filepath.Join(dir, "app.yaml"):                false,
	} {
		if got := c.Ignored(p); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	reg := builtin.Registry()
	if c, err := Load(filepath.Join(t.TempDir(), FileName), false, reg); err != nil || len(c.Disabled) != 0 {
		t.Errorf("a missing default config must be empty, got %+v, %v", c, err)
	}
	if _, err := Load("missing.yaml", true, reg); err == nil {
		t.Error("a missing explicit config must be an error")
	}
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("disable: [nope]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, true, reg); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("error %v does not name the file", err)
	}
}
