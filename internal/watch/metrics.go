package watch

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fargatekit/fargatekit/internal/report"
	"github.com/fargatekit/fargatekit/pkg/object"
)

// The metrics' names are a contract (docs/watch.md).
const (
	findingsMetric     = "fargatekit_findings"
	podsMetric         = "fargatekit_pods"
	costMetric         = "fargatekit_fargate_cost_dollars_per_month"
	zonePodsMetric     = "fargatekit_fargate_zone_pods"
	lastAnalysisMetric = "fargatekit_watch_last_analysis_timestamp_seconds"
	eksErrorsMetric    = "fargatekit_watch_eks_errors_total"
	durationMetric     = "fargatekit_watch_analysis_duration_seconds"
	repairsMetric      = "fargatekit_watch_repairs_total"
)

// metrics are what the controller publishes of each analysis.
type metrics struct {
	findings, pods, cost, zonePods *prometheus.GaugeVec
	lastAnalysis                   prometheus.Gauge
	eksErrors                      prometheus.Counter
	duration                       prometheus.Histogram

	// seen are the label sets of findings published once: a finding
	// resolved is 0, not gone, so that alerts and graphs see it end.
	seen map[findingLabels]bool
	// namespaces and zones are those of the last publish.
	namespaces, zones map[string]bool
}

type findingLabels struct{ rule, name, severity, namespace string }

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		findings: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: findingsMetric,
			Help: "Workloads (or nodes, profiles) with a finding of the rule now, by namespace."}, []string{"rule", "name", "severity", "namespace"}),
		pods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: podsMetric,
			Help: "Live pods by namespace and where they run: fargate, ec2, or pending (bound to no node)."}, []string{"namespace", "compute"}),
		cost: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: costMetric,
			Help: "What Fargate bills for a month of the namespace's running pods, at their provisioned sizes (USD)."}, []string{"namespace"}),
		zonePods: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: zonePodsMetric,
			Help: "Running pods on Fargate by AZ."}, []string{"zone"}),
		lastAnalysis: prometheus.NewGauge(prometheus.GaugeOpts{Name: lastAnalysisMetric,
			Help: "When the last analysis of the cluster ended (Unix time)."}),
		eksErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: eksErrorsMetric,
			Help: "Reads of the EKS API (profiles, cluster) that failed."}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: durationMetric,
			Help: "How long an analysis of the cluster took.", Buckets: prometheus.ExponentialBuckets(0.01, 2, 12)}),
		seen: map[findingLabels]bool{},
	}
	reg.MustRegister(m.findings, m.pods, m.cost, m.zonePods, m.lastAnalysis, m.eksErrors, m.duration)
	return m
}

// publish sets the gauges from a report.
func (m *metrics) publish(rep *report.Report) {
	objects := map[findingLabels]map[object.Ref]bool{}
	for _, f := range rep.Findings {
		l := findingLabels{rule: f.Rule.ID, name: f.Rule.Name, severity: f.Severity.String(), namespace: f.Object.Namespace}
		if objects[l] == nil {
			objects[l] = map[object.Ref]bool{}
		}
		objects[l][f.Object] = true
	}
	for l := range m.seen {
		if objects[l] == nil {
			m.findings.WithLabelValues(l.rule, l.name, l.severity, l.namespace).Set(0)
		}
	}
	for l, refs := range objects {
		m.seen[l] = true
		m.findings.WithLabelValues(l.rule, l.name, l.severity, l.namespace).Set(float64(len(refs)))
	}

	type compute struct{ fargate, ec2, pending int }
	pods, cost, zones := map[string]compute{}, map[string]float64{}, map[string]int{}
	if a := rep.Cluster.Analysis; a != nil {
		zones = a.PodsPerAZ
		for _, st := range a.Workloads {
			ns := st.Workload.Namespace()
			c := pods[ns]
			c.fargate, c.ec2, c.pending = c.fargate+st.Fargate, c.ec2+st.EC2, c.pending+st.Pending
			pods[ns] = c
			cost[ns] += st.BilledMonthlyUSD
		}
	}
	// A namespace or an AZ gone goes from the gauges; the others are set
	// in place, so that a scrape never sees them missing.
	for ns := range m.namespaces {
		if _, ok := pods[ns]; !ok {
			for _, c := range []string{"fargate", "ec2", "pending"} {
				m.pods.DeleteLabelValues(ns, c)
			}
			m.cost.DeleteLabelValues(ns)
		}
	}
	for z := range m.zones {
		if _, ok := zones[z]; !ok {
			m.zonePods.DeleteLabelValues(z)
		}
	}
	m.namespaces, m.zones = map[string]bool{}, map[string]bool{}
	for ns, c := range pods {
		m.namespaces[ns] = true
		m.pods.WithLabelValues(ns, "fargate").Set(float64(c.fargate))
		m.pods.WithLabelValues(ns, "ec2").Set(float64(c.ec2))
		m.pods.WithLabelValues(ns, "pending").Set(float64(c.pending))
		m.cost.WithLabelValues(ns).Set(cost[ns])
	}
	for z, n := range zones {
		m.zones[z] = true
		m.zonePods.WithLabelValues(z).Set(float64(n))
	}
	m.lastAnalysis.SetToCurrentTime()
}
