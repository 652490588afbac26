// Package versioncmd implements `fargatekit version`: which build this is.
package versioncmd

import (
	"cmp"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

// Info is what `fargatekit version -o json` prints (docs/json-output.md).
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Build is what a release build sets with -ldflags -X; "" when unset.
type Build struct{ Version, Commit, Date string }

// Resolve is the build's Info: what the release set, else what Go recorded
// in the binary (the module version of `go install ...@v1.2.3`, the VCS
// revision and time of a build from a clone), else "unknown".
func Resolve(b Build, bi *debug.BuildInfo) Info {
	info := Info{Version: b.Version, Commit: b.Commit, BuildDate: b.Date, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi != nil {
		info.GoVersion = cmp.Or(bi.GoVersion, info.GoVersion)
		if v := bi.Main.Version; info.Version == "" && v != "" && v != "(devel)" {
			info.Version = v
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				info.Commit = cmp.Or(info.Commit, s.Value)
			case "vcs.time":
				info.BuildDate = cmp.Or(info.BuildDate, s.Value)
			}
		}
	}
	info.Version = cmp.Or(info.Version, "dev")
	info.Commit = cmp.Or(info.Commit, "unknown")
	info.BuildDate = cmp.Or(info.BuildDate, "unknown")
	return info
}

// Current is this binary's Info.
func Current(b Build) Info {
	bi, _ := debug.ReadBuildInfo()
	return Resolve(b, bi)
}

// NewCommand returns the version command.
func NewCommand(s streams.Streams, b Build) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit, build date and Go version of this build",
		Example: "  fargatekit version\n" +
			"  fargatekit version -o json | jq -r .version",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			info := Current(b)
			switch output {
			case "text":
				_, err := fmt.Fprintf(s.Out, "fargatekit %s\n  commit:  %s\n  built:   %s\n  go:      %s %s\n", info.Version, info.Commit, info.BuildDate, info.GoVersion, info.Platform)
				return err
			case "json":
				enc := json.NewEncoder(s.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(info)
			}
			return fmt.Errorf("--output must be text or json, not %q", output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
