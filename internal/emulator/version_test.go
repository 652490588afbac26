package emulator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

func TestEmulatedVersion(t *testing.T) {
	for _, tc := range []struct{ binary, version, want string }{
		{"1.35", "1.35", "1.35"},
		{"1.35", "1.33", "1.33"},
		{"1.35", "1.32", "1.32"}, // the oldest a 1.35 build emulates
		{"1.35", "1.31", "1.32"},
		{"1.35", "1.23", "1.32"},
		{"1.35", "1.36", "1.35"}, // newer than the build: the build's
		{"1.35", "2.1", "1.35"},
		{"1.35", "0.9", "1.35"}, // not a version
		{"1.35", "", "1.35"},
		{"1.2", "1.1", "1.1"},
	} {
		if got := EmulatedVersion(tc.binary, tc.version); got != tc.want {
			t.Errorf("EmulatedVersion(%s, %s) = %s, want %s", tc.binary, tc.version, got, tc.want)
		}
	}
}

// kwokYAML is the part of a kwokctl 0.8 kwok.yaml that setArgs reads and
// writes.
const kwokYAML = `apiVersion: config.kwok.x-k8s.io/v1alpha1
components:
- args:
  - --data-dir=/state/etcd
  name: etcd
- args:
  - --bind-address=127.0.0.1
  - --emulated-version=1.32
  - --emulated-version=1.33
  name: kube-apiserver
- args:
  - --bind-address=127.0.0.1
  - --emulated-version=1.33
  name: kube-controller-manager
- args:
  - --bind-address=127.0.0.1
  name: kube-scheduler
- args:
  - --config=/state/kwok/clusters/shop/kwok.yaml
  - --server-address=127.0.0.1:4000
  name: kwok-controller
componentsPatches:
- extraArgs:
  - key: emulated-version
    override: false
    value: "1.33"
  - key: egress-selector-config-file
    override: false
    value: /state/egress-selector.yaml
  name: kube-apiserver
kind: KwokctlConfiguration
options:
  components:
  - etcd
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: node-initialize
spec: {}
`

func TestSetArgs(t *testing.T) {
	args := func(data []byte) map[string][]string {
		var cfg struct {
			Components []struct {
				Name string   `json:"name"`
				Args []string `json:"args"`
			} `json:"components"`
			Patches []struct {
				Name  string `json:"name"`
				Extra []struct {
					Key, Value string
				} `json:"extraArgs"`
			} `json:"componentsPatches"`
		}
		if err := yaml.Unmarshal(data, &cfg); err != nil {
			t.Fatalf("%v\n%s", err, data)
		}
		out := map[string][]string{}
		for _, c := range cfg.Components {
			out[c.Name] = c.Args
		}
		for _, p := range cfg.Patches {
			for _, e := range p.Extra {
				out["patch "+p.Name] = append(out["patch "+p.Name], e.Key+"="+e.Value)
			}
		}
		return out
	}
	got, changed, err := setArgs([]byte(kwokYAML), servingArgs("1.34"))
	if err != nil || !changed {
		t.Fatalf("to 1.34: changed %v, %v", changed, err)
	}
	want := args([]byte(kwokYAML))
	want["kube-apiserver"][2] = "--emulated-version=1.34" // the last one counts
	want["kube-controller-manager"] = []string{"--bind-address=127.0.0.1", "--emulated-version=1.34", "--leader-elect=false"}
	want["kube-scheduler"] = []string{"--bind-address=127.0.0.1", "--emulated-version=1.34", "--leader-elect=false"}
	want["patch kube-apiserver"] = []string{"egress-selector-config-file=/state/egress-selector.yaml", "emulated-version=1.34"}
	if diff := cmp.Diff(want, args(got)); diff != "" {
		t.Errorf("to 1.34 (-want +got):\n%s", diff)
	}
	rest := func(data []byte) map[string]any {
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, "components")
		delete(doc, "componentsPatches")
		return doc
	}
	if diff := cmp.Diff(rest([]byte(kwokYAML)), rest(got)); diff != "" {
		t.Errorf("the rest of the configuration changed (-before +after):\n%s", diff)
	}
	stages := func(data []byte) string { _, after, _ := strings.Cut(string(data), "\n---\n"); return after }
	if stages(got) == "" || stages(got) != stages([]byte(kwokYAML)) {
		t.Errorf("the stages changed:\n%s", got)
	}

	// Already there: nothing changes.
	again, changed, err := setArgs(got, servingArgs("1.34"))
	if err != nil || changed || string(again) != string(got) {
		t.Errorf("1.34 again: changed %v, %v", changed, err)
	}

	// A configuration without the scheduler is not one kwokctl made here.
	noScheduler := strings.Replace(kwokYAML, "name: kube-scheduler", "name: kwok-controller", 1)
	if _, _, err := setArgs([]byte(noScheduler), servingArgs("1.34")); err == nil || !strings.Contains(err.Error(), "no component kube-scheduler") {
		t.Errorf("without kube-scheduler: %v", err)
	}
	if _, _, err := setArgs([]byte("components: {"), servingArgs("1.34")); err == nil {
		t.Error("broken YAML: no error")
	}
	if _, _, err := setArgs([]byte("kind: Stage\n"), servingArgs("1.34")); err == nil {
		t.Error("no KwokctlConfiguration: no error")
	}
}

