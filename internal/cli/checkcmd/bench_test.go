package checkcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// workloadYAML is a realistic Deployment: resources, probes, env, volumes, affinity.
const workloadYAML = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: svc-%[1]d-%[2]d
  namespace: team-%[1]d
  labels: {app: svc-%[1]d-%[2]d, team: team-%[1]d}
spec:
  replicas: 3
  selector:
    matchLabels: {app: svc-%[1]d-%[2]d}
  template:
    metadata:
      labels: {app: svc-%[1]d-%[2]d, team: team-%[1]d}
      annotations: {prometheus.io/scrape: "true"}
    spec:
      serviceAccountName: svc-%[1]d
      containers:
        - name: app
          image: registry.example.com/team-%[1]d/svc:%[2]d.0.1
          ports: [{containerPort: 8080, name: http}]
          env:
            - {name: LOG_LEVEL, value: info}
            - {name: DB_HOST, valueFrom: {secretKeyRef: {name: db, key: host}}}
          resources:
            requests: {cpu: 500m, memory: 1Gi}
            limits: {memory: 1Gi}
          readinessProbe: {httpGet: {path: /ready, port: http}, periodSeconds: 5}
          livenessProbe: {httpGet: {path: /live, port: http}, periodSeconds: 10}
          volumeMounts: [{name: config, mountPath: /etc/svc}]
        - name: proxy
          image: envoyproxy/envoy:v1.31.0
          resources: {requests: {cpu: 100m, memory: 128Mi}}
      volumes:
        - {name: config, configMap: {name: svc-%[1]d-%[2]d}}
      affinity:
        podAntiAffinity:
          preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 100
              podAffinityTerm:
                topologyKey: topology.kubernetes.io/zone
                labelSelector: {matchLabels: {app: svc-%[1]d-%[2]d}}
`

// writeCorpus writes files files of perFile Deployments each.
func writeCorpus(b *testing.B, files, perFile int) string {
	b.Helper()
	dir := b.TempDir()
	for f := range files {
		var data []byte
		for w := range perFile {
			data = fmt.Appendf(data, workloadYAML, f, w)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("team-%04d.yaml", f)), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkCheck runs the whole check (reading, decoding, every rule, the
// cluster rules) over generated corpora of 10 Deployments per file. Run it
// with GOMAXPROCS=1 to measure one core: see docs/benchmarks.md.
func BenchmarkCheck(b *testing.B) {
	price, err := fargate.PriceIn(fargate.DefaultRegion)
	if err != nil {
		b.Fatal(err)
	}
	profiles := []fargate.Profile{{Name: "teams", Selectors: []fargate.Selector{{Namespace: "team-*"}}}}
	for _, files := range []int{100, 1000} {
		const perFile = 10
		b.Run(fmt.Sprintf("files=%d", files), func(b *testing.B) {
			dir := writeCorpus(b, files, perFile)
			objects := files * perFile
			var peak uint64
			b.ResetTimer()
			for b.Loop() {
				ctx := &rules.Context{Namespace: "default", TargetVersion: "1.35", Region: fargate.DefaultRegion, Price: price, Profiles: profiles}
				res, errs := analyze(ctx, builtin.Rules(), rules.Options{}, &manifest.Loader{}, []string{dir}, func() {})
				if len(errs) > 0 || len(res.Workloads) != objects {
					b.Fatalf("%d errors, %d workloads", len(errs), len(res.Workloads))
				}
				// The retained heap with the result still alive: what the
				// engine keeps per workload, not per file read.
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				runtime.KeepAlive(res)
			}
			b.ReportMetric(float64(objects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
			b.ReportMetric(float64(peak)/float64(objects), "retained-B/object")
		})
	}
}
