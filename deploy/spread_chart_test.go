package spreadserver

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	release "helm.sh/helm/v4/pkg/release/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/fargatekit/fargatekit/deploy"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

var update = flag.Bool("update", false, "rewrite golden files")

var chartCases = []struct {
	name   string
	values map[string]any
}{
	{"default", map[string]any{"clusterName": "prod"}},
	{"cert-manager-zones-irsa", map[string]any{
		"clusterName": "prod", "region": "eu-west-1",
		"certificates":   map[string]any{"source": "cert-manager"},
		"zones":          map[string]any{"apps-eu-west-1a": "eu-west-1a", "apps-eu-west-1b": "eu-west-1b"},
		"serviceAccount": map[string]any{"roleArn": "arn:aws:iam::111122223333:role/fargatekit-spread"},
		"rebalancer":     map[string]any{"dryRun": true},
	}},
}

// TestChartGolden renders the chart as `helm template` does; -update
// rewrites testdata/chart/*.yaml.
func TestChartGolden(t *testing.T) {
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RenderChart(context.Background(), "fargatekit-spread", "fargatekit-spread", tc.values)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "chart", tc.name+".yaml")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./internal/spreadserver -run TestChartGolden -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("the chart renders otherwise than %s (rerun with -update if intended):\n%s", golden, got)
			}
		})
	}
}

// objects decodes the rendered manifest's objects of one kind into T.
func objects[T any](t *testing.T, manifest, kind string) []T {
	t.Helper()
	var out []T
	for doc := range strings.SplitSeq(manifest, "\n---") {
		if !strings.Contains(doc, "\nkind: "+kind+"\n") {
			continue
		}
		var v T
		if err := yaml.NewYAMLOrJSONDecoder(bytes.NewReader([]byte(doc)), 4096).Decode(&v); err != nil {
			t.Fatalf("decoding a %s: %v", kind, err)
		}
		out = append(out, v)
	}
	return out
}

