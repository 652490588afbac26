package versioncmd

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

func TestResolve(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	installed := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-24T10:00:00Z"}}}
	tests := []struct {
		name  string
		build Build
		bi    *debug.BuildInfo
		want  Info
	}{
		{"a release build: its ldflags win", Build{Version: "v1.3.0", Commit: "def456", Date: "2026-11-25T08:00:00Z"}, installed,
			Info{Version: "v1.3.0", Commit: "def456", BuildDate: "2026-11-25T08:00:00Z", GoVersion: "go1.26.8", Platform: platform}},
		{"go install ...@v1.2.3", Build{}, installed,
			Info{Version: "v1.2.3", Commit: "abc123", BuildDate: "2026-11-24T10:00:00Z", GoVersion: "go1.26.8", Platform: platform}},
		{"built from a clone: (devel)", Build{}, &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			Info{Version: "dev", Commit: "unknown", BuildDate: "unknown", GoVersion: "go1.26.8", Platform: platform}},
		{"no build information", Build{}, nil,
			Info{Version: "dev", Commit: "unknown", BuildDate: "unknown", GoVersion: runtime.Version(), Platform: platform}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Resolve(tt.build, tt.bi)); diff != "" {
				t.Errorf("Resolve (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		cmd := NewCommand(streams.Streams{Out: &out, ErrOut: &out}, Build{Version: "v1.3.0", Commit: "def456", Date: "2026-11-25"})
		cmd.SetArgs(args)
		err := cmd.Execute()
		return out.String(), err
	}
	out, err := run()
	if err != nil || !strings.HasPrefix(out, "fargatekit v1.3.0\n  commit:  def456\n  built:   2026-11-25\n  go:      go") {
		t.Errorf("text: %v\n%s", err, out)
	}
	out, err = run("-o", "json")
	var info Info
	if err != nil || json.Unmarshal([]byte(out), &info) != nil || info.Version != "v1.3.0" || info.Commit != "def456" || info.Platform == "" {
		t.Errorf("json: %v\n%s", err, out)
	}
	if _, err := run("-o", "yaml"); err == nil || !strings.Contains(err.Error(), "--output must be text or json") {
		t.Errorf("-o yaml: %v", err)
	}
}
