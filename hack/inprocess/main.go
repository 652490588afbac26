// Command inprocess runs fargatekit's command line several times at once in
// one process, each run's output dropped, for hack/compare.sh: two checks
// that share nothing but the Go runtime (heap, collector, scheduler), to
// tell what that sharing costs on two cores from what a check's own
// goroutines cost:
//
//	go run ./hack/inprocess 2 check --fail-on none -o json DIR
//
// The collector's memory budget is the process's, and check's gctune sets
// one at a time: the first run's holds for all until it ends, and the
// others finish under Go's defaults. It exits with the highest exit code of
// the runs.
package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"

	"github.com/fargatekit/fargatekit/internal/cli"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

func main() {
	n, err := strconv.Atoi(os.Args[min(1, len(os.Args)-1)])
	if len(os.Args) < 3 || err != nil || n < 1 {
		fmt.Fprintln(os.Stderr, "usage: inprocess RUNS FARGATEKIT-ARGS...")
		os.Exit(2)
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Go(func() {
			codes[i] = cli.Main("fargatekit", os.Args[2:], streams.Streams{In: os.Stdin, Out: io.Discard, ErrOut: io.Discard})
		})
	}
	wg.Wait()
	os.Exit(slices.Max(codes))
}
