package emulator

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

func TestConfigDiff(t *testing.T) {
	a := clusterconfig.Default()
	b := clusterconfig.Default()
	if d := ConfigDiff(a, b); len(d) != 0 {
		t.Errorf("equal configurations differ in %v", d)
	}
	b.Metadata.Name, b.Seed = "shop", 7
	b.FargateProfiles = []clusterconfig.Profile{{Name: "apps"}}
	if diff := cmp.Diff([]string{"fargateProfiles", "metadata.name", "seed"}, ConfigDiff(a, b)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

func TestRecord(t *testing.T) {
	dir := t.TempDir()
	if r, err := ReadRecord(dir); r != nil || err != nil {
		t.Errorf("no record: %v, %v", r, err)
	}
	o := &Options{StateDir: dir, Config: clusterconfig.Default(), EKSPort: 1, WebhookPort: 2, ConfigPath: "/c.yaml"}
	if err := o.writeRecord(); err != nil {
		t.Fatal(err)
	}
	r, err := ReadRecord(dir)
	if err != nil || r.EKSPort != 1 || r.WebhookPort != 2 || r.ConfigPath != "/c.yaml" || len(ConfigDiff(r.Config, o.Config)) != 0 {
		t.Errorf("record %+v, %v", r, err)
	}
	if err := os.WriteFile(filepath.Join(dir, RecordFile), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecord(dir); err == nil || !strings.Contains(err.Error(), "not an emulator record") {
		t.Errorf("a broken record: %v", err)
	}
	found, err := Find(filepath.Dir(dir))
	if err != nil || len(found) != 1 || found[0] != dir {
		t.Errorf("Find: %v, %v", found, err)
	}
}

func TestProcessMatching(t *testing.T) {
	const dir = "/tmp/fk"
	for _, tc := range []struct {
		args      []string
		component string
		mentions  bool
	}{
		{[]string{"/tmp/fk/kwok/clusters/shop/bin/etcd", "--data-dir=/tmp/fk/kwok/clusters/shop/etcd"}, "etcd", true},
		{[]string{"/usr/bin/kube-apiserver", "--client-ca-file", "/tmp/fk/kwok/pki/ca.crt"}, "kube-apiserver", true},
		{[]string{"/bin/fargatekit", "emulator", "serve", "--state-dir", "/tmp/fk"}, "daemon", true},
		{[]string{"/bin/fargatekit", "emulator", "status", "--state-dir", "/tmp/fk"}, "", true},
		{[]string{"/bin/fargatekit", "spread", "serve", "--kubeconfig", "/tmp/fk/spread/kubeconfig"}, "spread", true},
		{[]string{"/bin/fargatekit", "watch", "serve", "--kubeconfig", "/tmp/fk/watch/kubeconfig"}, "watch", true},
		{[]string{"tail", "-f", "/tmp/fk/daemon.log"}, "", true},
		{[]string{"/tmp/fk/kwok/clusters/shop/bin/kube-apiserver", "--version"}, "", true},
		{[]string{"/tmp/fk-other/bin/etcd", "--data-dir=/tmp/fk-other/etcd"}, "etcd", false},
	} {
		if got := component(tc.args); got != tc.component {
			t.Errorf("component(%v) = %q, want %q", tc.args, got, tc.component)
		}
		if got := mentions(tc.args, dir); got != tc.mentions {
			t.Errorf("mentions(%v) = %v, want %v", tc.args, got, tc.mentions)
		}
	}
}

// TestProcessesOfThisTest: the test's own process names no state directory
// and runs no component: it is never one of an emulator's processes.
func TestProcessesOfThisTest(t *testing.T) {
	ps, err := Processes(t.TempDir())
	if err != nil || len(ps) != 0 {
		t.Errorf("processes of a fresh directory: %v, %v", ps, err)
	}
}

// TestDaemonAnswers: only this emulator's EKS API counts as the daemon
// answering; another server that took the port does not.
func TestDaemonAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"this cluster", http.StatusOK, `{"clusters":["other","shop"]}`, true},
		{"another cluster", http.StatusOK, `{"clusters":["other"]}`, false},
		{"a foreign server", http.StatusNotFound, "not found", false},
		{"not JSON", http.StatusOK, "<html>shop</html>", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/clusters" {
					http.NotFound(w, r)
					return
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			cfg := clusterconfig.Default()
			cfg.Metadata.Name = "shop"
			o := &Options{Config: cfg, EKSPort: srv.Listener.Addr().(*net.TCPAddr).Port}
			if got := o.daemonAnswers(); got != tc.want {
				t.Errorf("daemonAnswers() = %v, want %v", got, tc.want)
			}
		})
	}
}
