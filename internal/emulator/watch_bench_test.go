package emulator_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
)

// BenchmarkWatchProfileLatency times watch, installed from its chart with
// --eks-interval 10s and the chart's --coalesce (2s), from a change only the
// EKS API shows to its finding in the metrics: after the profile-merge
// incident, each iteration deletes the merged profile (the drift ends:
// no profile matches the pods on EC2 any more), creates it again, and
// times from the moment DescribeFargateProfile says ACTIVE until
// fargatekit_findings counts the drift again. Issue 47 asks for at most
// the interval + 15 s. docs/benchmarks.md quotes it.
func BenchmarkWatchProfileLatency(b *testing.B) {
	c := start(b, "incident")
	c.deployIncident()
	env := c.env()
	watched := c.installWatch(env, "--coalesce", "2s")
	c.mergeDeletingFirst()
	drift := `fargatekit_findings{name="drift-off-fargate",namespace="orders",rule="LV001",severity="blocker"}`
	is := func(want float64) func() error {
		return func() error {
			if v := watched(drift); v != want {
				return fmt.Errorf("%s = %v, want %v", drift, v, want)
			}
			return nil
		}
	}
	eventually(b, time.Minute, "the drift in the metrics", is(1))
	var latencies []time.Duration
	for b.Loop() {
		c.deleteProfile("apps")
		eventually(b, time.Minute, "the drift ends with the profile", is(0))
		if err := c.createProfile("apps", incidentNamespaces...); err != nil {
			b.Fatal(err)
		}
		var active time.Time
		eventually(b, time.Minute, "the profile ACTIVE", func() error {
			out, err := c.eks.DescribeFargateProfile(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(c.name), FargateProfileName: aws.String("apps")})
			if err != nil {
				return err
			}
			if out.FargateProfile.Status != ekstypes.FargateProfileStatusActive {
				return fmt.Errorf("profile apps %s", out.FargateProfile.Status)
			}
			active = time.Now()
			return nil
		})
		eventually(b, 2*time.Minute, "the drift in the metrics again", is(1))
		latencies = append(latencies, time.Since(active))
	}
	slices.Sort(latencies)
	b.ReportMetric(latencies[len(latencies)/2].Seconds(), "s-p50")
	b.ReportMetric(latencies[len(latencies)-1].Seconds(), "s-max")
}
