package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cli/versioncmd"
	"github.com/fargatekit/fargatekit/pkg/deprecation"
)

var update = flag.Bool("update", false, "rewrite golden files")

func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main("fargatekit", args, streams.Streams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

const (
	manifests = "testdata/check/manifests"
	profiles  = "testdata/check/profiles"
)

// TestCheckGolden runs the whole pipeline on a directory with a broken file:
// every other file is still checked, the JSON says what was found, and the
// exit code is 2 for the input error.
func TestCheckGolden(t *testing.T) {
	code, out, stderr := run(t, "", "check", "--profiles", filepath.Join(profiles, "cluster.yaml"),
		"--target-version", "1.35", "-o", "json", manifests)
	if code != 2 {
		t.Errorf("exit code %d, want 2 (input error); stderr: %s", code, stderr)
	}
	checkGolden(t, "testdata/check/golden.json", strings.ReplaceAll(out, `"version": "`+versioncmd.Current(build()).Version+`"`, `"version": "test"`))
}

// checkGolden compares output with a golden file, which -update rewrites.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", golden, diff)
	}
}

type jsonOut struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Message  string `json:"message"`
	} `json:"findings"`
	Workloads []struct {
		Object struct {
			Name string `json:"name"`
		} `json:"object"`
		Fargate bool   `json:"fargate"`
		Profile string `json:"profile"`
	} `json:"workloads"`
	Errors []struct {
		File    string `json:"file"`
		Message string `json:"message"`
	} `json:"errors"`
}

func decode(t *testing.T, out string) jsonOut {
	t.Helper()
	var j jsonOut
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return j
}

const cleanPod = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: prod}
spec:
  restartPolicy: Always
  containers:
    - name: c
      image: nginx
      resources: {requests: {cpu: 250m, memory: 256Mi}}
`

const warnPod = `apiVersion: v1
kind: Pod
metadata: {name: p, namespace: prod}
spec:
  containers:
    - name: c
      image: nginx
