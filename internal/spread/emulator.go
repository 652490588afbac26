package spread

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// EmulatorInstall is what `spread install --emulator` needs of the
// running emulator.
type EmulatorInstall struct {
	// StateDir is the emulator's; spread keeps its log and kubeconfig in
	// StateDir/spread, and `emulator down` stops it with the rest.
	StateDir string
	// Kubeconfig (the admin's), AWSEndpoint, Region and ClusterName reach
	// the emulator.
	Kubeconfig, AWSEndpoint, Region, ClusterName string
	// Self is the fargatekit binary that stands in for the chart's pods.
	Self string
	// Method, DryRun and EvictionInterval are the chart's values.
	Method           spread.Method
	DryRun           bool
	EvictionInterval time.Duration
}

// Installed says where spread serves.
type Installed struct {
	PID                    int
	Release                string // namespace/name of the Helm release
	WebhookURL, MetricsURL string
	Log                    string
}

func spreadDir(stateDir string) string { return filepath.Join(stateDir, "spread") }

// InstallEmulator installs the Helm chart into the emulator, as into a
// cluster, and runs its pod on the host: KWOK runs no container, so this
// binary runs the Deployment's arguments and environment with the
// service account's token (the chart's RBAC and nothing more), on the
// loopback ports the Service targets, where the emulator sends the API
// server's calls to the Service. A spread installed before is upgraded and
// its process replaced.
func InstallEmulator(ctx context.Context, client kubernetes.Interface, in EmulatorInstall) (*Installed, error) {
	dir := spreadDir(in.StateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making %s: %w", dir, err)
	}
	// The spread installed before stops, and `emulator up` forgets it.
	if err := emulator.ForgetHostProcess(in.StateDir, emulator.ComponentSpread); err != nil {
		return nil, err
	}
	if _, err := emulator.StopComponent(in.StateDir, emulator.ComponentSpread, 5*time.Second); err != nil {
		return nil, fmt.Errorf("stopping the spread installed before: %w", err)
	}
	ports, err := emulator.FreePorts(2)
	if err != nil {
		return nil, err
	}
	webhookPort, metricsPort := ports[0], ports[1]
	env := []any{
		map[string]any{"name": "AWS_ENDPOINT_URL_EKS", "value": in.AWSEndpoint},
		map[string]any{"name": "AWS_ENDPOINT_URL_EC2", "value": in.AWSEndpoint},
		// The emulator accepts any credentials; the SDK wants some.
		map[string]any{"name": "AWS_ACCESS_KEY_ID", "value": "emulator"},
		map[string]any{"name": "AWS_SECRET_ACCESS_KEY", "value": "emulator"},
	}
	values := map[string]any{
		"clusterName": in.ClusterName, "region": in.Region, "env": env, "method": string(in.Method),
		"webhook":    map[string]any{"port": webhookPort},
		"metrics":    map[string]any{"port": metricsPort},
		"rebalancer": map[string]any{"dryRun": in.DryRun, "evictionInterval": in.EvictionInterval.String()},
	}
	if err := InstallChart(ctx, in.Kubeconfig, ReleaseNamespace, ReleaseName, values); err != nil {
		return nil, err
	}
	args, podEnv, err := standIn(ctx, client, in.Kubeconfig, dir)
	if err != nil {
		return nil, err
	}
	inst := &Installed{
		Release:    ReleaseNamespace + "/" + ReleaseName,
		WebhookURL: fmt.Sprintf("https://%s.%s.svc:443%s", ReleaseName, ReleaseNamespace, WebhookPath),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		Log:        filepath.Join(dir, "spread.log"),
	}
	host := emulator.HostProcess{What: "spread serve", Component: emulator.ComponentSpread, Args: args, Env: podEnv,
		Log: inst.Log, ReadyURL: fmt.Sprintf("http://127.0.0.1:%d/readyz", metricsPort)}
	if inst.PID, err = host.Start(ctx, in.Self); err != nil {
		return nil, err
	}
	// `emulator up` starts it again after `emulator down`.
	if err := emulator.SaveHostProcess(in.StateDir, host); err != nil {
		return nil, err
	}
	return inst, nil
}

