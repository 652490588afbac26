// Package streams holds what every fargatekit command is given: its input and
// output streams, and the exit status it asks for.
package streams

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/fargatekit/fargatekit/pkg/rules"
)

// Streams are a command's standard input, output and error.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Color decides whether to colour output written to w: mode is auto, always or never;
// auto colours a terminal unless NO_COLOR is set.
func Color(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		return os.Getenv("NO_COLOR") == "" && IsTerminal(w), nil
	}
	return false, fmt.Errorf("--color must be auto, always or never, not %q", mode)
}

// Exit codes shared by every command.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitInvalid  = 2
)

// ExitFor returns the exit status of a run: ExitInvalid when the input had
// errors, else ExitFindings when the worst finding reaches failOn (0: never),
// else nil.
func ExitFor(inputErrors bool, worst, failOn rules.Severity) error {
	if inputErrors {
		return &ExitError{Code: ExitInvalid}
	}
	if failOn != 0 && worst >= failOn {
		return &ExitError{Code: ExitFindings}
	}
	return nil
}

// ExitError asks Main to exit with Code after printing nothing more: the
// command has already said what it had to.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }
