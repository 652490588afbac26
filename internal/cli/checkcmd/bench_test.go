package checkcmd

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/fargatekit/fargatekit/internal/benchcorpus"
	"github.com/fargatekit/fargatekit/internal/manifest"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/rules"
	"github.com/fargatekit/fargatekit/pkg/rules/builtin"
)

// writeCorpus writes files files of perFile Deployments each.
func writeCorpus(b *testing.B, files, perFile int) string {
	b.Helper()
	dir := b.TempDir()
	if err := benchcorpus.Write(dir, files, perFile); err != nil {
		b.Fatal(err)
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
				disk := newDisk(builtin.Rules())
				res, errs := analyze(ctx, builtin.Rules(), rules.Options{}, &manifest.Loader{}, []string{dir}, func() {}, disk)
				found := disk.findings
				if len(errs) > 0 || res.Workloads.Len() != objects {
					b.Fatalf("%d errors, %d workloads", len(errs), res.Workloads.Len())
				}
				n := 0
				for range found.All() { // sorted, as the report reads them
					n++
				}
				if n != found.Len() || found.Err() != nil {
					b.Fatalf("%d of %d findings read: %v", n, found.Len(), found.Err())
				}
				n = 0
				for range res.Workloads.Sorted() {
					n++
				}
				if n != objects || res.Workloads.Err() != nil {
					b.Fatalf("%d of %d workloads read: %v", n, objects, res.Workloads.Err())
				}
				// The retained heap with the result still alive: what the
				// engine keeps per workload, not per file read. The full
				// collection that measures it is not the check's: it is not
				// timed (2-5 ms of 0.3-0.6 s).
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
				runtime.KeepAlive(res)
				b.StartTimer()
				if err := disk.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(objects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
			b.ReportMetric(float64(peak)/float64(objects), "retained-B/object")
		})
	}
}
