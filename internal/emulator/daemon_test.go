package emulator

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
)

func TestDeprecatedRequests(t *testing.T) {
	metrics := `# HELP apiserver_requested_deprecated_apis [STABLE] Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.
# TYPE apiserver_requested_deprecated_apis gauge
apiserver_requested_deprecated_apis{group="storage.k8s.io",removed_release="1.35",resource="volumeattributesclasses",subresource="",version="v1alpha1"} 1
apiserver_requested_deprecated_apis{group="",removed_release="",resource="componentstatuses",subresource="",version="v1"} 1
apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",resource="cronjobs",subresource="",version="v1beta1"} 0
# TYPE apiserver_request_total counter
apiserver_request_total{code="200",verb="GET"} 12
`
	got, err := deprecatedRequests([]byte(metrics))
	if err != nil {
		t.Fatal(err)
	}
	want := []eksapi.DeprecatedRequest{
		{Group: "", Version: "v1", Resource: "componentstatuses"},
		{Group: "storage.k8s.io", Version: "v1alpha1", Resource: "volumeattributesclasses", RemovedRelease: "1.35"},
	}
	if diff := cmp.Diff(want, got, cmpSorted); diff != "" {
		t.Errorf("deprecated requests (-want +got):\n%s", diff)
	}
	if _, err := deprecatedRequests([]byte("not metrics {")); err == nil {
		t.Error("metrics that do not parse gave no error")
	}
	if got, err := deprecatedRequests(nil); err != nil || len(got) != 0 {
		t.Errorf("no metrics: %v %v", got, err)
	}
}

var cmpSorted = cmp.Transformer("sorted", func(rs []eksapi.DeprecatedRequest) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Group+"/"+r.Version+"/"+r.Resource+"@"+r.RemovedRelease)
	}
	slices.Sort(out)
	return out
})

