// Command fargatekit checks Kubernetes workloads for Amazon EKS on AWS Fargate.
package main

import (
	"os"

	"github.com/fargatekit/fargatekit/internal/cli"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
)

func main() {
	os.Exit(cli.Main(os.Args[0], os.Args[1:], streams.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
