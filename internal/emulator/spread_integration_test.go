package emulator_test

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/retry"

	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// rollouts is how many rollout restarts TestIntegrationSpread makes with
// spread and without it; docs/benchmarks.md reports a run with 100.
var rollouts = flag.Int("spread.rollouts", 20, "rollout restarts of TestIntegrationSpread, with spread and without")

// zones are the emulator's AZs.
var zones = []string{"us-east-1a", "us-east-1b", "us-east-1c"}

// spreadDeployment is a Deployment whose rollouts create every new replica
// at once (maxSurge 100%): a burst, as a ReplicaSet scaling up makes.
func spreadDeployment(ns, name string, replicas int32) *appsv1.Deployment {
	d := deployment(ns, name, replicas, nil)
	surge, unavailable := intstr.FromString("100%"), intstr.FromInt32(0)
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
		RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable}}
	return d
}

// running returns the pods per AZ of a Deployment when it runs exactly
// replicas pods, all Running and none Terminating; an error otherwise.
func (c *cluster) running(ns, app string, replicas int) (map[string]int, error) {
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil, err
	}
	load := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			return nil, fmt.Errorf("pod %s is %s (terminating: %v)", p.Name, p.Status.Phase, p.DeletionTimestamp != nil)
		}
		n, err := c.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		load[n.Labels[corev1.LabelTopologyZone]]++
	}
	if len(pods.Items) != replicas {
		return nil, fmt.Errorf("%d pods, want %d", len(pods.Items), replicas)
	}
	return load, nil
}

// settled waits until a Deployment's rollout is over (see running) and
// returns its pods per AZ.
func (c *cluster) settled(ns, app string, replicas int) map[string]int {
	c.t.Helper()
	var load map[string]int
	eventually(c.t, 2*time.Minute, fmt.Sprintf("%s/%s settles at %d Running pods", ns, app, replicas), func() (err error) {
		load, err = c.running(ns, app, replicas)
		return err
	})
	return load
}

// rolloutSkews restarts a Deployment n times and returns the AZ skew of
// its pods after each rollout.
func (c *cluster) rolloutSkews(ns, app string, replicas, n int) []int {
	c.t.Helper()
	skews := make([]int, n)
	for i := range n {
		c.restart(ns, app)
		eventually(c.t, time.Minute, "the rollout starts", func() error {
			d, err := c.kube.AppsV1().Deployments(ns).Get(ctx, app, metav1.GetOptions{})
			if err != nil {
				return err
			}
			if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != int32(replicas) || d.Status.Replicas != int32(replicas) {
				return fmt.Errorf("observed generation %d of %d, %d updated, %d replicas", d.Status.ObservedGeneration, d.Generation, d.Status.UpdatedReplicas, d.Status.Replicas)
			}
			return nil
		})
		skews[i] = spread.Skew(c.settled(ns, app, replicas), zones)
	}
	return skews
}

// metric reads one sample of spread's /metrics, 0 when absent.
func metric(t testing.TB, url, sample string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("reading spread's metrics: %v", err)
	}
	defer func() { _ = resp.Body.Close() }()
	return sampleValue(t, resp.Body, sample)
}

// sampleValue is one sample's value in a Prometheus text exposition, 0
// when absent.
func sampleValue(t testing.TB, r io.Reader, sample string) float64 {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("metric %s: %v", sample, err)
			}
			return f
		}
	}
	return 0
}

var metricsURL = regexp.MustCompile(`metrics: (\S+)`)
var spreadPID = regexp.MustCompile(`\(pid (\d+)\)`)

