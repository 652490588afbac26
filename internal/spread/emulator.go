package spread

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"

	"github.com/fargatekit/fargatekit/internal/admission"
	"github.com/fargatekit/fargatekit/internal/emulator"
)

// EmulatorInstall is what `spread install --emulator` needs of the
// running emulator and of the spread it starts.
type EmulatorInstall struct {
	// StateDir is the emulator's; spread keeps its certificate, log and
	// ports in StateDir/spread, and `emulator down` stops it with the rest.
	StateDir string
	// Kubeconfig, AWSEndpoint, Region and ClusterName reach the emulator.
	Kubeconfig, AWSEndpoint, Region, ClusterName string
	// Self is the fargatekit binary to run `spread serve` from.
	Self string
	// ServeFlags are passed on to `spread serve` (--dry-run, ...).
	ServeFlags []string
}

// Installed says where spread serves.
type Installed struct {
	PID                    int
	WebhookURL, MetricsURL string
	Log                    string
}

func spreadDir(stateDir string) string { return filepath.Join(stateDir, "spread") }

// InstallEmulator starts `fargatekit spread serve` for the emulator, on
// loopback ports the system gives out and a self-signed certificate, waits
// until it is ready, and registers its webhook. A spread installed before
// is stopped first.
func InstallEmulator(ctx context.Context, client kubernetes.Interface, in EmulatorInstall) (*Installed, error) {
	dir := spreadDir(in.StateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making %s: %w", dir, err)
	}
	if _, err := emulator.StopComponent(in.StateDir, emulator.ComponentSpread, 5*time.Second); err != nil {
		return nil, fmt.Errorf("stopping the spread installed before: %w", err)
	}
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, nil)
	if err != nil {
		return nil, fmt.Errorf("making spread's certificate: %w", err)
	}
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return nil, fmt.Errorf("saving spread's certificate: %w", err)
	}
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, fmt.Errorf("saving spread's key: %w", err)
	}
	ports, err := emulator.FreePorts(2)
	if err != nil {
		return nil, err
	}
	webhookPort, metricsPort := ports[0], ports[1]
	inst := &Installed{
		WebhookURL: fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, WebhookPath),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		Log:        filepath.Join(dir, "spread.log"),
	}
	args := append([]string{"spread", "serve", "--kubeconfig", in.Kubeconfig, "--cluster-name", in.ClusterName, "--region", in.Region,
		"--eks-endpoint", in.AWSEndpoint, "--ec2-endpoint", in.AWSEndpoint,
		"--listen", fmt.Sprintf("127.0.0.1:%d", webhookPort), "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--lease-namespace", metav1.NamespaceSystem}, in.ServeFlags...)
	readyz := fmt.Sprintf("http://127.0.0.1:%d/readyz", metricsPort)
	probe := &http.Client{Timeout: 2 * time.Second}
	ready := func() bool {
		resp, err := probe.Get(readyz)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	// The emulator accepts any credentials; the SDK wants some.
	env := []string{"AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator"}
	started := func(pid int) error { inst.PID = pid; return nil }
	if err := emulator.StartDetached(ctx, "spread serve", in.Self, args, env, inst.Log, started, ready, 30*time.Second); err != nil {
		return nil, err
	}
	url := inst.WebhookURL
	hook := WebhookConfiguration(admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: certPEM})
	if err := admission.Register(ctx, client, hook); err != nil {
		return nil, err
	}
	return inst, nil
}

// UninstallEmulator removes spread's webhook from the emulator and stops
// spread. It returns whether anything was there.
func UninstallEmulator(ctx context.Context, client kubernetes.Interface, stateDir string) (bool, error) {
	err := client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, WebhookConfigurationName, metav1.DeleteOptions{})
	found := err == nil
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("removing spread's webhook: %w", err)
	}
	ran, err := emulator.StopComponent(stateDir, emulator.ComponentSpread, 5*time.Second)
	return found || len(ran) > 0, err
}
