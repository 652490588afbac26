package emulator_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkFargateScale measures memory with 5,000 Fargate pods, each on
// its own node as on Fargate: 50 Deployments of 100 replicas in the
// namespace spread places (examples/emulator/spread), spread installed.
// It reports spread's peak resident size once they run, and the peak
// resident size of `fargatekit scan -o json` next to `kubectl get
// pods,nodes,deployments,replicasets -A -o json` on the same cluster,
// with their ratio. docs/benchmarks.md quotes it.
func BenchmarkFargateScale(b *testing.B) {
	c := start(b, "spread")
	env := c.env()
	c.spreadNamespaces()
	_, spreadPID := c.installSpread(env)
	const deployments, replicas = 50, 100
	for i := range deployments {
		c.deploy(deployment("apps", fmt.Sprintf("d%02d", i), replicas, nil))
	}
	began := time.Now()
	eventually(b, 30*time.Minute, "5,000 Fargate pods running", func() error {
		pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && strings.HasPrefix(p.Spec.NodeName, "fargate-") {
				running++
			}
		}
		if running < deployments*replicas {
			return fmt.Errorf("%d of %d pods running on Fargate", running, deployments*replicas)
		}
		return nil
	})
	b.Logf("5,000 Fargate pods running after %s", time.Since(began).Round(time.Second))
	// A process's resident size counts the pages of its binary it touched,
	// file-backed and shared: fargatekit's alone are most of an idle one's.
	b.Run("spread", func(b *testing.B) {
		var m map[string]float64
		for b.Loop() {
			m = status(b, spreadPID)
		}
		reportStatus(b, m)
	})
	b.Run("fargatekit-idle", func(b *testing.B) {
		var m map[string]float64
		for b.Loop() {
			m = idle(b)
		}
		reportStatus(b, m)
	})
	// watch lists the 5,000 pods and nodes as it starts; then each refused
	// pod is a finding of LV003, timed from its creation to the metric.
	watched, watchPID := c.watch(env)
	b.Run("watch", func(b *testing.B) {
		refused := `fargatekit_findings{name="refused-by-fargate",namespace="apps",rule="LV003",severity="blocker"}`
		var latencies []time.Duration
		refuse := func(name string) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: "public.ecr.aws/example/a:1",
					SecurityContext: &corev1.SecurityContext{Privileged: new(true)}}}}}
			before := metric(b, watched, refused)
			created := time.Now()
			if _, err := c.kube.CoreV1().Pods("apps").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			eventually(b, time.Minute, "watch publishes the refusal", func() error {
				if v := metric(b, watched, refused); v != before+1 {
					return fmt.Errorf("%s = %v, want %v", refused, v, before+1)
				}
				return nil
			})
			latencies = append(latencies, time.Since(created))
		}
		// Ten refusals an iteration: enough of them for the quantiles.
		for i := 0; b.Loop(); i++ {
			for j := range 10 {
				refuse(fmt.Sprintf("refused-%d-%d", i, j))
			}
		}
		slices.Sort(latencies)
		b.ReportMetric(latencies[len(latencies)/2].Seconds(), "s-p50")
		b.ReportMetric(latencies[len(latencies)-1].Seconds(), "s-max")
		m := status(b, watchPID)
		reportStatus(b, m)
		if dir := os.Getenv("FARGATEKIT_PROFILES"); dir != "" {
			profile(b, strings.TrimSuffix(watched, "/metrics")+"/debug/pprof/heap", filepath.Join(dir, "watch.heap"))
		}
	})
	// kube-state-metrics, the peer, on the same cluster: pods, nodes and
	// their owners, as watch reads; KUBE_STATE_METRICS names its binary
	// (docs/benchmarks.md says how to build it).
	b.Run("kube-state-metrics", func(b *testing.B) {
		bin := os.Getenv("KUBE_STATE_METRICS")
		if bin == "" {
			b.Skip("KUBE_STATE_METRICS names no kube-state-metrics binary")
		}
		port := freePort(b)
		cmd := exec.Command(bin, "--kubeconfig", filepath.Join(c.state, "kubeconfig"), "--resources=pods,nodes,deployments,replicasets",
			"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--telemetry-host", "127.0.0.1", "--telemetry-port", strconv.Itoa(freePort(b)))
		var log strings.Builder
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
		eventually(b, 5*time.Minute, "kube-state-metrics has every pod", func() error {
			resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
			if err != nil {
				return err
			}
			defer func() { _ = resp.Body.Close() }()
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				return err
			}
			if n := strings.Count(string(data), "\nkube_pod_info{"); n < deployments*replicas {
				return fmt.Errorf("%d pods in kube_pod_info (log: %s)", n, log.String())
			}
			return nil
		})
		var m map[string]float64
		for b.Loop() {
			m = status(b, cmd.Process.Pid)
		}
		reportStatus(b, m)
	})
	maxRSS := map[string]float64{}
	run := func(b *testing.B, name string, args ...string) {
		maxRSS[b.Name()] = peakRun(b, env, name, args...)
		b.ReportMetric(maxRSS[b.Name()], "MB-maxrss")
	}
	b.Run("scan", func(b *testing.B) { run(b, fargatekitBin, "scan", "-o", "json") })
	b.Run("kubectl-get", func(b *testing.B) {
		run(b, filepath.Join(c.binDir, "kubectl"), "get", "pods,nodes,deployments,replicasets", "-A", "-o", "json")
	})
	scan, list := maxRSS["BenchmarkFargateScale/scan"], maxRSS["BenchmarkFargateScale/kubectl-get"]
	if scan > 0 && list > 0 {
		b.Logf("scan's peak resident size is %.2f× kubectl get's (%.0f MB against %.0f MB)", scan/list, scan, list)
	}
}

// reportStatus reports what status read.
func reportStatus(b *testing.B, m map[string]float64) {
	b.ReportMetric(m["VmHWM"], "MB-peak")
	b.ReportMetric(m["RssAnon"], "MB-anon")
	b.ReportMetric(m["RssFile"], "MB-file")
}

// status reads the sizes of process pid's memory in MB from
// /proc/PID/status: VmHWM (peak resident), RssAnon, RssFile.
func status(b *testing.B, pid int) map[string]float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatalf("the status of process %d: %v", pid, err)
	}
	out := map[string]float64{}
	for line := range strings.Lines(string(data)) {
		name, kb, ok := strings.Cut(line, ":")
		if !ok || name != "VmHWM" && name != "RssAnon" && name != "RssFile" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(kb), " kB"))
		if err != nil {
			b.Fatalf("process %d: %q", pid, line)
		}
		out[name] = float64(n) / 1024
	}
	if len(out) != 3 {
		b.Fatalf("process %d: VmHWM, RssAnon and RssFile not all in its status", pid)
	}
	return out
}

// idle is status of a fargatekit process that waits, having read nothing:
// `fargatekit check -` on a standard input left open.
func idle(b *testing.B) map[string]float64 {
	b.Helper()
	cmd := exec.Command(fargatekitBin, "check", "-")
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	var m map[string]float64
	// Its resident size grows while it starts: read until it stays.
	for range 50 {
		time.Sleep(100 * time.Millisecond)
		next := status(b, cmd.Process.Pid)
		if m != nil && next["VmHWM"] == m["VmHWM"] {
			return next
		}
		m = next
	}
	return m
}

// profile saves the Go profile at url into file.
func profile(b *testing.B, url, file string) {
	b.Helper()
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %s %v", url, resp.Status, err)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		b.Fatal(err)
	}
}