// installSpread runs `fargatekit spread install --emulator` and returns its
// metrics URL and pid.
func (c *cluster) installSpread(env []string, flags ...string) (string, int) {
	c.t.Helper()
	out, errOut, code := c.fargatekit(env, append([]string{"spread", "install", "--emulator", "--state-dir", c.state}, flags...)...)
	if code != 0 {
		c.t.Fatalf("spread install exit %d:\n%s\n%s", code, out, errOut)
	}
	m, p := metricsURL.FindStringSubmatch(out), spreadPID.FindStringSubmatch(out)
	if m == nil || p == nil {
		c.t.Fatalf("spread install does not say where it serves:\n%s", out)
	}
	pid, _ := strconv.Atoi(p[1])
	return m[1], pid
}

// spreadNamespaces creates the namespaces of the spread example: apps,
// opted in to spread, over one profile per AZ; plain, not opted in, over
// one profile with a subnet in each AZ.
func (c *cluster) spreadNamespaces() {
	c.t.Helper()
	c.namespace("plain")
	apps := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps", Labels: map[string]string{spread.EnabledLabel: "true"}}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, apps, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// TestIntegrationSpread: with spread, every rollout of a 3-replica
// Deployment over three per-AZ profiles is balanced and a burst of 30 lands
// 10/10/10; without it (one profile over three subnets, in the same run)
// fargate-scheduler's draws are balanced a fraction of the time; a dead
// webhook admits pods as EKS alone would; the rebalancer evens out a
// workload skewed by placements made without spread, within its
// PodDisruptionBudget.
func TestIntegrationSpread(t *testing.T) {
	t.Parallel()
	long(t)
	c := start(t, "spread")
	env := c.env()
	c.spreadNamespaces()
	// The per-AZ twins of the live cluster's one multi-subnet profile, read
	// through the EKS and EC2 APIs of the emulator.
	out, errOut, code := c.fargatekit(env, "spread", "profiles", "--cluster-name", c.name)
	for _, want := range []string{"name: plain-us-east-1a", "- subnet-private2", "name: plain-us-east-1c"} {
		if code != 0 || !strings.Contains(out, want) || strings.Contains(out, "apps-us-east-1a-") {
			t.Errorf("spread profiles --cluster-name: exit %d, output lacks %q (or splits a per-AZ profile):\n%s%s", code, want, out, errOut)
		}
	}
	// A --zones file naming a profile with several subnets stops serve at
	// start, naming the field.
	dir := t.TempDir()
	zonesFile := filepath.Join(dir, "zones.yaml")
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"zones.yaml": []byte("profiles:\n  apps-us-east-1a: us-east-1a\n  plain: us-east-1b\n"), "tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code = c.fargatekit(env, "spread", "serve", "--zones", zonesFile, "--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"),
		"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0")
	if code == 0 || !strings.Contains(errOut, "the --zones file: profiles.plain: the profile has 3 subnets") {
		t.Errorf("spread serve --zones with a multi-subnet profile: exit %d\n%s", code, errOut)
	}

	metrics, pid := c.installSpread(env, "--eviction-interval", "1s")
	c.checkChart()

	// A workload that pins its per-AZ profile stays where it chose, 3/0/0,
	// and is never evicted (it would come back there): checked at the end,
	// after minutes of the rebalancer at work.
	pinned := spreadDeployment("apps", "pinned", 3)
	pinned.Spec.Template.Labels[fargate.ProfileLabel] = "apps-us-east-1a"
	c.deploy(pinned)
	if load := c.settled("apps", "pinned", 3); load["us-east-1a"] != 3 {
		t.Errorf("a Deployment pinned to apps-us-east-1a: %v, want all 3 there", load)
	}
	pinnedPods := podNames(t, c, "apps", "pinned")

	began := time.Now()
	c.deploy(spreadDeployment("apps", "web", 3))
	if load := c.settled("apps", "web", 3); spread.Skew(load, zones) != 0 {
		t.Errorf("web's first 3 replicas: %v, want one per AZ", load)
	}
	for i, s := range c.rolloutSkews("apps", "web", 3, *rollouts) {
		if s > 1 {
			t.Errorf("with spread, rollout %d left web skewed by %d", i+1, s)
		}
	}
	t.Logf("with spread: %d rollouts of 3 replicas in %s", *rollouts, time.Since(began).Round(time.Second))

	c.deploy(spreadDeployment("plain", "web", 3))
	c.settled("plain", "web", 3)
	balanced := 0
	for _, s := range c.rolloutSkews("plain", "web", 3, *rollouts) {
		if s == 0 {
			balanced++
		}
	}
	t.Logf("without spread (one profile over three subnets): %d of %d rollouts balanced (%.0f%%; 3!/3^3 = 22%% expected)",
		balanced, *rollouts, 100*float64(balanced)/float64(*rollouts))
	if balanced == *rollouts {
		t.Errorf("without spread every one of %d rollouts was balanced: the comparison shows nothing", *rollouts)
	}
	pods, err := c.kube.CoreV1().Pods("plain").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pinnedPods) == 0 || len(pods.Items) == 0 {
		t.Fatalf("pods of apps %v and of plain %d: none to try evictions on", pinnedPods, len(pods.Items))
	}
	c.checkEvictions(pinnedPods[0], pods.Items[0].Name)
	for _, p := range pods.Items {
		if z, ok := p.Annotations[spread.ZoneAnnotation]; ok {
			t.Errorf("pod plain/%s of a namespace not opted in was placed by spread (%s)", p.Name, z)
		}
	}

	// A burst: 0 → 30 replicas at once.
	scale(t, c, "apps", "web", 0)
	c.settled("apps", "web", 0)
	scale(t, c, "apps", "web", 30)
	want := map[string]int{"us-east-1a": 10, "us-east-1b": 10, "us-east-1c": 10}
	if load := c.settled("apps", "web", 30); !maps.Equal(load, want) {
		t.Errorf("scaled 0 → 30 with spread: %v, want %v", load, want)
	}
	if got := metric(t, metrics, `fargatekit_spread_placements_total{zone="us-east-1b"}`); got < 10 {
		t.Errorf("fargatekit_spread_placements_total of us-east-1b = %v, want at least 10", got)
	}
	// Scale-downs: the ReplicaSet controller does not choose its victims by
	// AZ, the rebalancer evens them out; from 3/3/3 to 4 pods, one eviction
	// at most.
	evenedOut := func(replicas int) (left map[string]int) {
		eventually(t, 2*time.Minute, fmt.Sprintf("the rebalancer evens web out at %d", replicas), func() (err error) {
			if left, err = c.running("apps", "web", replicas); err == nil && spread.Skew(left, zones) > 1 {
				err = fmt.Errorf("web is %v", left)
			}
			return err
		})
		return left
	}
	scale(t, c, "apps", "web", 9)
	evenedOut(9)
	evicted := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`)
	scale(t, c, "apps", "web", 4)
	left := evenedOut(4)
	n := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`) - evicted
	if n > 1 {
		t.Errorf("%v evictions after scaling 9 → 4 (now %v), want at most 1", n, left)
	}
	t.Logf("scaled 9 → 4: %v after %v rebalancing evictions", left, n)
	scale(t, c, "apps", "web", 0)

	// A dead webhook: pods are admitted as EKS alone would, to the first
	// per-AZ profile by name (the user guide's rule).
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c.deploy(spreadDeployment("apps", "lopsided", 6))
	if load := c.settled("apps", "lopsided", 6); load["us-east-1a"] != 6 {
		t.Fatalf("with spread dead, lopsided is %v, want all 6 in us-east-1a (profile apps-us-east-1a, first by name)", load)
	}

	// The rebalancer: held by a PodDisruptionBudget, then free.
	minAvailable := intstr.FromInt32(6)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "lopsided", Namespace: "apps"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lopsided"}}}}
	if _, err := c.kube.PolicyV1().PodDisruptionBudgets("apps").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	metrics, _ = c.installSpread(env, "--eviction-interval", "1s")
	eventually(t, time.Minute, "the PodDisruptionBudget blocks an eviction", func() error {
		if n := metric(t, metrics, `fargatekit_spread_evictions_total{result="blocked"}`); n == 0 {
			return fmt.Errorf("no blocked eviction yet")
		}
		return nil
	})
	if n := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`); n != 0 {
		t.Errorf("%v evictions while the PodDisruptionBudget forbids any", n)
	}
	if err := c.kube.PolicyV1().PodDisruptionBudgets("apps").Delete(ctx, "lopsided", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var load map[string]int
	eventually(t, 3*time.Minute, "the rebalancer evens lopsided out", func() (err error) {
		if load, err = c.running("apps", "lopsided", 6); err == nil && spread.Skew(load, zones) > 1 {
			err = fmt.Errorf("lopsided is %v", load)
		}
		return err
	})
	if n := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`); n != 4 {
		t.Errorf("%v evictions to go from 6/0/0 to %v, want the fewest: 4", n, load)
	}
	if got := metric(t, metrics, `fargatekit_spread_skew{namespace="apps",owner="ReplicaSet/`+replicaSet(t, c, "apps", "lopsided")+`"}`); got > 1 {
		t.Errorf("fargatekit_spread_skew of lopsided = %v after rebalancing", got)
	}
	events, err := c.kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=lopsided,reason=SpreadRebalance"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) < 4 {
		t.Errorf("%d SpreadRebalance events on Deployment lopsided, want one per eviction and one per blocked try", len(events.Items))
	}

	if got := metric(t, metrics, `fargatekit_spread_rebalance_skipped_total{reason="pinned"}`); got == 0 {
		t.Error("the rebalancer never looked at the pinned Deployment (no skip with reason pinned)")
	}
	if after := podNames(t, c, "apps", "pinned"); !slices.Equal(after, pinnedPods) {
		t.Errorf("the pinned Deployment's pods were replaced: %v, then %v", pinnedPods, after)
	}
	events, err = c.kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=pinned,reason=SpreadRebalance"})
	if err != nil || len(events.Items) != 0 {
		t.Errorf("SpreadRebalance events on the pinned Deployment: %d (%v), want none", len(events.Items), err)
	}

	out, errOut, code = c.fargatekit(env, "spread", "uninstall", "--emulator", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "spread removed") {
		t.Errorf("spread uninstall: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "0100-spread.fargatekit.io", metav1.GetOptions{}); err == nil {
		t.Error("spread's webhook configuration is still there after uninstall")
	}
	eventually(t, time.Minute, "the garbage collector deletes the certificate Secret with its owner", func() error {
		_, err := c.kube.CoreV1().Secrets("fargatekit-spread").Get(ctx, "fargatekit-spread-tls", metav1.GetOptions{})
		if err == nil {
			return fmt.Errorf("fargatekit-spread-tls is still there")
		}
		return nil
	})
}

