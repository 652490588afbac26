package spreadcmd

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/fargatekit/fargatekit/deploy"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/spreadserver"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// spreadChart is spread's chart as the emulator runs it. It lives here,
// not in internal/spreadserver, so the package that runs in clusters does not
// link the emulator.
var spreadChart = emulator.HostChart{
	Component: emulator.ComponentSpread,
	Namespace: spreadserver.ReleaseNamespace, Release: spreadserver.ReleaseName, Deployment: spreadserver.ReleaseName,
	Command:       []string{"spread", "serve"},
	LoopbackFlags: []string{"--listen", "--metrics-listen"},
	Install: func(ctx context.Context, kubeconfig, namespace, release string, values map[string]any) error {
		return deploy.Install(ctx, kubeconfig, deploy.SpreadChartDir, namespace, release, values)
	},
	Uninstall: deploy.Uninstall,
}

// emulatorInstall is what `spread install --emulator` needs of the
// running emulator.
type emulatorInstall struct {
	// StateDir is the emulator's; spread keeps its log and kubeconfig in
	// StateDir/spread, and `emulator down` stops it with the rest.
	StateDir string
	// Kubeconfig (the admin's), AWSEndpoint, Region and ClusterName reach
	// the emulator.
	Kubeconfig, AWSEndpoint, Region, ClusterName string
	// Self is the fargatekit binary that stands in for the chart's pods.
	Self string
	// Method, DryRun, EvictionInterval, UnavailableAfter and ZoneRetry are
	// the chart's values.
	Method                                        spread.Method
	DryRun                                        bool
	EvictionInterval, UnavailableAfter, ZoneRetry time.Duration
}

// installed says where spread serves.
type installed struct {
	PID                    int
	Release                string // namespace/name of the Helm release
	WebhookURL, MetricsURL string
	Log                    string
}

// installEmulator installs spread's chart into the emulator with the
// values that point it at the emulator, and runs its pod on the host.
func installEmulator(ctx context.Context, client kubernetes.Interface, in emulatorInstall) (*installed, error) {
	ports, err := emulator.FreePorts(2)
	if err != nil {
		return nil, err
	}
	webhookPort, metricsPort := ports[0], ports[1]
	values := map[string]any{
		"clusterName": in.ClusterName, "region": in.Region, "env": emulator.AWSEnv(in.AWSEndpoint), "method": string(in.Method),
		"webhook":    map[string]any{"port": webhookPort},
		"metrics":    map[string]any{"port": metricsPort},
		"rebalancer": map[string]any{"dryRun": in.DryRun, "evictionInterval": in.EvictionInterval.String()},
	}
	if in.UnavailableAfter > 0 && in.ZoneRetry > 0 {
		values["availability"] = map[string]any{"unavailableAfter": in.UnavailableAfter.String(), "zoneRetry": in.ZoneRetry.String()}
	}
	host, err := emulator.InstallHostChart(ctx, client, spreadChart, emulator.HostInstall{
		StateDir: in.StateDir, Kubeconfig: in.Kubeconfig, Self: in.Self, Values: values,
		ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/readyz", metricsPort),
	})
	if err != nil {
		return nil, err
	}
	return &installed{
		PID:        host.PID,
		Release:    spreadserver.ReleaseNamespace + "/" + spreadserver.ReleaseName,
		WebhookURL: fmt.Sprintf("https://%s.%s.svc:443%s", spreadserver.ReleaseName, spreadserver.ReleaseNamespace, spreadserver.WebhookPath),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		Log:        host.Log,
	}, nil
}
