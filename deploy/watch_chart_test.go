package deploy_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/fargatekit/fargatekit/deploy"
	"github.com/fargatekit/fargatekit/internal/cli/streams"
	"github.com/fargatekit/fargatekit/internal/cli/watchcmd"
)

// operator is the API versions of a cluster with the Prometheus Operator.
var operator = []string{"monitoring.coreos.com/v1/PrometheusRule", "monitoring.coreos.com/v1/ServiceMonitor"}

var watchCases = []struct {
	name   string
	apis   []string
	values map[string]any
}{
	{"default", nil, map[string]any{"clusterName": "prod"}},
	{"operator-dashboard-irsa", operator, map[string]any{
		"clusterName": "prod", "region": "eu-west-1",
		"serviceAccount": map[string]any{"roleArn": "arn:aws:iam::111122223333:role/fargatekit-watch"},
		"dashboard":      map[string]any{"enabled": true, "namespace": "grafana"},
		"prometheusRule": map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}},
		"eksInterval":    "1m", "coalesce": "500ms",
	}},
	{"repair", nil, map[string]any{"clusterName": "prod", "repair": map[string]any{"drift": true, "after": "0s", "perHour": 3}}},
}

// render renders the watch chart as `helm template --api-versions` does.
func render(t *testing.T, apis []string, values map[string]any) string {
	t.Helper()
	out, err := renderErr(apis, values)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func renderErr(apis []string, values map[string]any) (string, error) {
	return chart{dir: deploy.WatchChartDir, apis: apis}.render("fargatekit-watch", "fargatekit-watch", values)
}

// TestWatchChartGolden renders the chart as `helm template` does; -update
// rewrites testdata/watch-chart/*.yaml.
func TestWatchChartGolden(t *testing.T) {
	for _, tc := range watchCases {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, "watch-chart", tc.name, render(t, tc.apis, tc.values))
		})
	}
}

// TestWatchChartServe: the container's arguments are flags `fargatekit
// watch serve` accepts, and the Service serves its metrics port under the
// name metrics, with the component label.
func TestWatchChartServe(t *testing.T) {
	for _, tc := range watchCases {
		t.Run(tc.name, func(t *testing.T) {
			manifest := render(t, tc.apis, tc.values)
			deployments := objects[appsv1.Deployment](t, manifest, "Deployment")
			if len(deployments) != 1 || len(deployments[0].Spec.Template.Spec.Containers) != 1 {
				t.Fatalf("want one Deployment of one container: %d", len(deployments))
			}
			c := deployments[0].Spec.Template.Spec.Containers[0]
			if len(c.Args) < 2 || c.Args[0] != "watch" || c.Args[1] != "serve" {
				t.Fatalf("the container runs %q, not watch serve", c.Args)
			}
			root := watchcmd.NewCommand(streams.Streams{Out: io.Discard, ErrOut: io.Discard})
			root.PersistentFlags().String("log-level", "", "") // fargatekit's root flag
			serve, _, err := root.Find([]string{"serve"})
			if err != nil {
				t.Fatal(err)
			}
			serve.InheritedFlags() // merges the root's flags
			if err := serve.ParseFlags(c.Args[2:]); err != nil {
				t.Errorf("watch serve refuses the chart's arguments %q: %v", c.Args[2:], err)
			}
			if c.Resources.Requests.Memory().Cmp(*c.Resources.Limits.Memory()) != 0 {
				t.Errorf("memory request %v, limit %v: on Fargate a limit above the request does not start", c.Resources.Requests.Memory(), c.Resources.Limits.Memory())
			}
			services := objects[corev1.Service](t, manifest, "Service")
			if len(services) != 1 {
				t.Fatalf("%d Services", len(services))
			}
			svc := services[0]
			if svc.Labels["app.kubernetes.io/component"] != "watch" || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" ||
				svc.Spec.Ports[0].TargetPort.IntVal != c.Ports[0].ContainerPort {
				t.Errorf("Service %v %+v: want the component watch and a port metrics to the container's %d", svc.Labels, svc.Spec.Ports, c.Ports[0].ContainerPort)
			}
		})
	}
}

// TestWatchChartRBAC: the chart's ClusterRole is deploy/rbac/watch.yaml's.
func TestWatchChartRBAC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("rbac", "watch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &want); err != nil {
		t.Fatal(err)
	}
	roles := objects[rbacv1.ClusterRole](t, render(t, nil, map[string]any{"clusterName": "prod"}), "ClusterRole")
	if len(roles) != 1 {
		t.Fatalf("%d ClusterRoles", len(roles))
	}
	if diff := cmp.Diff(want.Rules, roles[0].Rules); diff != "" {
		t.Errorf("the chart's ClusterRole and deploy/rbac/watch.yaml differ (-file +chart):\n%s", diff)
	}
}