// TestIntegrationSpreadNodeSelector: --method node-selector balances a
// workload over the AZs of its one multi-subnet profile, on an emulator
// whose fargate-scheduler honours zone node selectors (the setting
// honourZoneSelector; unconfirmed on AWS).
func TestIntegrationSpreadNodeSelector(t *testing.T) {
	t.Parallel()
	settings := filepath.Join(t.TempDir(), "fargatekit.yaml")
	if err := os.WriteFile(settings, []byte("honourZoneSelector: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "spread", "--settings", settings)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: map[string]string{spread.EnabledLabel: "true"}}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	metrics, _ := c.installSpread(c.env(), "--method", "node-selector")
	// emulator down stops spread's process; up starts it again.
	c.emulator("down")
	if _, err := http.Get(metrics); err == nil {
		t.Fatal("spread still serves after emulator down")
	}
	if out := c.emulator("up"); !strings.Contains(out, "starting spread serve again") {
		t.Errorf("emulator up does not say it starts spread again:\n%s", out)
	}
	if resp, err := http.Get(metrics); err != nil {
		t.Fatalf("spread does not serve after emulator up: %v", err)
	} else {
		_ = resp.Body.Close()
	}
	const rollouts = 10
	c.deploy(spreadDeployment("plain", "web", 3))
	if load := c.settled("plain", "web", 3); spread.Skew(load, zones) != 0 {
		t.Errorf("web's first 3 replicas: %v, want one per AZ", load)
	}
	for i, s := range c.rolloutSkews("plain", "web", 3, rollouts) {
		if s > 1 {
			t.Errorf("rollout %d left web skewed by %d", i+1, s)
		}
	}
	pods, err := c.kube.CoreV1().Pods("plain").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Labels[fargate.ProfileLabel] != "plain" || p.Spec.NodeSelector[corev1.LabelTopologyZone] == "" {
			t.Errorf("pod %s: profile %q, node selector %v; want profile plain and a zone", p.Name, p.Labels[fargate.ProfileLabel], p.Spec.NodeSelector)
		}
	}
	scale(t, c, "plain", "web", 0)
	c.settled("plain", "web", 0)
	scale(t, c, "plain", "web", 9)
	if load, want := c.settled("plain", "web", 9), map[string]int{"us-east-1a": 3, "us-east-1b": 3, "us-east-1c": 3}; !maps.Equal(load, want) {
		t.Errorf("scaled 0 → 9: %v, want %v", load, want)
	}
}

// checkChart: the installed chart's pod (on the host) made its certificate
// Secret and put the CA into the webhook configuration, and its service
// account may do what spread does and no more.
func (c *cluster) checkChart() {
	t := c.t
	t.Helper()
	secret, err := c.kube.CoreV1().Secrets("fargatekit-spread").Get(ctx, "fargatekit-spread-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's pod made no certificate Secret: %v", err)
	}
	hooks, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "0100-spread.fargatekit.io", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret.OwnerReferences) != 1 || secret.OwnerReferences[0].UID != hooks.UID {
		t.Errorf("the certificate Secret's owners are %+v, want the webhook configuration", secret.OwnerReferences)
	}
	for _, w := range hooks.Webhooks {
		if string(w.ClientConfig.CABundle) != string(secret.Data["ca.crt"]) {
			t.Errorf("webhook %s's caBundle is not the Secret's CA", w.Name)
		}
	}
	sa := "system:serviceaccount:fargatekit-spread:fargatekit-spread"
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "watch", Resource: "pods"}, true},
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "pods", Subresource: "eviction", Namespace: "apps"}, true},
		{authorizationv1.ResourceAttributes{Verb: "delete", Resource: "pods", Namespace: "apps"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Group: "apps", Resource: "statefulsets", Namespace: "apps"}, true},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "apps", Resource: "deployments", Namespace: "apps"}, false},
		{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: "apps"}, false},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets", Namespace: "fargatekit-spread"}, false},
		{authorizationv1.ResourceAttributes{Verb: "update", Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations", Name: "0500-amazon-eks-fargate-mutation.amazonaws.com"}, false},
	} {
		review, err := c.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{
			Spec: authorizationv1.SubjectAccessReviewSpec{User: sa, Groups: []string{"system:serviceaccounts"}, ResourceAttributes: &tc.attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if review.Status.Allowed != tc.want {
			t.Errorf("spread's service account may %s %s/%s %s in %q: %v, want %v", tc.attrs.Verb, tc.attrs.Resource, tc.attrs.Subresource, tc.attrs.Name, tc.attrs.Namespace, review.Status.Allowed, tc.want)
		}
	}

	// What RBAC allows of its webhook configuration, the chart's policy
	// narrows to the caBundle: as spread's service account, an update that
	// changes only it passes, one that makes a webhook block pods or take
	// every namespace is denied. The updates are dry runs: one the policy
	// should deny but does not (the API server loads it after a moment)
	// changes nothing.
	webhooks := c.asSpread().AdmissionregistrationV1().MutatingWebhookConfigurations()
	update := func(change func(*admissionregistrationv1.MutatingWebhookConfiguration)) error {
		h, err := webhooks.Get(ctx, "0100-spread.fargatekit.io", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(h)
		_, err = webhooks.Update(ctx, h, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	const denial = "spread may change the caBundle of its webhooks"
	for name, change := range map[string]func(*admissionregistrationv1.MutatingWebhookConfiguration){
		"failurePolicy Fail": func(h *admissionregistrationv1.MutatingWebhookConfiguration) {
			fail := admissionregistrationv1.Fail
			h.Webhooks[0].FailurePolicy = &fail
		},
		"every namespace": func(h *admissionregistrationv1.MutatingWebhookConfiguration) {
			h.Webhooks[1].NamespaceSelector = &metav1.LabelSelector{}
		},
	} {
		eventually(t, 30*time.Second, "the policy denies spread's service account "+name, func() error {
			err := update(change)
			if err == nil {
				return errors.New("the update is allowed")
			}
			if !strings.Contains(err.Error(), denial) {
				return fmt.Errorf("the update is refused otherwise: %w", err)
			}
			return nil
		})
	}
	for name, change := range map[string]func(*admissionregistrationv1.MutatingWebhookConfiguration){
		"nothing": func(*admissionregistrationv1.MutatingWebhookConfiguration) {},
		"the caBundle": func(h *admissionregistrationv1.MutatingWebhookConfiguration) {
			// The same certificate, one newline longer: still a valid bundle.
			h.Webhooks[0].ClientConfig.CABundle = append(h.Webhooks[0].ClientConfig.CABundle, '\n')
		},
	} {
		if err := update(change); err != nil {
			t.Errorf("spread's service account updates %s of its webhook configuration: %v, want it allowed", name, err)
		}
	}
}

// asSpread is a client acting as the chart's service account.
func (c *cluster) asSpread() kubernetes.Interface {
	c.t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.state, "kubeconfig"))
	if err != nil {
		c.t.Fatal(err)
	}
	rc.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:fargatekit-spread:fargatekit-spread",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:fargatekit-spread", "system:authenticated"}}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		c.t.Fatal(err)
	}
	return client
}