// TestChartWebhook: the webhook configuration never blocks a pod, sorts
// before EKS's, and sends only opted-in pods that did not choose a profile.
func TestChartWebhook(t *testing.T) {
	manifest, err := RenderChart(context.Background(), "spread-ns", "spread", map[string]any{"clusterName": "prod"})
	if err != nil {
		t.Fatal(err)
	}
	configs := objects[admissionregistrationv1.MutatingWebhookConfiguration](t, manifest, "MutatingWebhookConfiguration")
	if len(configs) != 1 {
		t.Fatalf("%d webhook configurations, want 1", len(configs))
	}
	c := configs[0]
	if c.Name != WebhookConfigurationName || c.Name >= "0500-amazon-eks-fargate-mutation.amazonaws.com" {
		t.Errorf("the configuration is named %q: it must be %q, before EKS's", c.Name, WebhookConfigurationName)
	}
	if len(c.Webhooks) != 2 {
		t.Fatalf("%d webhooks, want 2 (namespace and pod opt-in)", len(c.Webhooks))
	}
	for _, w := range c.Webhooks {
		svc := w.ClientConfig.Service
		if svc == nil || svc.Namespace != "spread-ns" || svc.Name != "spread-fargatekit-spread" || svc.Path == nil || *svc.Path != WebhookPath || svc.Port == nil || *svc.Port != 443 {
			t.Errorf("%s calls %+v, want the Service spread-ns/spread-fargatekit-spread:443%s", w.Name, svc, WebhookPath)
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Ignore || w.TimeoutSeconds == nil || *w.TimeoutSeconds > 2 ||
			w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNone {
			t.Errorf("%s may block pods: failurePolicy %v, timeout %v, sideEffects %v", w.Name, w.FailurePolicy, w.TimeoutSeconds, w.SideEffects)
		}
		if len(w.Rules) != 1 || !slices.Equal(w.Rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) || !slices.Equal(w.Rules[0].Resources, []string{"pods"}) {
			t.Errorf("%s rules %+v, want pod creation only", w.Name, w.Rules)
		}
		unchosen := false
		for _, e := range w.ObjectSelector.MatchExpressions {
			unchosen = unchosen || e.Key == fargate.ProfileLabel && e.Operator == "DoesNotExist"
		}
		if !unchosen {
			t.Errorf("%s is sent pods that chose their profile", w.Name)
		}
	}
	// Which webhook each namespace's pods go to: the opted-in namespaces'
	// to the first, the others' to the second (a pod is sent once); neither
	// takes kube-system's nor spread's own, opted in or not.
	ns, pod := c.Webhooks[0], c.Webhooks[1]
	for _, tc := range []struct {
		name     string
		optedIn  bool
		ns, pods bool
	}{
		{"apps", true, true, false},
		{"other", false, false, true},
		{"kube-system", true, false, false},
		{"kube-system", false, false, false},
		{"spread-ns", true, false, false},
		{"spread-ns", false, false, false},
	} {
		labels := k8slabels.Set{"kubernetes.io/metadata.name": tc.name}
		if tc.optedIn {
			labels[spread.EnabledLabel] = "true"
		}
		for _, w := range []struct {
			hook admissionregistrationv1.MutatingWebhook
			want bool
		}{{ns, tc.ns}, {pod, tc.pods}} {
			sel, err := metav1.LabelSelectorAsSelector(w.hook.NamespaceSelector)
			if err != nil {
				t.Fatal(err)
			}
			if got := sel.Matches(labels); got != w.want {
				t.Errorf("%s takes the pods of namespace %s (opted in: %v): %v, want %v", w.hook.Name, tc.name, tc.optedIn, got, w.want)
			}
		}
	}
}

// TestChartCertificates: the Secret mode's arguments and RBAC name the
// same Secret, Service and webhook configuration; cert-manager's mounts
// the Certificate's Secret and may not write Secrets.
func TestChartCertificates(t *testing.T) {
	for _, tc := range chartCases {
		t.Run(tc.name, func(t *testing.T) {
			manifest, err := RenderChart(context.Background(), "ns", "rel", tc.values)
			if err != nil {
				t.Fatal(err)
			}
			deployments := objects[appsv1.Deployment](t, manifest, "Deployment")
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments", len(deployments))
			}
			args := deployments[0].Spec.Template.Spec.Containers[0].Args
			roles := objects[rbacv1.Role](t, manifest, "Role")
			if len(roles) != 1 {
				t.Fatalf("%d Roles", len(roles))
			}
			writesSecret := slices.ContainsFunc(roles[0].Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Contains(r.Resources, "secrets") && slices.Contains(r.ResourceNames, "rel-fargatekit-spread-tls") && slices.Contains(r.Verbs, "update")
			})
			if tc.name == "default" {
				for _, want := range []string{"--certificate-secret=rel-fargatekit-spread-tls", "--service=rel-fargatekit-spread", "--webhook-configuration=" + WebhookConfigurationName} {
					if !slices.Contains(args, want) {
						t.Errorf("args %q lack %s", args, want)
					}
				}
				if !writesSecret {
					t.Error("the Role does not let spread write its certificate Secret")
				}
				return
			}
			if !slices.Contains(args, "--tls-cert-file=/tls/tls.crt") || !slices.Contains(args, "--zones=/etc/fargatekit-spread/zones.yaml") {
				t.Errorf("args %q: want the mounted certificate and zones", args)
			}
			if writesSecret {
				t.Error("with cert-manager, spread may still write Secrets")
			}
		})
	}
}

func TestChartValuesErrors(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{}, "/clusterName"},
		{map[string]any{"clusterName": "prod", "certificates": map[string]any{"source": "vault"}}, "/certificates/source"},
		{map[string]any{"clusterName": "prod", "zones": map[string]any{"apps-a": ""}}, "/zones/apps-a"},
		{map[string]any{"clusterName": "prod", "refresh": "soon"}, "/refresh"},
		{map[string]any{"clusterName": "prod", "method": "nodeSelector"}, "/method"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"dryrun": true}}, "dryrun"},
		{map[string]any{"clusterName": "prod", "refresh": "0s"}, "/refresh"},
		{map[string]any{"clusterName": "prod", "refresh": "9s"}, "/refresh"},
		{map[string]any{"clusterName": "prod", "refresh": "500ms"}, "/refresh"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionInterval": "0s"}}, "/rebalancer/evictionInterval"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionInterval": "500ms"}}, "/rebalancer/evictionInterval"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"workloadEvictionsPerHour": 0}}, "/rebalancer/workloadEvictionsPerHour"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionsPerMinute": -1}}, "/rebalancer/evictionsPerMinute"},
		{map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionsPerMinute": "5"}}, "/rebalancer/evictionsPerMinute"},
		{map[string]any{"clusterName": "prod", "method": "node-selector", "zones": map[string]any{"apps-a": "us-east-1a"}}, "zones: the AZs of per-AZ profiles go with method: profile"},
		{map[string]any{"clusterName": "prod", "serviceAccount": map[string]any{"roleArn": "fargatekit-spread"}}, "/serviceAccount/roleArn"},
	} {
		_, err := RenderChart(context.Background(), "ns", "rel", tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: %v, want an error naming %s", tc.values, err, tc.want)
		}
	}
	// The near misses of refresh: at least ten seconds.
	for _, refresh := range []string{"10s", "1m", "1m30s", "1h"} {
		if _, err := RenderChart(context.Background(), "ns", "rel", map[string]any{"clusterName": "prod", "refresh": refresh}); err != nil {
			t.Errorf("refresh %s: %v", refresh, err)
		}
	}
	// The near misses: at least a second, in seconds, minutes or hours.
	for _, interval := range []string{"1s", "10s", "1m30s", "2h"} {
		values := map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionInterval": interval}}
		if _, err := RenderChart(context.Background(), "ns", "rel", values); err != nil {
			t.Errorf("evictionInterval %s: %v", interval, err)
		}
	}
}

