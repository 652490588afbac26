// Command inprocess runs fargatekit's command line several times at once in
// one process, each run's output dropped, for hack/compare.sh: two checks
// that share no data, only the process (heap, collector, scheduler), to
// hold against one check whose goroutines share its work between the
// cores:
//
//	go run ./hack/inprocess 2 check --fail-on none -o json DIR
//
// The collector's settings are the process's, so check's own (gctune, one
// at a time) are replaced by a fixed limit of one check's budget
// (checkcmd.MemoryBudget) per run: each run collects as often as one check
// alone whose live heap stays under three eighths of the budget, as on
// compare.sh's corpus. Runs' errors go to standard error; it exits with the
// highest exit code of the runs.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"

	"github.com/fargatekit/fargatekit/internal/cli"
	"github.com/fargatekit/fargatekit/internal/cli/checkcmd"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 1 {
		usage()
	}
	// With GOGC set, check leaves the collector's settings alone.
	if err := os.Setenv("GOGC", "off"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(int64(n) * checkcmd.MemoryBudget)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			codes[i] = cli.Main("fargatekit", os.Args[2:], streams.Streams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr})
		})
	}
	wg.Wait()
	os.Exit(slices.Max(codes))
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: inprocess RUNS FARGATEKIT-ARGS...")
	os.Exit(2)
}