// checkEvictions: what RBAC allows of evictions, the chart's policy narrows
// to opted-in namespaces: as spread's service account, a dry-run eviction
// of a pod of apps passes, one of plain is denied.
func (c *cluster) checkEvictions(appsPod, plainPod string) {
	t := c.t
	t.Helper()
	client := c.asSpread()
	for _, tc := range []struct {
		ns, name string
		denied   bool
	}{{"apps", appsPod, false}, {"plain", plainPod, true}} {
		err := client.PolicyV1().Evictions(tc.ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: tc.ns, Name: tc.name},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
		if denied := err != nil && strings.Contains(err.Error(), "spread may evict only in namespaces labelled"); denied != tc.denied || (err != nil && !denied) {
			t.Errorf("spread's service account evicts %s/%s (dry run): %v, want denied %v", tc.ns, tc.name, err, tc.denied)
		}
	}
}

func scale(t *testing.T, c *cluster, ns, name string, replicas int32) {
	t.Helper()
	// Read again and retried when the Deployment changed in between (its
	// status, written by the controller-manager), as kubectl scale does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := c.kube.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Spec.Replicas = replicas
		_, err = c.kube.AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("scaling %s/%s to %d: %v", ns, name, replicas, err)
	}
}

func replicaSet(t *testing.T, c *cluster, ns, deployment string) string {
	t.Helper()
	rss, err := c.kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + deployment})
	if err != nil || len(rss.Items) != 1 {
		t.Fatalf("the ReplicaSets of %s: %v (%d)", deployment, err, len(rss.Items))
	}
	return rss.Items[0].Name
}

// podNames lists, sorted, the pods of a Deployment (by its app label).
func podNames(t *testing.T, c *cluster, ns, app string) []string {
	t.Helper()
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return names
}
