// Package clusterflags holds the flags of the commands that read a running
// cluster: how to reach it (scan, fix, upgrade) and what scan reads of it
// (scan, fix). Commands share them here rather than import one another.
package clusterflags

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fargatekit/fargatekit/internal/cluster"
	"github.com/fargatekit/fargatekit/internal/settings"
	"github.com/fargatekit/fargatekit/pkg/live"
)

// AddTarget registers the flags that say how to reach the cluster.
func AddTarget(fl *pflag.FlagSet, t *cluster.Target) {
	fl.StringVar(&t.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&t.Context, "context", "", "kubeconfig context (default: the current context)")
	fl.StringVar(&t.ClusterName, "cluster-name", "", "EKS cluster name (default: read from the kubeconfig context, as aws eks update-kubeconfig writes it)")
	fl.StringVar(&t.Region, "region", "", "AWS region of the cluster (default: the kubeconfig context's, else AWS_REGION or the AWS profile's)")
	fl.StringVar(&t.EKSEndpoint, "eks-endpoint", "", "EKS API endpoint, such as the emulator's (default: AWS_ENDPOINT_URL_EKS, else AWS's)")
}

// Scan are what scan and fix share: how to reach the cluster and what to read.
type Scan struct {
	Target        cluster.Target
	TargetVersion string
	StuckAfter    time.Duration
	// SubnetHeadroom is the free addresses every profile's subnets must keep
	// (LV011); 0: what the profile's workloads may need.
	SubnetHeadroom int
	Helm           bool
	SettingsPath   string
}

// Check refuses the values that make no sense: a stuck-after of zero or
// less would report every Terminating pod stuck, a negative headroom no
// subnet short.
func (f *Scan) Check() error {
	switch {
	case f.StuckAfter < time.Second:
		return fmt.Errorf("--stuck-after %s: must be at least 1s, how long a pod may be Terminating before it is reported stuck", f.StuckAfter)
	case f.SubnetHeadroom < 0:
		return fmt.Errorf("--subnet-headroom %d: must be 0 (what the workloads need) or more", f.SubnetHeadroom)
	}
	return nil
}

// Add registers the flags.
func (f *Scan) Add(fl *pflag.FlagSet) {
	AddTarget(fl, &f.Target)
	fl.StringVar(&f.TargetVersion, "target-version", "", "Kubernetes minor version to check API versions against (default: the minor after the cluster's)")
	fl.DurationVar(&f.StuckAfter, "stuck-after", live.DefaultStuckAfter, "how long a pod may be Terminating before it is reported stuck")
	fl.IntVar(&f.SubnetHeadroom, "subnet-headroom", 0, "free addresses each Fargate profile's subnets must keep (LV011; default: what its workloads' missing replicas and rollout surge need)")
	fl.BoolVar(&f.Helm, "helm", true, "read Helm 3 release Secrets (label owner=helm) for removed APIs; --helm=false needs no access to Secrets")
	settings.AddFlag(fl, &f.SettingsPath)
}

// AddMetricsListen registers --metrics-listen, the address of a
// controller's /metrics, /healthz and /readyz, into addr. It also answers
// to --metrics-bind-address, the name controller-runtime's controllers give
// it, so that a flag carried over from one of them works.
func AddMetricsListen(fl *pflag.FlagSet, addr *string) {
	fl.StringVar(addr, "metrics-listen", ":8080", "address of /metrics, /healthz and /readyz (HTTP); also --metrics-bind-address")
	next := fl.GetNormalizeFunc()
	fl.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		if name == "metrics-bind-address" {
			name = "metrics-listen"
		}
		return next(f, name)
	})
}