// TestChartPolicy: on Kubernetes 1.30 and later (where
// ValidatingAdmissionPolicy is GA) the chart's policies keep spread's own
// service account to evictions in opted-in namespaces and, with the Secret
// certificates, to the caBundle of its webhook configuration.
func TestChartPolicy(t *testing.T) {
	const evict, caOnly = "spread-fargatekit-spread-evict-opted-in", "spread-fargatekit-spread-webhook-ca-only"
	for _, tc := range []struct {
		kubeVersion string
		values      map[string]any
		want        []string
	}{
		{"v1.30.0", map[string]any{"clusterName": "prod"}, []string{evict, caOnly}},
		{"v1.29.9", map[string]any{"clusterName": "prod"}, nil},
		{"v1.33.0", map[string]any{"clusterName": "prod", "certificates": map[string]any{"source": "cert-manager"}}, []string{evict}},
	} {
		manifest, err := renderChartFor(context.Background(), tc.kubeVersion, "spread-ns", "spread", tc.values)
		if err != nil {
			t.Fatal(err)
		}
		policies := objects[admissionregistrationv1.ValidatingAdmissionPolicy](t, manifest, "ValidatingAdmissionPolicy")
		bindings := objects[admissionregistrationv1.ValidatingAdmissionPolicyBinding](t, manifest, "ValidatingAdmissionPolicyBinding")
		var names []string
		for i, p := range policies {
			names = append(names, p.Name)
			if i >= len(bindings) || bindings[i].Spec.PolicyName != p.Name ||
				!slices.Equal(bindings[i].Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
				t.Errorf("Kubernetes %s: the policy %s has no binding that denies", tc.kubeVersion, p.Name)
			}
			if p.Spec.FailurePolicy == nil || *p.Spec.FailurePolicy != admissionregistrationv1.Fail {
				t.Errorf("the policy %s's failurePolicy is %v, want Fail", p.Name, p.Spec.FailurePolicy)
			}
			sa := `"system:serviceaccount:spread-ns:spread-fargatekit-spread"`
			if len(p.Spec.MatchConditions) != 1 || !strings.Contains(p.Spec.MatchConditions[0].Expression, sa) {
				t.Errorf("the policy %s matches %+v, want spread's service account %s only", p.Name, p.Spec.MatchConditions, sa)
			}
		}
		if !slices.Equal(names, tc.want) || len(bindings) != len(policies) {
			t.Errorf("Kubernetes %s, %v: policies %v and %d bindings, want %v", tc.kubeVersion, tc.values, names, len(bindings), tc.want)
		}
	}
}

// chartKubeVersion is the Kubernetes version the chart is rendered for: one
// EKS supports (Helm's own default in tests is 1.20).
const chartKubeVersion = "v1.33.0"

// RenderChart renders the chart as `helm template` does, with values.
func RenderChart(ctx context.Context, namespace, name string, values map[string]any) (string, error) {
	return renderChartFor(ctx, chartKubeVersion, namespace, name, values)
}

// renderChartFor renders the chart for a cluster of Kubernetes kubeVersion.
func renderChartFor(ctx context.Context, kubeVersion, namespace, name string, values map[string]any) (string, error) {
	ch, err := deploy.SpreadChart()
	if err != nil {
		return "", err
	}
	kv, err := common.ParseKubeVersion(kubeVersion)
	if err != nil {
		return "", err
	}
	in := action.NewInstall(action.NewConfiguration())
	in.ReleaseName, in.Namespace, in.DryRunStrategy, in.Replace, in.KubeVersion = name, namespace, action.DryRunClient, true, kv
	r, err := in.RunWithContext(ctx, ch, values)
	if err != nil {
		return "", fmt.Errorf("rendering the chart %s: %w", deploy.SpreadChartDir, err)
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return "", fmt.Errorf("rendering the chart %s: a release of type %T", deploy.SpreadChartDir, r)
	}
	return rel.Manifest, nil
}
