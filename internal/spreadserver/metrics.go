package spreadserver

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are spread's Prometheus metrics, documented in docs/spread.md.
type Metrics struct {
	admissions    *prometheus.CounterVec
	placements    *prometheus.CounterVec
	latency       prometheus.Histogram
	skew          *prometheus.GaugeVec
	evictions     *prometheus.CounterVec
	skipped       *prometheus.CounterVec
	refreshErrors prometheus.Counter
	profiles      prometheus.Gauge
	refreshed     prometheus.Gauge
	available     *prometheus.GaugeVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		admissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fargatekit_spread_admissions_total",
			Help: "Pods the webhook was asked about, by result: placed, untouched (not opted in to any per-AZ profile set, or a profile chosen by the pod) or error (admitted unchanged).",
		}, []string{"result"}),
		placements: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fargatekit_spread_placements_total",
			Help: "Pods the webhook sent to each AZ.",
		}, []string{"zone"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fargatekit_spread_admission_duration_seconds",
			Help:    "Time the webhook takes to decide on a pod.",
			Buckets: []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1},
		}),
		skew: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fargatekit_spread_skew",
			Help: "Max minus min of a workload's Fargate pods across its AZs, as the rebalancer last saw it.",
		}, []string{"namespace", "owner"}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fargatekit_spread_evictions_total",
			Help: "Rebalancing evictions, by result: evicted, blocked (a PodDisruptionBudget refused), dry-run, failed, or replaced (a pod that waited in an unavailable AZ).",
		}, []string{"result"}),
		skipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fargatekit_spread_rebalance_skipped_total",
			Help: "Times the rebalancer left a skewed workload alone, by reason: pinned (its template chooses its profile or zone), rollout, unknown-owner (a ReplicaSet not of a Deployment), misplaced (a pod runs away from the AZ spread chose), workload-cap, cluster-cap, unreadable.",
		}, []string{"reason"}),
		refreshErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fargatekit_spread_zone_refresh_errors_total",
			Help: "Failed reads of the per-AZ profiles from the EKS and EC2 APIs; the last known mapping stays in use.",
		}),
		profiles: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fargatekit_spread_zone_profiles",
			Help: "Per-AZ Fargate profiles (ACTIVE, one subnet) in use.",
		}),
		refreshed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "fargatekit_spread_zone_refresh_timestamp_seconds",
			Help: "When the per-AZ profiles were last read successfully (Unix time).",
		}),
		available: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "fargatekit_spread_zone_available",
			Help: "1 when spread sends pods to the AZ, 0 when it leaves it out: excluded, or a pod it sent there waited unscheduled too long.",
		}, []string{"zone"}),
	}
	reg.MustRegister(m.admissions, m.placements, m.latency, m.skew, m.evictions, m.skipped, m.refreshErrors, m.profiles, m.refreshed, m.available)
	for _, r := range []string{"placed", "untouched", "error"} {
		m.admissions.WithLabelValues(r)
	}
	for _, r := range []string{"evicted", "blocked", "dry-run", "failed", "replaced"} {
		m.evictions.WithLabelValues(r)
	}
	for _, r := range skipReasons {
		m.skipped.WithLabelValues(r)
	}
	return m
}
