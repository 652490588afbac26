package emulator_test

import (
	"bufio"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fargatekit/fargatekit/pkg/spread"
)

// BenchmarkSpreadAdmission creates replicas of one ReplicaSet at 50 per
// second through spread's webhook on the emulator (server-side dry run:
// the webhooks run, nothing is stored), and reports the share of
// admissions the API server saw spread's webhook answer within 5 ms, from
// the API server's own histogram
// apiserver_admission_webhook_admission_duration_seconds, whose first
// bucket is 5 ms. docs/benchmarks.md quotes it.
func BenchmarkSpreadAdmission(b *testing.B) {
	c := start(b, "spread")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{spread.EnabledLabel: "true"}}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	eventually(b, time.Minute, "the namespace's default service account", func() error {
		_, err := c.kube.CoreV1().ServiceAccounts("apps").Get(ctx, "default", metav1.GetOptions{})
		return err
	})
	c.installSpread(c.env())
	controller := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Namespace: "apps", Labels: map[string]string{"app": "web"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: types.UID("bench-rs"), Controller: &controller}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "public.ecr.aws/nginx/nginx:1.27"}}},
	}
	// client-go's default of 5 requests per second would pace the loop.
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.state, "kubeconfig"))
	if err != nil {
		b.Fatal(err)
	}
	rc.QPS, rc.Burst = 200, 200
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		b.Fatal(err)
	}
	before := webhookLatency(b, c)
	tick := time.NewTicker(20 * time.Millisecond) // 50 per second
	defer tick.Stop()
	for b.Loop() {
		<-tick.C
		if _, err := client.CoreV1().Pods("apps").Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
			b.Fatal(err)
		}
	}
	after := webhookLatency(b, c)
	n := after.count - before.count
	if n < float64(b.N) {
		b.Fatalf("the API server counted %v calls of spread's webhook for %d pods created", n, b.N)
	}
	b.ReportMetric(100*(after.within5ms-before.within5ms)/n, "%≤5ms")
}

type latency struct{ count, within5ms float64 }

// webhookLatency reads the API server's histogram of spread's namespace
// webhook.
func webhookLatency(b *testing.B, c *cluster) latency {
	b.Helper()
	data, err := c.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		b.Fatalf("reading the API server's metrics: %v", err)
	}
	var l latency
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds") || !strings.Contains(line, `name="namespace.spread.fargatekit.io"`) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			b.Fatalf("metric line %q: %v", line, err)
		}
		switch {
		case strings.HasPrefix(line, "apiserver_admission_webhook_admission_duration_seconds_count"):
			l.count += v
		case strings.Contains(line, `le="0.005"`):
			l.within5ms += v
		}
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	return l
}
