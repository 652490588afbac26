// Command gendocs writes the man pages and the shell completions of
// fargatekit, generated from its cobra command tree: `make docs` runs it, and
// `make verify` checks that what is committed is what it writes.
//
//	go run ./hack/gendocs [-man docs/man] [-completions completions]
//
// The man pages' date (their .TH line) is the month they are written in, or
// SOURCE_DATE_EPOCH's; `make verify` ignores that line.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra/doc"

	"github.com/fargatekit/fargatekit/internal/cli"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

func main() {
	man := flag.String("man", "docs/man", "the directory of the man pages")
	completions := flag.String("completions", "completions", "the directory of the shell completions")
	flag.Parse()
	if err := run(*man, *completions); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

func run(manDir, completionDir string) error {
	root := cli.NewCommand(streams.Streams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr})
	root.DisableAutoGenTag = true // no date in the pages' text: they change only when the commands do
	for _, dir := range []string{manDir, completionDir} {
		// Start afresh, so that the page of a removed command goes too.
		if err := os.RemoveAll(dir); err != nil {
			return fmt.Errorf("emptying %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", dir, err)
		}
	}
	header := &doc.GenManHeader{Title: "FARGATEKIT", Section: "1", Source: "fargatekit", Manual: "fargatekit manual"}
	if err := doc.GenManTree(root, header, manDir); err != nil {
		return fmt.Errorf("writing the man pages to %s: %w", manDir, err)
	}
	for file, gen := range map[string]func(io.Writer) error{
		"fargatekit.bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
		"fargatekit.zsh":  root.GenZshCompletion,
		"fargatekit.fish": func(w io.Writer) error { return root.GenFishCompletion(w, true) },
		"fargatekit.ps1":  root.GenPowerShellCompletionWithDesc,
	} {
		if err := write(filepath.Join(completionDir, file), gen); err != nil {
			return err
		}
	}
	return nil
}

func write(path string, gen func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("writing %s: %w", path, cerr)
		}
	}()
	if err := gen(f); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