// TestWatchChartRepair: repair.drift adds the flags and the one write it
// needs, the patch of Deployments and StatefulSets; without it, neither.
func TestWatchChartRepair(t *testing.T) {
	patches := func(rules []rbacv1.PolicyRule) bool {
		for _, r := range rules {
			if slices.Contains(r.Verbs, "patch") && slices.Contains(r.APIGroups, "apps") {
				return slices.Equal(r.Resources, []string{"deployments", "statefulsets"})
			}
		}
		return false
	}
	for _, tc := range []struct {
		values map[string]any
		repair bool
	}{
		{map[string]any{"clusterName": "prod"}, false},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"drift": false, "perHour": 3}}, false},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"drift": true}}, true},
	} {
		manifest := render(t, nil, tc.values)
		roles := objects[rbacv1.ClusterRole](t, manifest, "ClusterRole")
		args := objects[appsv1.Deployment](t, manifest, "Deployment")[0].Spec.Template.Spec.Containers[0].Args
		if got := patches(roles[0].Rules); got != tc.repair {
			t.Errorf("values %v: the ClusterRole patches workloads: %v, want %v", tc.values, got, tc.repair)
		}
		if got := slices.Contains(args, "--repair-drift"); got != tc.repair {
			t.Errorf("values %v: args %q", tc.values, args)
		}
		if tc.repair && !slices.Contains(args, "--repair-after=2m") {
			t.Errorf("values %v: args %q, want the default --repair-after=2m", tc.values, args)
		}
	}
}

// TestWatchChartOperator: the PrometheusRule carries the groups of
// deploy/prometheus/fargatekit-rules.yaml, and the dashboard's ConfigMap
// deploy/grafana's dashboard; neither the PrometheusRule nor the
// ServiceMonitor without the Operator's CRDs, nor the dashboard unless
// asked for.
func TestWatchChartOperator(t *testing.T) {
	manifest := render(t, operator, watchCases[1].values)
	data, err := os.ReadFile(filepath.Join("prometheus", "fargatekit-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := yaml.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	rules := objects[unstructured.Unstructured](t, manifest, "PrometheusRule")
	if len(rules) != 1 {
		t.Fatalf("%d PrometheusRules with the Operator", len(rules))
	}
	if diff := cmp.Diff(want, rules[0].Object["spec"]); diff != "" {
		t.Errorf("the PrometheusRule's spec is not deploy/prometheus/fargatekit-rules.yaml (-file +chart):\n%s", diff)
	}
	if rules[0].GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule labels %v, want prometheusRule.labels", rules[0].GetLabels())
	}
	if n := len(objects[unstructured.Unstructured](t, manifest, "ServiceMonitor")); n != 1 {
		t.Errorf("%d ServiceMonitors with the Operator", n)
	}
	dashboard, err := os.ReadFile(filepath.Join("grafana", "fargatekit-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	cms := objects[corev1.ConfigMap](t, manifest, "ConfigMap")
	if len(cms) != 1 || cms[0].Namespace != "grafana" || cms[0].Labels["grafana_dashboard"] != "1" {
		t.Fatalf("want one ConfigMap in grafana labelled for the sidecar: %d", len(cms))
	}
	if got := cms[0].Data["fargatekit-dashboard.json"]; got != strings.TrimSuffix(string(dashboard), "\n") {
		t.Errorf("the dashboard's ConfigMap is not deploy/grafana/fargatekit-dashboard.json:\n%s", cmp.Diff(string(dashboard), got))
	}

	plain := render(t, nil, map[string]any{"clusterName": "prod"})
	for _, kind := range []string{"PrometheusRule", "ServiceMonitor", "ConfigMap"} {
		if n := len(objects[unstructured.Unstructured](t, plain, kind)); n != 0 {
			t.Errorf("%d %ss without the Operator's CRDs and by default", n, kind)
		}
	}
	off := render(t, operator, map[string]any{"clusterName": "prod", "prometheusRule": map[string]any{"enabled": false}, "serviceMonitor": map[string]any{"enabled": false}})
	for _, kind := range []string{"PrometheusRule", "ServiceMonitor"} {
		if n := len(objects[unstructured.Unstructured](t, off, kind)); n != 0 {
			t.Errorf("%d %ss when turned off", n, kind)
		}
	}
}

// TestWatchChartValuesErrors: the values schema is closed, and a value
// watch serve would refuse is refused at install, naming it.
func TestWatchChartValuesErrors(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "/clusterName"},
		{map[string]any{"clusterName": "prod", "eksInterval": "5s"}, "/eksInterval"},
		{map[string]any{"clusterName": "prod", "resync": "0s"}, "/resync"},
		{map[string]any{"clusterName": "prod", "coalesce": "50ms"}, "/coalesce"},
		{map[string]any{"clusterName": "prod", "coalesce": "soon"}, "/coalesce"},
		{map[string]any{"clusterName": "prod", "replicas": 2}, "replicas"},
		{map[string]any{"clusterName": "prod", "dashboard": map[string]any{"enable": true}}, "enable"},
		{map[string]any{"clusterName": "prod", "serviceAccount": map[string]any{"roleArn": "fargatekit-watch"}}, "/serviceAccount/roleArn"},
		{map[string]any{"clusterName": "prod", "logLevel": "verbose"}, "/logLevel"},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"perHour": 0}}, "/repair/perHour"},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"timeout": "0s"}}, "/repair/timeout"},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"after": "-1m"}}, "/repair/after"},
		{map[string]any{"clusterName": "prod", "repair": map[string]any{"drfit": true}}, "drfit"},
	} {
		_, err := renderErr(nil, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: error %v, want one naming %s", tc.values, err, tc.want)
		}
	}
	for _, ok := range []map[string]any{
		{"clusterName": "prod", "eksInterval": "10s", "resync": "1h", "coalesce": "100ms"},
		{"clusterName": "prod", "eksInterval": "2m30s", "coalesce": "3s"},
	} {
		if _, err := renderErr(nil, ok); err != nil {
			t.Errorf("values %v refused: %v", ok, err)
		}
	}
}