// updatingStore is a Store whose cluster is UPDATING from 1.34 to 1.35,
// the update's time passed.
func updatingStore(t *testing.T) (*eksapi.Store, string) {
	t.Helper()
	cfg := clusterconfig.Default()
	cfg.KubernetesVersion, cfg.NodeGroups = "1.34", nil
	dir := t.TempDir()
	since := time.Now().Add(-time.Hour).UTC()
	state, err := json.Marshal(map[string]any{
		"version": 1, "cluster": cfg.Metadata.Name, "nodegroups": []any{}, "profiles": []any{},
		"controlPlane": eksapi.ClusterState{Version: "1.34", PlatformVersion: eksapi.PlatformVersion, Status: eksapi.ClusterUpdating,
			StatusSince: since, Update: "u1", Target: "1.35"},
		"updates": []eksapi.UpdateState{{ID: "u1", Type: eksapi.VersionUpdate, Status: eksapi.UpdateInProgress, CreatedAt: since,
			Params: []eksapi.UpdateParam{}, Errors: []eksapi.ErrorDetail{}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, eksapi.StateFile), state, 0o600); err != nil {
		t.Fatal(err)
	}
	store, err := eksapi.NewStore(cfg, dir, eksapi.WithServedVersion(), eksapi.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	return store, dir
}

// TestVersionKeeper: the update completes once its version is served; after
// three failures to serve it, it fails and the old version is served again.
func TestVersionKeeper(t *testing.T) {
	store, _ := updatingStore(t)
	var asked []string
	k := &versionKeeper{store: store, serve: func(_ context.Context, v string) (string, error) { asked = append(asked, v); return v, nil }}
	if c := store.Cluster(); c.Status != eksapi.ClusterUpdating {
		t.Fatalf("before the version is served: %s, want UPDATING", c.Status)
	}
	k.step(context.Background())
	k.step(context.Background()) // served already: not asked again
	if c := store.Cluster(); c.Status != eksapi.ClusterActive || c.Version != "1.35" || !slices.Equal(asked, []string{"1.35"}) {
		t.Errorf("served: %s %s, asked %v; want ACTIVE 1.35, asked once for 1.35", c.Status, c.Version, asked)
	}

	store, dir := updatingStore(t)
	asked = nil
	fail := true
	k = &versionKeeper{store: store, serve: func(_ context.Context, v string) (string, error) {
		asked = append(asked, v)
		if fail {
			return "", errors.New("kwokctl start failed")
		}
		return v, nil
	}}
	for range maxServeFailures {
		k.step(context.Background())
	}
	fail = false
	k.step(context.Background())
	if c := store.Cluster(); c.Status != eksapi.ClusterActive || c.Version != "1.34" || !slices.Equal(asked, []string{"1.35", "1.35", "1.35", "1.34"}) {
		t.Errorf("after %d failures: %s %s, asked %v; want ACTIVE 1.34, then 1.34 served again", maxServeFailures, c.Status, c.Version, asked)
	}
	data, err := os.ReadFile(filepath.Join(dir, eksapi.StateFile))
	if err != nil {
		t.Fatal(err)
	}
	var saved struct{ Updates []eksapi.UpdateState }
	if err := json.Unmarshal(data, &saved); err != nil {
		t.Fatal(err)
	}
	if u := saved.Updates[0]; u.Status != eksapi.UpdateFailed || len(u.Errors) != 1 || !strings.Contains(u.Errors[0].ErrorMessage, "kwokctl start failed") {
		t.Errorf("the update: %+v, want Failed with the error", u)
	}
}

// TestRunDaemonEarlyReturnClosesListeners makes RunDaemon fail after it has
// opened its two ports (the webhook certificate cannot be saved): both ports
// must be free again once it returns.
func TestRunDaemonEarlyReturnClosesListeners(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state")
	// A directory where the certificate goes: it cannot be read or written.
	if err := os.MkdirAll(filepath.Join(state, "webhook.crt"), 0o700); err != nil {
		t.Fatal(err)
	}
	eksAddr, hookAddr := freeAddr(t), freeAddr(t)
	err := RunDaemon(t.Context(), DaemonOptions{
		Config: clusterconfig.Default(), StateDir: state, Kubeconfig: kubeconfig,
		EKSAddr: eksAddr, WebhookAddr: hookAddr,
	})
	if err == nil || !strings.Contains(err.Error(), "webhook certificate") {
		t.Fatalf("RunDaemon = %v, want an error saving the webhook certificate", err)
	}
	for _, addr := range []string{eksAddr, hookAddr} {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Errorf("%s is still held after RunDaemon returned: %v", addr, err)
			continue
		}
		_ = ln.Close()
	}
}

// freeAddr returns a loopback address whose port was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestDaemonExit(t *testing.T) {
	failed := errors.New("the scheduler failed")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want error
	}{
		{"told to stop", cancelled, context.Canceled, nil},
		{"told to stop while a loop failed", cancelled, failed, nil},
		{"a server closed", context.Background(), http.ErrServerClosed, nil},
		{"a loop failed", context.Background(), failed, failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := daemonExit(tc.ctx, tc.err); !errors.Is(got, tc.want) || (tc.want == nil && got != nil) {
				t.Errorf("daemonExit = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestWebhookCertificateTorn checks that the webhook's certificate is kept
// across starts, and that a pair that does not load (a key cut short by a
// crash, a key of another certificate) is made anew rather than stopping
// the next start.
func TestWebhookCertificateTorn(t *testing.T) {
	dir := t.TempDir()
	cert, key, err := webhookCertificate(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := webhookCertificate(dir)
	if err != nil || string(again) != string(cert) {
		t.Fatalf("a second start made another certificate (%v)", err)
	}
	other := t.TempDir()
	_, otherKey, err := webhookCertificate(other)
	if err != nil {
		t.Fatal(err)
	}
	for name, damaged := range map[string][]byte{"cut short": key[:len(key)/2], "of another certificate": otherKey} {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(filepath.Join(dir, "webhook.key"), damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			certPEM, keyPEM, err := webhookCertificate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil {
				t.Errorf("the pair made anew does not load: %v", err)
			}
			onDisk, err := os.ReadFile(filepath.Join(dir, "webhook.key"))
			if err != nil || string(onDisk) != string(keyPEM) {
				t.Errorf("the new key is not the one saved (%v)", err)
			}
		})
	}
}