// TestSetArgsRepeated: a repeated argument (kwok-controller's second
// --config) is added next to the flag's other value, once.
func TestSetArgsRepeated(t *testing.T) {
	arg := componentArg{component: ComponentKwok, key: "config", value: "/state/kwok-stages.yaml", repeated: true}
	got, changed, err := setArgs([]byte(kwokYAML), []componentArg{arg})
	if err != nil || !changed {
		t.Fatalf("changed %v, %v", changed, err)
	}
	var cfg struct {
		Components []struct {
			Name string   `json:"name"`
			Args []string `json:"args"`
		} `json:"components"`
	}
	if err := yaml.Unmarshal(got, &cfg); err != nil {
		t.Fatal(err)
	}
	want := []string{"--config=/state/kwok/clusters/shop/kwok.yaml", "--server-address=127.0.0.1:4000", "--config=/state/kwok-stages.yaml"}
	if diff := cmp.Diff(want, cfg.Components[4].Args); diff != "" {
		t.Errorf("kwok-controller (-want +got):\n%s", diff)
	}
	if again, changed, err := setArgs(got, []componentArg{arg}); err != nil || changed || string(again) != string(got) {
		t.Errorf("again: changed %v, %v", changed, err)
	}
}

// TestExtraArgs: every component's first argument comes before any
// second, as kwokctl 0.8 files them.
func TestExtraArgs(t *testing.T) {
	got := extraArgs([]componentArg{
		{component: "etcd", key: "a", value: "1"}, {component: "etcd", key: "b", value: "2"},
		{component: "kwok-controller", key: "c", value: "3"}, {component: "etcd", key: "d", value: "4"}, {component: "kwok-controller", key: "e", value: "5"},
	})
	want := []string{"--extra-args", "etcd=a=1", "--extra-args", "kwok-controller=c=3",
		"--extra-args", "etcd=b=2", "--extra-args", "etcd=d=4", "--extra-args", "kwok-controller=e=5"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("extraArgs (-want +got):\n%s", diff)
	}
}

// TestHeartbeatArgs: a node's Lease and the controller-manager's patience
// with it keep Kubernetes' ratio: a 40 s Lease gives its defaults (NotReady
// after 50 s, looked at every 5 s), the fast timings' 200 s five times as
// much.
func TestHeartbeatArgs(t *testing.T) {
	for lease, want := range map[time.Duration][]string{
		40 * time.Second:  {"kwok-controller node-lease-duration-seconds=40", "kube-controller-manager node-monitor-grace-period=50s", "kube-controller-manager node-monitor-period=5s"},
		200 * time.Second: {"kwok-controller node-lease-duration-seconds=200", "kube-controller-manager node-monitor-grace-period=4m10s", "kube-controller-manager node-monitor-period=25s"},
	} {
		cfg := &clusterconfig.Config{Timings: clusterconfig.Timings{NodeLease: clusterconfig.Duration{Duration: lease}}}
		var got []string
		for _, a := range (&Options{Config: cfg}).heartbeatArgs() {
			got = append(got, a.component+" "+a.key+"="+a.value)
		}
		if !slices.Equal(got, want) {
			t.Errorf("lease %s: %q, want %q", lease, got, want)
		}
	}
}
