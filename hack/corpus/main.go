// Command corpus writes the corpus of the check benchmarks into a
// directory, for the side-by-side comparison of hack/compare.sh:
//
//	go run ./hack/corpus -files 1000 -per-file 10 DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fargatekit/fargatekit/internal/benchcorpus"
)

func main() {
	files := flag.Int("files", 1000, "files to write")
	perFile := flag.Int("per-file", 10, "Deployments per file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: corpus [-files N] [-per-file N] DIR")
		os.Exit(2)
	}
	err := os.MkdirAll(flag.Arg(0), 0o755)
	if err == nil {
		err = benchcorpus.Write(flag.Arg(0), *files, *perFile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
