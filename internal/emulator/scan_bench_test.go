package emulator_test

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkScan times `fargatekit scan` and `fargatekit upgrade plan` on an
// emulated cluster of 5,000 pods (50 Deployments of 100 replicas on the 100
// EC2 nodes of examples/emulator/scale, and 20 on Fargate), next to one
// `kubectl get pods,nodes,deployments,replicasets -A -o json` on the same
// cluster: the list that bounds what they can do. docs/benchmarks.md quotes
// it.
func BenchmarkScan(b *testing.B) {
	c := start(b, "scale")
	c.namespace("load")
	c.namespace("apps")
	const deployments, replicas = 50, 100
	for i := range deployments {
		c.deploy(deployment("load", fmt.Sprintf("d%02d", i), replicas, nil))
	}
	c.deploy(deployment("apps", "web", 20, nil))
	began := time.Now()
	eventually(b, 20*time.Minute, "5,020 pods running", func() error {
		pods, err := c.kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		if running < deployments*replicas+20 {
			return fmt.Errorf("%d of %d pods running", running, deployments*replicas+20)
		}
		return nil
	})
	b.Logf("5,020 pods running after %s", time.Since(began).Round(time.Second))
	// The emulator's own memory with 5,020 pods, as metrics of their own.
	b.Run("emulator", func(b *testing.B) {
		var mb map[string]float64
		for b.Loop() {
			mb = rss(b, c)
		}
		reportRSS(b, mb)
	})
	env := c.env()
	// What is timed reads the whole cluster: scan's report counts every pod.
	r, _ := c.scan(env)
	pods := 0
	for _, w := range r.Cluster.Workloads {
		pods += w.Pods.Fargate + w.Pods.EC2 + w.Pods.Pending
	}
	if pods != deployments*replicas+20 || r.Cluster.Nodes.EC2 != 100 {
		b.Fatalf("scan saw %d pods and %d EC2 nodes, want %d and 100", pods, r.Cluster.Nodes.EC2, deployments*replicas+20)
	}
	// And so does upgrade plan's: the node group to update, web to restart.
	plan := c.upgradePlan(env, "1.35")
	if cmds := plan.Hops[0].commands(); !slices.Contains(cmds, "aws eks update-nodegroup-version --cluster-name bench --nodegroup-name workers --kubernetes-version 1.35") ||
		!slices.ContainsFunc(cmds, func(s string) bool { return strings.HasPrefix(s, "kubectl rollout restart -n apps deployment/web") }) {
		b.Fatalf("upgrade plan's commands: %v", cmds)
	}
	run := func(b *testing.B, name string, args ...string) {
		b.ReportMetric(peakRun(b, env, name, args...), "MB-maxrss")
	}
	b.Run("scan", func(b *testing.B) { run(b, fargatekitBin, "scan", "-o", "json") })
	b.Run("upgrade-plan", func(b *testing.B) { run(b, fargatekitBin, "upgrade", "plan", "-o", "json") })
	b.Run("kubectl-get", func(b *testing.B) {
		run(b, filepath.Join(c.binDir, "kubectl"), "get", "pods,nodes,deployments,replicasets", "-A", "-o", "json")
	})
}

// peakRun runs a command at each iteration of b's loop, in env, and
// returns its largest resident size in MB. Exit 1 (findings) is no error.
func peakRun(b *testing.B, env []string, name string, args ...string) float64 {
	var peak int64
	for b.Loop() {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Stdout = env, io.Discard
		if err := cmd.Run(); err != nil {
			if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
				b.Fatalf("%s: %v", name, err)
			}
		}
		if u, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, u.Maxrss)
		}
	}
	return float64(peak) / 1024
}