`

func TestCheckExitCodes(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "cfg.yaml")
	if err := os.WriteFile(cfg, []byte("disable: [no-resource-requests]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refusalOff := filepath.Join(t.TempDir(), "off.yaml")
	if err := os.WriteFile(refusalOff, []byte("disable: [host-network]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hostNet := strings.Replace(cleanPod, "spec:\n", "spec:\n  hostNetwork: true\n", 1)
	for _, tc := range []struct {
		name     string
		stdin    string
		args     []string
		want     int
		inStderr string
	}{
		{"clean", cleanPod, []string{"check", "-"}, 0, ""},
		{"blocker", hostNet, []string{"check", "-"}, 1, ""},
		{"fail-on none", hostNet, []string{"check", "--fail-on", "none", "-"}, 0, ""},
		{"info below blocker", warnPod, []string{"check", "-"}, 0, ""},
		{"fail-on info", warnPod, []string{"check", "--fail-on", "info", "-"}, 1, ""},
		{"settings disable the rule", warnPod, []string{"check", "--fail-on", "info", "--settings", cfg, "-"}, 0, ""},
		{"--config, the deprecated name of --settings", warnPod, []string{"check", "--fail-on", "info", "--config", cfg, "-"}, 0, ""},
		{"a refusal rule cannot be disabled", hostNet, []string{"check", "--settings", refusalOff, "-"}, 2, "FG006 reports what fargate-scheduler refuses"},
		{"no profile matches: not on Fargate", hostNet, []string{"check", "--fargate-profile", "name=web,namespace=web", "-"}, 0, ""},
		{"missing path", "", []string{"check", "does-not-exist.yaml"}, 2, ""},
		{"no input", "", []string{"check"}, 2, "no input"},
		{"bad output", cleanPod, []string{"check", "-o", "xml", "-"}, 2, `--output: unknown output format "xml"`},
		{"bad fail-on", cleanPod, []string{"check", "--fail-on", "high", "-"}, 2, "--fail-on"},
		{"bad target version", cleanPod, []string{"check", "--target-version", "one", "-"}, 2, "--target-version"},
		{"target beyond the calendar", cleanPod, []string{"check", "--target-version", "1.99", "-"}, 0, "removals-known-through=" + deprecation.NewestRemoval()},
		{"bad region", cleanPod, []string{"check", "--region", "mars-1", "-"}, 2, "no Fargate price"},
		{"missing settings file", cleanPod, []string{"check", "--settings", "nope.yaml", "-"}, 2, "reading settings"},
		{"unknown flag", cleanPod, []string{"check", "--nope", "-"}, 2, "unknown flag"},
		{"empty standard input", "", []string{"check", "-"}, 2, ""},
		{"only comments", "# nothing here\n---\n", []string{"check", "-"}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, tc.stdin, tc.args...)
			if code != tc.want {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.inStderr) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.inStderr)
			}
		})
	}
}

// TestCheckBadProfileFile checks that a bad profile file is an input error
// (exit 2) and the manifests are still checked with the good profiles.
func TestCheckBadProfileFile(t *testing.T) {
	code, out, _ := run(t, "", "check", "-o", "json",
		"--profiles", filepath.Join(profiles, "bad.yaml"),
		"--profiles", filepath.Join(profiles, "describe.json"),
		filepath.Join(manifests, "web.yaml"))
	if code != 2 {
		t.Errorf("exit code %d, want 2", code)
	}
	j := decode(t, out)
	if len(j.Errors) != 1 || !strings.Contains(j.Errors[0].Message, "reserved prefix") || !strings.Contains(j.Errors[0].Message, "namespace is required") {
		t.Errorf("errors = %+v, want one naming both problems of bad.yaml", j.Errors)
	}
	if len(j.Workloads) != 1 || !j.Workloads[0].Fargate || j.Workloads[0].Profile != "prod" {
		t.Errorf("workloads = %+v, want web on profile prod from describe.json", j.Workloads)
	}
}

// TestCheckProfileSources checks that the eksctl config, the AWS CLI JSON
// and the inline flag describe the same profile the same way.
func TestCheckProfileSources(t *testing.T) {
	var outputs []string
	for _, args := range [][]string{
		{"--profiles", filepath.Join(profiles, "cluster.yaml")},
		{"--profiles", filepath.Join(profiles, "describe.json")},
		{"--fargate-profile", "name=prod,namespace=prod"},
	} {
		args = append([]string{"check", "-o", "json", "--target-version", "1.35"}, args...)
		_, out, _ := run(t, "", append(args, filepath.Join(manifests, "web.yaml"), filepath.Join(manifests, "agent.yaml"))...)
		outputs = append(outputs, out)
	}
	for i := 1; i < len(outputs); i++ {
		if diff := cmp.Diff(outputs[0], outputs[i]); diff != "" {
			t.Errorf("profile source %d differs from the eksctl config (-eksctl +other):\n%s", i, diff)
		}
	}
	j := decode(t, outputs[0])
	if len(j.Workloads) != 2 || j.Workloads[0].Fargate || !j.Workloads[1].Fargate {
		t.Errorf("workloads = %+v, want agent on EC2 and web on Fargate", j.Workloads)
	}
}

func TestHelpHasExamples(t *testing.T) {
	for _, cmd := range []string{"check", "rules"} {
		code, out, _ := run(t, "", cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help: exit %d, no Examples section:\n%s", cmd, code, out)
		}
	}
}

func TestRulesOutputs(t *testing.T) {
	for _, format := range []string{"text", "json", "markdown"} {
		code, out, stderr := run(t, "", "rules", "-o", format)
		if code != 0 || !strings.Contains(out, "FG001") || !strings.Contains(out, "DEP001") {
			t.Errorf("rules -o %s: exit %d, stderr %s, output lacks rules", format, code, stderr)
		}
	}
	if code, _, _ := run(t, "", "rules", "-o", "yaml"); code != 2 {
		t.Errorf("rules -o yaml: exit %d, want 2", code)
	}
}

// TestUpgradeCheckExitCodes: upgrade check exits 1 when the next hop is
// blocked (an API it removes is declared), 0 when it can go, 2 when a
// path cannot be read.
func TestUpgradeCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	removed := filepath.Join(dir, "removed.yaml")
	if err := os.WriteFile(removed, []byte("apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata: {name: batch}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"blocked", []string{"upgrade", "check", "--from", "1.31", removed}, 1},
		{"removed already: still blocked", []string{"upgrade", "check", "--from", "1.33", removed}, 1},
		{"nothing declared: ready", []string{"upgrade", "check", "--from", "1.30"}, 0},
		{"a path missing", []string{"upgrade", "check", "--from", "1.30", filepath.Join(dir, "nope.yaml")}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code, out, stderr := run(t, "", tc.args...); code != tc.want {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.want, out, stderr)
			}
		})
	}
}

// TestPluginNames checks the names kubectl runs the binary by: as
// kubectl-fargatekit its help names it `kubectl fargatekit`, in the usage
// lines and in the examples; as kubectl_complete-fargatekit it completes its
// arguments; by any other name (fargatekit, a path, .exe) it is fargatekit.
func TestPluginNames(t *testing.T) {
	for _, tc := range []struct {
		arg0       string
		args       []string
		want, none []string
	}{
		{"/usr/local/bin/kubectl-fargatekit", []string{"emulator", "env", "--help"},
			[]string{"  kubectl fargatekit emulator env [flags]", `eval "$(kubectl fargatekit emulator env)"`}, []string{"\n  fargatekit emulator env [flags]"}},
		{"C:/bin/kubectl-fargatekit.exe", []string{"--help"},
			[]string{`Use "kubectl fargatekit [command] --help"`, "  kubectl fargatekit check --profiles cluster.yaml deploy/"}, []string{"\n  fargatekit check"}},
		{"kubectl_complete-fargatekit", []string{"sc"}, []string{"scan\t"}, []string{"check\t"}},
		{"fargatekit", []string{"--help"}, []string{`Use "fargatekit [command] --help"`, "\n  fargatekit check --profiles"}, []string{"kubectl"}},
		{"./fargatekit-dev", []string{"--help"}, []string{`Use "fargatekit [command] --help"`}, []string{"kubectl"}},
	} {
		var out, errOut bytes.Buffer
		if code := Main(tc.arg0, tc.args, streams.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}); code != 0 {
			t.Errorf("%s %v: exit %d\n%s", tc.arg0, tc.args, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s %v does not print %q:\n%s", tc.arg0, tc.args, w, out.String())
			}
		}
		for _, n := range tc.none {
			if strings.Contains(out.String(), n) {
				t.Errorf("%s %v prints %q:\n%s", tc.arg0, tc.args, n, out.String())
			}
		}
	}
}

// TestEvictionIntervalMinimum: an --eviction-interval under a second is a
// usage error naming the flag, before anything is read or started (0 made
// the rebalancer panic).
func TestEvictionIntervalMinimum(t *testing.T) {
	for _, args := range [][]string{
		{"spread", "serve", "--certificate-secret", "tls", "--service", "spread", "--eviction-interval", "0"},
		{"spread", "serve", "--certificate-secret", "tls", "--service", "spread", "--eviction-interval", "500ms"},
		{"spread", "install", "--emulator", "--state-dir", "does-not-exist", "--eviction-interval", "0s"},
	} {
		code, _, stderr := run(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "--eviction-interval") || !strings.Contains(stderr, "must be at least 1s") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 naming --eviction-interval and its minimum", args, code, stderr)
		}
	}
}

// TestEvictionCapsMinimum: a cap on the rebalancer's evictions under one is
// a usage error naming the flag.
func TestEvictionCapsMinimum(t *testing.T) {
	for _, flag := range []string{"--workload-evictions-per-hour", "--evictions-per-minute"} {
		for _, v := range []string{"0", "-3"} {
			code, _, stderr := run(t, "", "spread", "serve", "--certificate-secret", "tls", "--service", "spread", flag, v)
			if code != 2 || !strings.Contains(stderr, flag+" "+v+": must be at least 1") {
				t.Errorf("%s %s: exit %d, stderr %q; want exit 2 naming the flag and its minimum", flag, v, code, stderr)
			}
		}
	}
}

// TestFlagMinimums: a duration or count below what makes sense is a usage
// error (exit 2) naming the flag, before anything is read.
func TestFlagMinimums(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"spread", "serve", "--certificate-secret", "tls", "--service", "spread", "--refresh", "1s"}, "--refresh 1s: must be at least 10s"},
		{[]string{"spread", "serve", "--certificate-secret", "tls", "--service", "spread", "--unavailable-after", "5s"}, "--unavailable-after 5s: must be at least 10s"},
		{[]string{"spread", "serve", "--certificate-secret", "tls", "--service", "spread", "--zone-retry", "0s"}, "--zone-retry 0s: must be at least 10s"},
		{[]string{"spread", "install", "--emulator", "--zone-retry", "1s"}, "--zone-retry 1s: must be at least 10s"},
		{[]string{"emulator", "fault", "az-outage"}, "accepts 1 arg(s), received 0"},
		{[]string{"emulator", "fault", "fargate-patch", "--grace", "0s"}, "--grace 0s: must be at least 1s"},
		{[]string{"emulator", "fault", "fargate-patch", "--retry", "500ms"}, "--retry 500ms: must be at least 1s"},
		{[]string{"scan", "--stuck-after", "0s"}, "--stuck-after 0s: must be at least 1s"},
		{[]string{"watch", "serve", "--eks-interval", "1s"}, "--eks-interval 1s: must be at least 10s"},
		{[]string{"watch", "serve", "--metrics-bind-address", ":9090", "--eks-interval", "1s"}, "--eks-interval 1s: must be at least 10s"}, // controller-runtime's name is taken
		{[]string{"watch", "serve", "--coalesce", "0s"}, "--coalesce 0s: must be at least 100ms"},
		{[]string{"watch", "serve", "--resync", "1s"}, "--resync 1s: must be at least 10s"},
		{[]string{"watch", "serve", "--stuck-after", "0s"}, "--stuck-after 0s: must be at least 1s"},
		{[]string{"watch", "serve", "--repair-drift", "--repair-per-hour", "0"}, "--repair-per-hour 0: must be at least 1"},
		{[]string{"watch", "serve", "--repair-drift", "--repair-timeout", "0s"}, "--repair-timeout 0s: must be at least 1s"},
		{[]string{"watch", "serve", "--repair-after", "-1m"}, "--repair-after -1m0s: must not be negative"},
		{[]string{"watch", "install", "--emulator", "--coalesce", "10ms"}, "--coalesce 10ms: must be at least 100ms"},
		{[]string{"watch", "install", "--emulator", "--repair-after", "-1s"}, "--repair-after -1s: must not be negative"},
		{[]string{"watch", "install"}, "only --emulator is supported here"},
		{[]string{"watch", "uninstall"}, "only --emulator is supported here"},
		{[]string{"scan", "--subnet-headroom", "-1"}, "--subnet-headroom -1: must be 0"},
		{[]string{"fix", "drift", "--timeout", "0s"}, "--timeout 0s: must be at least 1s"},
		{[]string{"plan", "--old", "a.yaml", "--new", "b.yaml", "--delete-duration", "-5m"}, "--delete-duration -5m0s: must be at least 1s"},
	} {
		code, _, stderr := run(t, "", tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 with %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestUnknownSubcommand: a mistyped subcommand of a group is an error (exit
// 2) that names it and suggests the command meant, as kubectl does; the
// group alone still shows its help.
func TestUnknownSubcommand(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    int
		inError string
	}{
		{[]string{"fix", "drfit"}, 2, "unknown command \"drfit\" for \"fargatekit fix\"\n\nDid you mean this?\n\tdrift\n"},
		{[]string{"spread", "instal"}, 2, "Did you mean this?\n\tinstall\n"},
		{[]string{"emulator", "stauts"}, 2, "Did you mean this?\n\tstatus\n"},
		{[]string{"upgrade", "nothing-like-it"}, 2, `unknown command "nothing-like-it" for "fargatekit upgrade"`},
		{[]string{"watch", "serv"}, 2, "Did you mean this?\n\tserve\n"},
		{[]string{"chekc"}, 2, "Did you mean this?\n\tcheck\n"},
		{[]string{"fix"}, 0, ""},
		{[]string{"spread", "--help"}, 0, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, stderr := run(t, "", tc.args...)
			if code != tc.want {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.inError) {
				t.Errorf("stderr %q does not contain %q", stderr, tc.inError)
			}
			if tc.want == 0 && !strings.Contains(out, "Available Commands:") {
				t.Errorf("the group's help is not shown: %q", out)
			}
		})
	}
}
