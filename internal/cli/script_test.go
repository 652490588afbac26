package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/spf13/cobra"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

// TestMain lets the scripts run fargatekit as a command of their own.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"fargatekit": func() {
			os.Exit(Main(os.Args[0], os.Args[1:], streams.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
		},
	})
}

// TestScripts runs the CLI's documented behaviours, one testscript a
// behaviour (testdata/script/*.txtar: files, commands, exit codes, output),
// in the format the Go command's own tests use. -update rewrites the
// expected output the scripts compare with cmp.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			// No user settings, state or cache leak into a script.
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, ".state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			return nil
		},
	})
}

// TestHelpGolden keeps the --help of every command as a golden file
// (testdata/help/<command>.golden; -update rewrites them), so that a change
// of a flag, an example or a text shows in review.
func TestHelpGolden(t *testing.T) {
	var walk func(c *cobra.Command)
	var paths []string
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return
		}
		paths = append(paths, c.CommandPath())
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCommand(streams.Streams{}))
	if len(paths) < 10 {
		t.Fatalf("only %d commands: %v", len(paths), paths)
	}
	for _, path := range paths {
		args := append(strings.Fields(path)[1:], "--help")
		code, out, stderr := run(t, "", args...)
		if code != 0 || stderr != "" {
			t.Errorf("%s --help: exit %d, stderr %q", path, code, stderr)
		}
		checkGolden(t, filepath.Join("testdata", "help", strings.ReplaceAll(path, " ", "_")+".golden"), out)
	}
}
