package deploy_test

import (
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/fargatekit/fargatekit/deploy"
	"github.com/fargatekit/fargatekit/internal/spreadserver"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

var spreadCases = []struct {
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

// TestSpreadChartGolden renders the chart as `helm template` does; -update
// rewrites testdata/spread-chart/*.yaml.
func TestSpreadChartGolden(t *testing.T) {
	for _, tc := range spreadCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := renderSpread("fargatekit-spread", "fargatekit-spread", tc.values)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, "spread-chart", tc.name, got)
		})
	}
}

// TestSpreadChartWebhook: the webhook configuration never blocks a pod, sorts
// before EKS's, and sends only opted-in pods that did not choose a profile.
func TestSpreadChartWebhook(t *testing.T) {
	manifest, err := renderSpread("spread-ns", "spread", map[string]any{"clusterName": "prod"})
	if err != nil {
		t.Fatal(err)
	}
	configs := objects[admissionregistrationv1.MutatingWebhookConfiguration](t, manifest, "MutatingWebhookConfiguration")
	if len(configs) != 1 {
		t.Fatalf("%d webhook configurations, want 1", len(configs))
	}
	c := configs[0]
	if c.Name != spreadserver.WebhookConfigurationName || c.Name >= "0500-amazon-eks-fargate-mutation.amazonaws.com" {
		t.Errorf("the configuration is named %q: it must be %q, before EKS's", c.Name, spreadserver.WebhookConfigurationName)
	}
	if len(c.Webhooks) != 2 {
		t.Fatalf("%d webhooks, want 2 (namespace and pod opt-in)", len(c.Webhooks))
	}
	for _, w := range c.Webhooks {
		svc := w.ClientConfig.Service
		if svc == nil || svc.Namespace != "spread-ns" || svc.Name != "spread-fargatekit-spread" || svc.Path == nil || *svc.Path != spreadserver.WebhookPath || svc.Port == nil || *svc.Port != 443 {
			t.Errorf("%s calls %+v, want the Service spread-ns/spread-fargatekit-spread:443%s", w.Name, svc, spreadserver.WebhookPath)
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

// TestSpreadChartCertificates: the Secret mode's arguments and RBAC name the
// same Secret, Service and webhook configuration; cert-manager's mounts
// the Certificate's Secret and may not write Secrets.
func TestSpreadChartCertificates(t *testing.T) {
	for _, tc := range spreadCases {
		t.Run(tc.name, func(t *testing.T) {
			manifest, err := renderSpread("ns", "rel", tc.values)
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
				for _, want := range []string{"--certificate-secret=rel-fargatekit-spread-tls", "--service=rel-fargatekit-spread", "--webhook-configuration=" + spreadserver.WebhookConfigurationName} {
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

func TestSpreadChartValuesErrors(t *testing.T) {
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
		_, err := renderSpread("ns", "rel", tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %v: %v, want an error naming %s", tc.values, err, tc.want)
		}
	}
	// The near misses of refresh: at least ten seconds.
	for _, refresh := range []string{"10s", "1m", "1m30s", "1h"} {
		if _, err := renderSpread("ns", "rel", map[string]any{"clusterName": "prod", "refresh": refresh}); err != nil {
			t.Errorf("refresh %s: %v", refresh, err)
		}
	}
	// The near misses: at least a second, in seconds, minutes or hours.
	for _, interval := range []string{"1s", "10s", "1m30s", "2h"} {
		values := map[string]any{"clusterName": "prod", "rebalancer": map[string]any{"evictionInterval": interval}}
		if _, err := renderSpread("ns", "rel", values); err != nil {
			t.Errorf("evictionInterval %s: %v", interval, err)
		}
	}
}

// TestSpreadChartPolicy: on Kubernetes 1.30 and later (where
// ValidatingAdmissionPolicy is GA) the chart's policies keep spread's own
// service account to evictions in opted-in namespaces and, with the Secret
// certificates, to the caBundle of its webhook configuration.
func TestSpreadChartPolicy(t *testing.T) {
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
		manifest, err := renderSpreadFor(tc.kubeVersion, "spread-ns", "spread", tc.values)
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

// renderSpread renders the spread chart as `helm template` does, with values.
func renderSpread(namespace, name string, values map[string]any) (string, error) {
	return chart{dir: deploy.SpreadChartDir}.render(namespace, name, values)
}

// renderSpreadFor renders the spread chart for a cluster of Kubernetes
// kubeVersion.
func renderSpreadFor(kubeVersion, namespace, name string, values map[string]any) (string, error) {
	return chart{dir: deploy.SpreadChartDir, kubeVersion: kubeVersion}.render(namespace, name, values)
}