// standInName is the pod name (POD_NAME) of the process on the host.
const standInName = ReleaseName + "-host"

// standIn returns the command line and environment of the chart's
// container for a process on the host: its arguments, listening on
// loopback, with a kubeconfig of the pod's service account, and its
// environment with the pod's fields filled in.
func standIn(ctx context.Context, client kubernetes.Interface, adminKubeconfig, dir string) ([]string, []string, error) {
	d, err := client.AppsV1().Deployments(ReleaseNamespace).Get(ctx, ReleaseName, metav1.GetOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the chart's Deployment: %w", err)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		return nil, nil, fmt.Errorf("the chart's Deployment has %d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	expiry := int64((365 * 24 * time.Hour).Seconds())
	tok, err := client.CoreV1().ServiceAccounts(ReleaseNamespace).CreateToken(ctx, pod.ServiceAccountName,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("getting a token of the service account %s: %w", pod.ServiceAccountName, err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := serviceAccountKubeconfig(adminKubeconfig, kubeconfig, pod.ServiceAccountName, tok.Status.Token); err != nil {
		return nil, nil, err
	}
	cmdline := append(slices.Clone(c.Command), c.Args...)
	if len(cmdline) < 2 || cmdline[0] != "spread" || cmdline[1] != "serve" {
		return nil, nil, fmt.Errorf("the chart's container runs %q, not spread serve", strings.Join(cmdline, " "))
	}
	args := []string{"spread", "serve", "--kubeconfig", kubeconfig}
	for _, a := range cmdline[2:] {
		for _, flag := range []string{"--listen=", "--metrics-listen="} {
			if port, ok := strings.CutPrefix(a, flag+":"); ok {
				a = flag + "127.0.0.1:" + port
			}
		}
		args = append(args, a)
	}
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil {
			switch {
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
				v = standInName
			case e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
				v = ReleaseNamespace
			default:
				return nil, nil, fmt.Errorf("the chart's container has env %s from a source the emulator does not fill", e.Name)
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return args, env, nil
}

// serviceAccountKubeconfig writes a kubeconfig of the admin's cluster with
// the service account's token.
func serviceAccountKubeconfig(admin, path, account, token string) error {
	cfg, err := clientcmd.LoadFromFile(admin)
	if err != nil {
		return fmt.Errorf("reading the emulator's kubeconfig: %w", err)
	}
	ctx, ok := cfg.Contexts[cfg.CurrentContext]
	if !ok || cfg.Clusters[ctx.Cluster] == nil {
		return errors.New("the emulator's kubeconfig has no current cluster")
	}
	out := clientcmdapi.NewConfig()
	out.Clusters["emulator"] = cfg.Clusters[ctx.Cluster]
	out.AuthInfos[account] = &clientcmdapi.AuthInfo{Token: token}
	out.Contexts[account] = &clientcmdapi.Context{Cluster: "emulator", AuthInfo: account, Namespace: ReleaseNamespace}
	out.CurrentContext = account
	if err := clientcmd.WriteToFile(*out, path); err != nil {
		return fmt.Errorf("writing the service account's kubeconfig: %w", err)
	}
	return nil
}

// UninstallEmulator uninstalls the chart from the emulator and stops the
// process standing in for its pods. It returns whether anything was there.
func UninstallEmulator(_ context.Context, kubeconfig, stateDir string) (bool, error) {
	found, err := UninstallChart(kubeconfig, ReleaseNamespace, ReleaseName)
	if err != nil {
		return false, err
	}
	ran, err := emulator.StopComponent(stateDir, emulator.ComponentSpread, 5*time.Second)
	return found || len(ran) > 0, errors.Join(err, emulator.ForgetHostProcess(stateDir, emulator.ComponentSpread))
}
