package spread

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	webhookPort, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	inst := &Installed{
		WebhookURL: fmt.Sprintf("https://127.0.0.1:%d%s", webhookPort, WebhookPath),
		MetricsURL: fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort),
		Log:        filepath.Join(dir, "spread.log"),
	}
	args := append([]string{"spread", "serve", "--kubeconfig", in.Kubeconfig, "--cluster-name", in.ClusterName, "--region", in.Region,
		"--eks-endpoint", in.AWSEndpoint, "--ec2-endpoint", in.AWSEndpoint,
		"--listen", fmt.Sprintf("127.0.0.1:%d", webhookPort), "--metrics-listen", fmt.Sprintf("127.0.0.1:%d", metricsPort),
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--lease-namespace", metav1.NamespaceSystem}, in.ServeFlags...)
	log, err := os.OpenFile(inst.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening spread's log: %w", err)
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(in.Self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	// The emulator accepts any credentials; the SDK wants some.
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // outlives install
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting spread serve: %w", err)
	}
	inst.PID = cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := strings.TrimSuffix(inst.MetricsURL, "/metrics") + "/readyz"
	deadline := time.Now().Add(30 * time.Second)
	probe := &http.Client{Timeout: 2 * time.Second}
	for {
		if resp, err := probe.Get(ready); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("spread serve stopped (%w); its log (%s) ends with:\n%s", err, inst.Log, tail(inst.Log, 15))
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("spread serve was not ready after 30s; its log (%s) ends with:\n%s", inst.Log, tail(inst.Log, 15))
		}
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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(f)
	if err != nil && !errors.Is(err, io.EOF) {
		return err.Error()
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
