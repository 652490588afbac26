// Package config reads .fargatekit.yaml, the per-repository settings of
// fargatekit check: rules to disable, severities to change, paths to ignore.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/pkg/rules"
)

// FileName is the config file looked up in the working directory.
const FileName = ".fargatekit.yaml"

// File is the config file's schema.
type File struct {
	// Disable lists rules (IDs or names) that do not run.
	Disable []string `json:"disable"`
	// Severity changes a rule's severity: FG005: blocker.
	Severity map[string]string `json:"severity"`
	// IgnorePaths are glob patterns (with **) of files not read from directories.
	IgnorePaths []string `json:"ignorePaths"`
	// AllowedCapabilities replaces the Linux capabilities assumed accepted on
	// Fargate (default NET_BIND_SERVICE; AWS documents none).
	AllowedCapabilities *[]string `json:"allowedCapabilities"`
}

// Config is a validated config file.
type Config struct {
	Disabled map[string]bool // by rule ID
	Severity map[string]rules.Severity
	Ignore   []string
	// Dir is the directory ignore patterns are relative to: the config
	// file's, or the working directory without a file.
	Dir string
	// AllowedCapabilities is nil unless the file sets it.
	AllowedCapabilities []string
}

// Load reads the config at path. With explicit false, a missing file is no
// error and gives the empty config.
func Load(path string, explicit bool, reg *rules.Registry) (*Config, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && !explicit {
		return &Config{Dir: filepath.Dir(abs)}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	c, err := Parse(data, reg)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	c.Dir = filepath.Dir(abs)
	return c, nil
}

// Parse validates a config file's contents against the registry.
func Parse(data []byte, reg *rules.Registry) (*Config, error) {
	var f File
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, err
	}
	c := &Config{Disabled: map[string]bool{}, Severity: map[string]rules.Severity{}, Ignore: f.IgnorePaths}
	if f.AllowedCapabilities != nil {
		c.AllowedCapabilities = append([]string{}, *f.AllowedCapabilities...)
	}
	var errs []error
	for _, k := range f.Disable {
		r, ok := reg.Lookup(k)
		if !ok {
			errs = append(errs, fmt.Errorf("disable: unknown rule %q", k))
			continue
		}
		c.Disabled[r.ID] = true
	}
	for k, v := range f.Severity {
		r, ok := reg.Lookup(k)
		if !ok {
			errs = append(errs, fmt.Errorf("severity: unknown rule %q", k))
			continue
		}
		s, err := rules.ParseSeverity(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("severity.%s: %w", k, err))
			continue
		}
		c.Severity[r.ID] = s
	}
	for _, p := range f.IgnorePaths {
		if !doublestar.ValidatePattern(p) {
			errs = append(errs, fmt.Errorf("ignorePaths: invalid pattern %q", p))
		}
	}
	return c, errors.Join(errs...)
}

// Ignored reports whether a file path matches one of the ignore patterns,
// which are relative to the config file's directory (so that `check .` and
// `check $PWD` ignore the same files).
func (c *Config) Ignored(path string) bool {
	p := filepath.Clean(path)
	if c.Dir != "" {
		if abs, err := filepath.Abs(p); err == nil {
			if rel, err := filepath.Rel(c.Dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
	}
	p = filepath.ToSlash(p)
	for _, pattern := range c.Ignore {
		if ok, _ := doublestar.Match(pattern, p); ok {
			return true
		}
	}
	return false
}

// Rules returns the registry's rules less the disabled ones.
func (c *Config) Rules(reg *rules.Registry) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range reg.Rules() {
		if !c.Disabled[r.ID] {
			out = append(out, r)
		}
	}
	return out
}
