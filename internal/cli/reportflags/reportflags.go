// Package reportflags holds the flags every command that writes a report
// shares: the output format, the severity that fails the run, and colour.
package reportflags

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Flags are the report flags of a command.
type Flags struct {
	output, failOn, color string
}

// Add registers -o/--output, --fail-on and --color.
func (f *Flags) Add(fs *pflag.FlagSet) {
	fs.StringVarP(&f.output, "output", "o", "text", "output format: "+strings.Join(report.FormatNames(), ", "))
	fs.StringVar(&f.failOn, "fail-on", "blocker", "lowest severity that makes the exit code 1: blocker, warning, info or none")
	fs.StringVar(&f.color, "color", "auto", "colour text output: auto (on a terminal, unless NO_COLOR is set), always or never")
}

// Output is what the flags ask of the report, checked: its writer, its
// options and the severity that fails the run.
type Output struct {
	Write   report.Writer
	Options report.Options
	// FailOn is the lowest severity that fails the run; 0 never fails on findings.
	FailOn rules.Severity
}

// Resolve checks the flags for a report written to out.
func (f *Flags) Resolve(out io.Writer) (Output, error) {
	write, err := report.Lookup(f.output)
	if err != nil {
		return Output{}, fmt.Errorf("--output: %w", err)
	}
	failOn, err := rules.ParseFailOn(f.failOn)
	if err != nil {
		return Output{}, err
	}
	color, err := streams.Color(f.color, out)
	if err != nil {
		return Output{}, err
	}
	return Output{Write: write, Options: report.Options{Color: color}, FailOn: failOn}, nil
}
