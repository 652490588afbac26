package emulator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/fargatekit/fargatekit/internal/browser"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/foundation"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// scanReport is the part of scan's JSON document the tests read.
type scanReport struct {
	Findings []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Object   struct {
			Kind, Namespace, Name string
		} `json:"object"`
		File    string            `json:"file"`
		Message string            `json:"message"`
		Details map[string]string `json:"details"`
	} `json:"findings"`
	Errors  []struct{ Message string } `json:"errors"`
	Cluster struct {
		Name          string `json:"name"`
		Version       string `json:"version"`
		ProfilesError string `json:"profilesError"`
		Profiles      []struct{ Name, Status string }
		Nodes         struct{ Fargate, EC2 int }
		PodsPerAZ     map[string]int `json:"podsPerAZ"`
		Workloads     []struct {
			Object struct{ Kind, Namespace, Name string }
			Pods   struct{ Fargate, EC2, Pending int }
		} `json:"workloads"`
	} `json:"cluster"`
}

// env is the environment `fargatekit emulator env` prints, as a user's
// shell has it after eval "$(fargatekit emulator env)", with the control
// plane's kubectl on the PATH.
func (c *cluster) env() []string {
	return append(os.Environ(),
		"KUBECONFIG="+filepath.Join(c.state, "kubeconfig"), "AWS_ENDPOINT_URL_EKS="+c.eksURL, "AWS_ENDPOINT_URL_EC2="+c.eksURL, "AWS_ENDPOINT_URL_IAM="+c.eksURL,
		"AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1", "AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator",
		"PATH="+c.binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// fargatekit runs the fargatekit binary in the emulator's environment and
// returns its standard output and error and its exit code.
func (c *cluster) fargatekit(env []string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(fargatekitBin, args...)
	cmd.Env = env
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		c.t.Fatalf("fargatekit %s: %v", strings.Join(args, " "), err)
	}
	return out.String(), errOut.String(), code
}

// scan runs `fargatekit scan -o json` and decodes its report.
func (c *cluster) scan(env []string, args ...string) (*scanReport, int) {
	c.t.Helper()
	out, errOut, code := c.fargatekit(env, append([]string{"scan", "-o", "json"}, args...)...)
	var r scanReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		c.t.Fatalf("fargatekit scan %s (exit %d): %v\n%s\n%s", strings.Join(args, " "), code, err, out, errOut)
	}
	return &r, code
}

// find returns the messages of the findings of a rule about kind/ns/name.
func (r *scanReport) find(rule, kind, ns, name string) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Rule == rule && f.Object.Kind == kind && f.Object.Namespace == ns && f.Object.Name == name {
			out = append(out, f.Message)
		}
	}
	return out
}

func (r *scanReport) fix(rule, kind, ns, name string) string {
	for _, f := range r.Findings {
		if f.Rule == rule && f.Object.Kind == kind && f.Object.Namespace == ns && f.Object.Name == name {
			return f.Details["fix"]
		}
	}
	return ""
}

func (r *scanReport) rules() []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Rule+" "+f.Object.Kind+"/"+f.Object.Namespace+"/"+f.Object.Name)
	}
	return out
}

// TestIntegrationScanIncident: the incident of examples/incident happened;
// scan exits 1 with the drift of every workload; fix drift --apply brings
// them back to Fargate; scan finds no drift any more. watch, serving all
// along, publishes the drift as it happens (a gauge, a Warning Event on
// each Deployment) and its end (the gauge at 0, a Normal Event).
func TestIntegrationScanIncident(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	c.deployIncident()
	env := c.env()
	watched := c.installWatch(env)
	drift := func(ns string) string {
		return fmt.Sprintf(`fargatekit_findings{name="drift-off-fargate",namespace=%q,rule="LV001",severity="blocker"}`, ns)
	}
	for _, ns := range incidentNamespaces {
		if v := watched(drift(ns)); v != 0 {
			t.Errorf("before the incident watch has %s %v", drift(ns), v)
		}
	}
	if r, _ := c.scan(env); len(r.find("LV001", "Deployment", "orders", "orders")) > 0 {
		t.Fatalf("drift before the incident: %v", r.rules())
	}
	// A bare pod created while no profile matched lands on EC2 too, and so
	// does a privileged Deployment, which Fargate would refuse.
	c.mergeDeletingFirst(func() {
		tool := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "tool", Namespace: "orders"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "tool", Image: "public.ecr.aws/example/tool:1"}}}}
		if _, err := c.kube.CoreV1().Pods("orders").Create(ctx, tool, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.deploy(deployment("orders", "agent", 1, func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
		}))
	})
	eventually(t, time.Minute, "agent on EC2", func() error { return c.all("orders", "agent", 1, "ec2") })
	agent := podNames(t, c, "orders", "agent")
	for _, ns := range incidentNamespaces {
		want := 1.0 // the Deployment; in orders the bare pod and agent too
		if ns == "orders" {
			want = 3
		}
		eventually(t, time.Minute, "watch publishes the drift in "+ns, func() error {
			if v := watched(drift(ns)); v != want {
				return fmt.Errorf("%s = %v, want %v", drift(ns), v, want)
			}
			return c.watchEvent(ns, "DriftOffFargate", corev1.EventTypeWarning)
		})
	}

	r, code := c.scan(env)
	if code != 1 {
		t.Errorf("scan exit %d after the incident, want 1", code)
	}
	if r.Cluster.Name != "shop" || r.Cluster.Version != "1.35" || r.Cluster.Nodes.EC2 != 2 || len(r.Cluster.Profiles) != 1 ||
		r.Cluster.Profiles[0].Name != "apps" || r.Cluster.Profiles[0].Status != "ACTIVE" {
		t.Errorf("cluster %+v", r.Cluster)
	}
	for _, ns := range incidentNamespaces {
		msgs := r.find("LV001", "Deployment", ns, ns)
		if len(msgs) != 1 || !strings.Contains(msgs[0], `2 of 2 pods run off Fargate (2 on EC2 nodes) although Fargate profile "apps"`) {
			t.Errorf("drift of %s: %q (findings %v)", ns, msgs, r.rules())
		}
		if fix := r.fix("LV001", "Deployment", ns, ns); fix != fmt.Sprintf("kubectl rollout restart -n %s deployment/%s && kubectl rollout status -n %s deployment/%s", ns, ns, ns, ns) {
			t.Errorf("fix of %s: %q", ns, fix)
		}
	}

	if msgs := r.find("LV001", "Pod", "orders", "tool"); len(msgs) != 1 {
		t.Errorf("drift of the bare pod: %q (findings %v)", msgs, r.rules())
	}
	out, errOut, code := c.fargatekit(env, "fix", "drift")
	if code != 0 || strings.Count(out, "kubectl rollout restart") != 4 || !strings.Contains(out, "# Pod orders/tool: delete it and create it again") ||
		!strings.Contains(out, "# Deployment/orders/agent: not restarted: Fargate would refuse its pods (") {
		t.Errorf("fix drift (exit %d) printed:\n%s%s", code, out, errOut)
	}
	for _, ns := range incidentNamespaces {
		if err := c.all(ns, ns, 2, "ec2"); err != nil {
			t.Errorf("fix drift without --apply changed something: %v", err)
		}
	}
	// The bare pod and the privileged Deployment are left, and said to be:
	// exit 1; agent keeps its pod.
	out, errOut, code = c.fargatekit(env, "fix", "drift", "--apply", "--timeout", "2m")
	if code != 1 || !strings.Contains(out, "Repaired 4 workloads") || strings.Count(errOut, "on Fargate\n") != 4 ||
		!strings.Contains(out, "Not restarted, still off Fargate (do it by hand):\n") || !strings.Contains(out, "  Pod/orders/tool: ") ||
		!strings.Contains(out, "  Deployment/orders/agent: Fargate would refuse its pods (") {
		t.Fatalf("fix drift --apply (exit %d):\n%s%s", code, out, errOut)
	}
	if got := podNames(t, c, "orders", "agent"); !slices.Equal(got, agent) {
		t.Errorf("fix drift --apply restarted the privileged agent: pods %v, were %v", got, agent)
	}
	// Its template is the operator's to fix; here it goes.
	if err := c.kube.AppsV1().Deployments("orders").Delete(ctx, "agent", metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "agent gone", func() error {
		if pods := podNames(t, c, "orders", "agent"); len(pods) > 0 {
			return fmt.Errorf("pods %v", pods)
		}
		return nil
	})
	out, errOut, code = c.fargatekit(env, "fix", "drift", "--apply", "--delete-bare-pods")
	if code != 0 || out != "Deleted 1 bare pod (nothing recreates them): Pod/orders/tool\n" {
		t.Fatalf("fix drift --apply --delete-bare-pods (exit %d):\n%s%s", code, out, errOut)
	}
	for _, ns := range incidentNamespaces {
		if err := c.all(ns, ns, 2, "fargate:apps"); err != nil {
			t.Errorf("after fix drift --apply: %v", err)
		}
	}
	r, code = c.scan(env)
	for _, f := range r.Findings {
		if f.Rule == "LV001" || f.Severity == "blocker" {
			t.Errorf("after the fix: %s %s/%s: %s", f.Rule, f.Object.Namespace, f.Object.Name, f.Message)
		}
	}
	if code != 0 {
		t.Errorf("scan exit %d after the fix, want 0", code)
	}
	for _, ns := range incidentNamespaces {
		eventually(t, time.Minute, "watch publishes the end of the drift in "+ns, func() error {
			if v := watched(drift(ns)); v != 0 {
				return fmt.Errorf("%s = %v, want 0", drift(ns), v)
			}
			return c.watchEvent(ns, "DriftOffFargateResolved", corev1.EventTypeNormal)
		})
	}
	out, errOut, code = c.fargatekit(env, "watch", "uninstall", "--emulator", "--state-dir", c.state)
	if code != 0 || out != "watch removed\n" {
		t.Errorf("watch uninstall (exit %d):\n%s%s", code, out, errOut)
	}
	if _, err := c.kube.CoreV1().Services(watchRelease).ProxyGet("http", watchRelease, "metrics", "metrics", nil).DoRaw(ctx); err == nil {
		t.Error("watch's metrics are served after watch uninstall")
	}
}

// watch runs `fargatekit watch serve` on the emulator until the test ends,
// as a service account bound to deploy/rbac/watch.yaml alone, and returns
// the URL of its metrics and its pid once it is ready.
func (c *cluster) watch(env []string) (string, int) {
	c.t.Helper()
	rbac, err := filepath.Abs(filepath.Join("..", "..", "deploy", "rbac", "watch.yaml"))
	if err != nil {
		c.t.Fatal(err)
	}
	setup := "kubectl apply -f " + rbac + ` >/dev/null &&
kubectl create serviceaccount watcher >/dev/null &&
kubectl create clusterrolebinding watcher --clusterrole fargatekit-watch --serviceaccount default:watcher >/dev/null &&
kubectl config set-credentials watcher --token "$(kubectl create token watcher --duration 1h)" >/dev/null &&
kubectl config set-context watcher --user watcher --cluster "$(kubectl config view --minify -o jsonpath='{.clusters[0].name}')" >/dev/null &&
kubectl auth can-i patch deployments --context watcher`
	if out, err := c.shell(env, setup); err == nil || strings.TrimSpace(out) != "no" {
		c.t.Fatalf("the watcher account: %v (want it not allowed to patch Deployments)\n%s", err, out)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(c.t))
	cmd := exec.Command(fargatekitBin, "watch", "serve", "--context", "watcher", "--metrics-listen", addr, "--eks-interval", "10s", "--coalesce", "500ms", "--log-level", "info", "--profiling")
	var log strings.Builder
	cmd.Env, cmd.Stdout, cmd.Stderr = env, &log, &log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	c.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := <-exited; err != nil || c.t.Failed() {
			c.t.Logf("watch serve: %v\n%s", err, log.String())
		}
	})
	eventually(c.t, time.Minute, "watch serve ready", func() error {
		select {
		case err := <-exited:
			c.t.Fatalf("watch serve exited: %v\n%s", err, log.String())
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/readyz: %s", resp.Status)
		}
		return nil
	})
	return "http://" + addr + "/metrics", cmd.Process.Pid
}

// TestIntegrationScanCluster: on one cluster, what scan finds that needs no
// incident: a node group a minor behind, a pod held Terminating by a
// finalizer (repaired by the command scan prints), the AZs of a seeded
// placement, Helm releases with removed and deprecated APIs, a removed API
// in a last-applied-configuration; and without the EKS API, everything that
// needs no profiles.
func TestIntegrationScanCluster(t *testing.T) {
	t.Parallel()
	c := start(t, "scan")
	env := c.env()
	c.namespace("apps")
	c.deploy(deployment("apps", "web", 6, nil))
	eventually(t, time.Minute, "web on Fargate", func() error { return c.all("apps", "web", 6, "fargate:apps") })

	held := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "apps", Finalizers: []string{"example.com/hold"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "public.ecr.aws/example/held:1"}}},
	}
	if _, err := c.kube.CoreV1().Pods("apps").Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.kube.CoreV1().Pods("apps").Delete(ctx, "held", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}

	// A Deployment applied long ago as extensions/v1beta1: its last-applied-configuration says so.
	lastApplied := `{"apiVersion":"extensions/v1beta1","kind":"Deployment","metadata":{"name":"web","namespace":"apps"}}`
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{"kubectl.kubernetes.io/last-applied-configuration": lastApplied}}})
	if _, err := c.kube.AppsV1().Deployments("apps").Patch(ctx, "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	helmInstall(t, filepath.Join(c.state, "kubeconfig"))
	// Argo Rollouts' CRD and a Rollout whose pods Fargate refuses (no Argo
	// controller runs: the Rollout has no pods, and check's rules still read it);
	// an aws-logging ConfigMap with a key Fargate does not read.
	kubectl := exec.Command("kubectl", "apply", "-f", "-")
	kubectl.Env, kubectl.Stdin = env, strings.NewReader(liveExtras)
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	eventually(t, 30*time.Second, "the Rollout CRD served", func() error {
		_, err := c.kube.Discovery().ServerResourcesForGroupVersion("argoproj.io/v1alpha1")
		return err
	})
	kubectl = exec.Command("kubectl", "apply", "-f", "-")
	kubectl.Env, kubectl.Stdin = env, strings.NewReader(rollout)
	if out, err := kubectl.CombinedOutput(); err != nil {
		t.Fatalf("kubectl apply the Rollout: %v\n%s", err, out)
	}

	if r, _ := c.scan(env); len(r.find("LV007", "Pod", "apps", "held")) > 0 {
		t.Errorf("the held pod is stuck under the default --stuck-after of 10m: %v", r.rules())
	}
	// Terminating for --stuck-after's minimum, a second, and so stuck.
	eventually(t, 10*time.Second, "the held pod Terminating for a second", func() error {
		p, err := c.kube.CoreV1().Pods("apps").Get(ctx, "held", metav1.GetOptions{})
		if err == nil && (p.DeletionTimestamp == nil || time.Since(p.DeletionTimestamp.Time) < time.Second) {
			err = fmt.Errorf("deleted at %v", p.DeletionTimestamp)
		}
		return err
	})
	r, code := c.scan(env, "--stuck-after", "1s")
	if code != 1 {
		t.Errorf("scan exit %d, want 1 (removed APIs are blockers)", code)
	}
	if len(r.find("FG006", "Rollout", "apps", "canary")) != 1 || len(r.find("FG051", "ConfigMap", "aws-observability", "aws-logging")) != 1 {
		t.Errorf("the Rollout and the aws-logging ConfigMap: findings %v", r.rules())
	}
	if msgs := r.find("LV006", "Nodegroup", "", "old"); len(msgs) != 1 || !strings.Contains(msgs[0], "1 node with kubelet 1.34, behind the control plane (1.35)") ||
		r.fix("LV006", "Nodegroup", "", "old") != "aws eks update-nodegroup-version --cluster-name shop --nodegroup-name old" {
		t.Errorf("node group behind: %q (findings %v)", msgs, r.rules())
	}
	// The AZs of the seeded placement, as the cluster has them, and scan's count of them.
	perAZ := c.podsPerAZ("apps", "web")
	if !maps.Equal(perAZ, r.Cluster.PodsPerAZ) {
		t.Errorf("scan counts Fargate pods per AZ %v, the cluster has %v", r.Cluster.PodsPerAZ, perAZ)
	}
	skewed := spread.Skew(perAZ, zones) > 1
	if got := len(r.find("LV005", "Deployment", "apps", "web")) == 1; got != skewed {
		t.Errorf("pods per AZ %v: az-skew reported %v, want %v", perAZ, got, skewed)
	}
	if !skewed {
		t.Errorf("seed 7 spreads the 6 replicas %v evenly: the scenario must pile them for az-skew to fire; choose another seed", perAZ)
	}
	c.checkScanPage(env, len(perAZ))
	if msgs := r.find("DEP001", "Deployment", "apps", "web"); len(msgs) != 1 || !strings.HasPrefix(msgs[0], "its last-applied-configuration uses extensions/v1beta1 Deployment was removed in Kubernetes 1.16") {
		t.Errorf("last-applied removed API: %q", msgs)
	}
	var helmFindings []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.File, "helm release") {
			helmFindings = append(helmFindings, f.Rule+" "+f.File+" "+f.Object.Kind+"/"+f.Object.Name)
		}
	}
	slices.Sort(helmFindings)
	want := []string{"DEP001 helm release apps/old-pdb PodDisruptionBudget/web", "DEP002 helm release apps/legacy Endpoints/legacy"}
	if !slices.Equal(helmFindings, want) {
		t.Errorf("Helm release findings %q, want %q", helmFindings, want)
	}

	msgs := r.find("LV007", "Pod", "apps", "held")
	fix := r.fix("LV007", "Pod", "apps", "held")
	if len(msgs) != 1 || !strings.Contains(msgs[0], "held by finalizers example.com/hold") || !strings.HasPrefix(fix, "kubectl patch pod -n apps held") {
		t.Fatalf("stuck pod: %q, fix %q (findings %v)", msgs, fix, r.rules())
	}
	if out, err := c.shell(env, fix); err != nil {
		t.Fatalf("%s: %v\n%s", fix, err, out)
	}
	eventually(t, 30*time.Second, "the held pod gone", func() error {
		_, err := c.kube.CoreV1().Pods("apps").Get(ctx, "held", metav1.GetOptions{})
		if err == nil {
			return errors.New("still there")
		}
		return nil
	})

	// Without the EKS API: one line says why; what needs no profiles is still reported.
	noEKS := append(slices.Clone(env), "AWS_ENDPOINT_URL_EKS=http://127.0.0.1:1", "AWS_MAX_ATTEMPTS=1")
	r, code = c.scan(noEKS)
	if code != 1 { // the removed APIs: the findings decide, not the missing profiles
		t.Errorf("scan without the EKS API: exit %d, want 1", code)
	}
	if !strings.HasPrefix(r.Cluster.ProfilesError, `cannot reach the EKS API for eks:DescribeCluster on cluster "shop" in us-east-1: dial tcp 127.0.0.1:1`) ||
		len(r.Cluster.Profiles) != 0 {
		t.Errorf("profiles error %q, profiles %v", r.Cluster.ProfilesError, r.Cluster.Profiles)
	}
	if len(r.find("LV006", "Nodegroup", "", "old")) != 1 || len(r.find("FG032", "Deployment", "apps", "web")) != 1 {
		t.Errorf("without the EKS API: findings %v", r.rules())
	}
	out, errOut, _ := c.fargatekit(noEKS, "scan")
	if !strings.Contains(out, "Fargate profiles: not read (") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("without the EKS API, text output:\n%s\nstandard error:\n%s", out, errOut)
	}
	if r, _ := c.scan(env, "--cluster-name", "nope"); r.Cluster.ProfilesError != `the EKS API in us-east-1 knows no cluster named "nope" (eks:DescribeCluster)` {
		t.Errorf("an unknown cluster name: profiles error %q", r.Cluster.ProfilesError)
	}

	// A Helm release Secret that does not decode: one error naming it, exit 2, the rest reported.
	bad := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sh.helm.release.v1.broken.v1", Namespace: "apps",
		Labels: map[string]string{"owner": "helm", "status": "deployed", "name": "broken"}}, Data: map[string][]byte{"release": []byte("not base64!")}}
	if _, err := c.kube.CoreV1().Secrets("apps").Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r, code = c.scan(env)
	if code != 2 || len(r.Errors) != 1 || !strings.HasPrefix(r.Errors[0].Message, "decoding the Helm release in Secret apps/sh.helm.release.v1.broken.v1: ") ||
		len(r.find("LV006", "Nodegroup", "", "old")) != 1 || len(r.find("DEP002", "Endpoints", "apps", "legacy")) != 1 {
		t.Errorf("with a broken release: exit %d, errors %v, findings %v", code, r.Errors, r.rules())
	}
	// --helm=false reads no Secret: no error, no finding from a release.
	r, code = c.scan(env, "--helm=false")
	for _, f := range r.Findings {
		if strings.HasPrefix(f.File, "helm release") {
			t.Errorf("--helm=false: %s %s", f.Rule, f.File)
		}
	}
	if code != 1 || len(r.Errors) != 0 {
		t.Errorf("--helm=false: exit %d, errors %v", code, r.Errors)
	}
}

// podsPerAZ counts a workload's running pods per AZ of their nodes.
func (c *cluster) podsPerAZ(ns, app string) map[string]int {
	c.t.Helper()
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		n, err := c.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
		if err != nil {
			c.t.Fatal(err)
		}
		out[n.Labels[corev1.LabelTopologyZone]]++
	}
	return out
}

// helmInstall installs, with the Helm SDK, a chart whose Endpoints the next
// Kubernetes version deprecates, and records (as a `helm install` on an older
// cluster did) a release whose PodDisruptionBudget is policy/v1beta1.
func helmInstall(t *testing.T, kubeconfig string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: legacy\nversion: 0.1.0\n",
		"templates/endpoints.yaml": "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: legacy\nsubsets:\n" +
			"  - addresses: [{ip: 10.0.0.10}]\n    ports: [{port: 80}]\n",
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ch, err := loader.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &kubeconfig
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, "apps", "secret"); err != nil {
		t.Fatal(err)
	}
	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace, install.WaitStrategy = "legacy", "apps", kube.HookOnlyStrategy
	if _, err := install.RunWithContext(ctx, ch, nil); err != nil {
		t.Fatalf("helm install legacy: %v", err)
	}
	client, err := cfg.KubernetesClientSet()
	if err != nil {
		t.Fatal(err)
	}
	old := &rspb.Release{Name: "old-pdb", Namespace: "apps", Version: 1, Info: &rspb.Info{Status: common.StatusDeployed},
		Manifest: "---\n# Source: old/templates/pdb.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\nspec:\n  minAvailable: 1\n"}
	if err := driver.NewSecrets(client.CoreV1().Secrets("apps")).Create("sh.helm.release.v1.old-pdb.v1", old); err != nil {
		t.Fatalf("recording the old release: %v", err)
	}
}

// liveExtras are Argo Rollouts' CRD (the part the API server needs) and an
// aws-logging ConfigMap that Fargate's Fluent Bit does not accept.
const liveExtras = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rollouts.argoproj.io}
spec:
  group: argoproj.io
  names: {kind: Rollout, plural: rollouts, singular: rollout}
  scope: Namespaced
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
---
apiVersion: v1
kind: Namespace
metadata: {name: aws-observability, labels: {aws-observability: enabled}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: aws-logging, namespace: aws-observability}
data:
  fluent-bit.conf: |
    [SERVICE]
        Flush 5
  output.conf: |
    [OUTPUT]
        Name cloudwatch_logs
        Match *
        region us-east-1
        log_group_name /eks/fargate
        auto_create_group true
`

// rollout is an Argo Rollout in the namespace of Fargate profile apps whose
// pods ask for the host's network.
const rollout = `apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: canary, namespace: apps}
spec:
  replicas: 2
  selector: {matchLabels: {app: canary}}
  template:
    metadata: {labels: {app: canary}}
    spec:
      hostNetwork: true
      containers: [{name: canary, image: public.ecr.aws/example/canary:1}]
  strategy: {canary: {steps: [{setWeight: 50}]}}
`

// TestIntegrationScanPrerequisites: a cluster built by hand with pieces
// missing (examples/emulator/prerequisites). scan reads the VPC, subnets,
// route tables and endpoints from the emulator's EC2 API and the pod
// execution role from its IAM API, and reports what check reports from
// infrastructure code: the subnet without a NAT route, the role's foreign
// aws:SourceArn and missing policy. EKS refuses a profile whose role does
// not trust Fargate, through the AWS CLI.
func TestIntegrationScanPrerequisites(t *testing.T) {
	t.Parallel()
	c := start(t, "prerequisites")
	env := c.env()
	r, code := c.scan(env)
	const role = "AmazonEKSFargatePodExecutionRole"
	if code != 1 {
		t.Errorf("scan exit %d, want 1 (blockers)", code)
	}
	if msgs := r.find("FG055", "Subnet", "", "subnet-private3"); len(msgs) != 1 || !strings.Contains(msgs[0], "Fargate profile apps cannot pull images") {
		t.Errorf("FG055 on subnet-private3: %q; findings %v", msgs, r.rules())
	}
	if msgs := r.find("FG057", "IAMRole", "", role); len(msgs) != 1 || !strings.Contains(msgs[0], "fargateprofile/blog/*") {
		t.Errorf("FG057 on the role: %q; findings %v", msgs, r.rules())
	}
	if msgs := r.find("FG058", "IAMRole", "", role); len(msgs) != 1 {
		t.Errorf("FG058 on the role: %q; findings %v", msgs, r.rules())
	}
	// Near misses: the NAT-routed subnet, the VPC's DNS, the role's trust.
	for _, rule := range []struct{ id, kind, name string }{
		{"FG055", "Subnet", "subnet-private1"}, {"FG053", "VPC", "vpc-0fa76a7e0000emu"}, {"FG056", "IAMRole", role}, {"FG054", "Subnet", "subnet-private1"},
	} {
		if msgs := r.find(rule.id, rule.kind, "", rule.name); len(msgs) > 0 {
			t.Errorf("%s on %s/%s: %q", rule.id, rule.kind, rule.name, msgs)
		}
	}
	out, err := c.shell(env, "aws eks create-fargate-profile --cluster-name shop --fargate-profile-name web "+
		"--pod-execution-role-arn arn:aws:iam::111122223333:role/ec2-only --selectors namespace=web")
	if err == nil || !strings.Contains(out, "InvalidParameterException") || !strings.Contains(out, foundation.MisconfiguredTrust) {
		t.Errorf("create-fargate-profile with role ec2-only: %v\n%s", err, out)
	}
}

// TestIntegrationImagePull: a Fargate pod whose image does not pull stays
// Pending, as on AWS, its container in ErrImagePull then ImagePullBackOff
// with the kubelet's events: nginx from the subnet without a NAT route
// (FG055), an ECR image under the pod execution role without a policy
// (FG058). The same image runs from the subnet with one (the near miss).
func TestIntegrationImagePull(t *testing.T) {
	t.Parallel()
	settings := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(settings, []byte("honourZoneSelector: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := start(t, "prerequisites", "--settings", settings)
	const ecr = "111122223333.dkr.ecr.us-east-1.amazonaws.com/shop/api:1"
	in := func(az, image string) func(*corev1.PodTemplateSpec) {
		return func(p *corev1.PodTemplateSpec) {
			p.Spec.NodeSelector = map[string]string{corev1.LabelTopologyZone: az}
			p.Spec.Containers[0].Image = image
		}
	}
	c.namespace("apps")
	c.deploy(deployment("apps", "web-a", 1, in("us-east-1a", "nginx:1.27")))
	c.deploy(deployment("apps", "web-c", 1, in("us-east-1c", "nginx:1.27")))
	c.deploy(deployment("apps", "api", 1, in("us-east-1a", ecr)))
	eventually(t, time.Minute, "web-a runs", func() error { return c.all("apps", "web-a", 1, "fargate:apps") })

	backOff := func(app string) (*corev1.Pod, error) {
		pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return nil, err
		}
		if len(pods.Items) != 1 {
			return nil, fmt.Errorf("%s has %d pods, want 1", app, len(pods.Items))
		}
		p := &pods.Items[0]
		if p.Status.Phase != corev1.PodPending || len(p.Status.ContainerStatuses) != 1 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
			p.Status.ContainerStatuses[0].State.Waiting.Reason != "ImagePullBackOff" {
			return nil, fmt.Errorf("%s: phase %s, containers %+v", p.Name, p.Status.Phase, p.Status.ContainerStatuses)
		}
		return p, nil
	}
	for app, cause := range map[string]string{
		"web-c": `failed to do request: Head "https://registry-1.docker.io/v2/library/nginx/manifests/1.27": dial tcp: i/o timeout`,
		"api":   "401 Unauthorized",
	} {
		var pod *corev1.Pod
		eventually(t, time.Minute, app+" backs off", func() (err error) { pod, err = backOff(app); return err })
		if !strings.HasPrefix(pod.Spec.NodeName, "fargate-ip-") {
			t.Errorf("%s is on node %q, not a Fargate node", pod.Name, pod.Spec.NodeName)
		}
		evs, err := c.kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name})
		if err != nil {
			t.Fatal(err)
		}
		var failed []string
		for _, e := range evs.Items {
			if e.Reason == "Failed" && e.Source.Component == "kubelet" {
				failed = append(failed, e.Message)
			}
		}
		slices.Sort(failed)
		if len(failed) != 3 || failed[0] != "Error: ErrImagePull" || failed[1] != "Error: ImagePullBackOff" ||
			!strings.HasPrefix(failed[2], "Failed to pull image ") || !strings.HasSuffix(failed[2], cause) {
			t.Errorf("%s: Failed events %q, want the errors and the pull's, ending %q", pod.Name, failed, cause)
		}
	}
	// KWOK does not run them later, and kubectl shows them as on AWS.
	consistently(t, 3*time.Second, "pods that cannot pull their image", func() error {
		pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{LabelSelector: "app in (web-c, api)"})
		if err != nil {
			return err
		}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning {
				return fmt.Errorf("%s runs", p.Name)
			}
		}
		return nil
	})
	out, err := exec.Command(filepath.Join(c.binDir, "kubectl"), "--kubeconfig", filepath.Join(c.state, "kubeconfig"),
		"get", "pods", "-n", "apps", "-l", "app in (web-c, api)", "--no-headers").CombinedOutput()
	if err != nil || strings.Count(string(out), "ImagePullBackOff") != 2 || strings.Contains(string(out), "Running") {
		t.Errorf("kubectl get pods: %v\n%s", err, out)
	}
}

// checkScanPage opens the page of `scan -o html` in headless Chromium: it
// reads well (browser.Problems), draws a bar per AZ with Fargate pods, and
// marks apps/web, piled into one AZ, as skewed. With
// FARGATEKIT_SCREENSHOTS=DIR (make screenshots) it writes DIR/scan.png.
func (c *cluster) checkScanPage(env []string, zonesWithPods int) {
	c.t.Helper()
	b := browser.ForTest(c.t)
	if b == nil {
		return
	}
	out, stderr, code := c.fargatekit(env, "scan", "--stuck-after", "1s", "-o", "html")
	if code != 1 {
		c.t.Fatalf("scan -o html: exit %d, want 1\n%s", code, stderr)
	}
	path := filepath.Join(c.t.TempDir(), "scan.html")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		c.t.Fatal(err)
	}
	v := browser.View{Width: 1280, Height: 900}
	p, err := b.Open(path, v)
	if err != nil {
		c.t.Fatal(err)
	}
	defer p.Close()
	if problems, err := p.Problems(v); err != nil || len(problems) > 0 {
		c.t.Errorf("scan's page: %q (%v)", problems, err)
	}
	if n, err := p.Count("svg.az.pods .bar"); err != nil || n != zonesWithPods {
		c.t.Errorf("scan's page draws %d AZ bars (%v), want %d", n, err, zonesWithPods)
	}
	skewed, err := browser.Eval[string](p, `Array.from(document.querySelectorAll("table.spread tr.skewed th")).map(th => th.textContent).join(",")`)
	if err != nil || !strings.Contains(skewed, "Deployment/apps/web") {
		c.t.Errorf("scan's page marks %q as skewed (%v), want Deployment/apps/web among them", skewed, err)
	}
	if dir := os.Getenv("FARGATEKIT_SCREENSHOTS"); dir != "" {
		if err := p.SaveScreenshot(filepath.Join(dir, "scan.png")); err != nil {
			c.t.Fatal(err)
		}
	}
}

// TestIntegrationStartFailure: a container whose CPU limit is above the
// vCPU its pod is provisioned with (the Flux controllers' shape) does not
// start on Fargate, as fargate.StartFailures says: the pod runs its other
// container, the failing one fails with StartError and the runtime's error,
// then waits in CrashLoopBackOff, with the kubelet's events; kubectl shows
// it so. The AWS Load Balancer Controller without its VPC ID asks the
// instance metadata service, which Fargate lacks, and exits. scan reports
// both workloads crash-looping with the cause (LV012, a blocker) and, from
// check's rules, the limit (FG025) and the controller (FG027). The same
// workloads with requests equal to limits and with --aws-vpc-id run (the
// near misses).
func TestIntegrationStartFailure(t *testing.T) {
	t.Parallel()
	c := start(t, "scan")
	env := c.env()
	c.namespace("apps")
	resources := func(request, limit string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(request), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(limit), corev1.ResourceMemory: resource.MustParse("64Mi")},
		}
	}
	controller := func(request string) func(*corev1.PodTemplateSpec) {
		return func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Resources = resources(request, "1")
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "proxy", Image: "public.ecr.aws/example/proxy:1",
				Resources: resources("100m", "100m")})
		}
	}
	c.deploy(deployment("apps", "flux", 1, controller("100m")))
	c.deploy(deployment("apps", "steady", 1, controller("1")))
	lbc := func(args ...string) func(*corev1.PodTemplateSpec) {
		return func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].Image = "public.ecr.aws/eks/aws-load-balancer-controller:v2.8.1"
			p.Spec.Containers[0].Args = append([]string{"--cluster-name=shop"}, args...)
		}
	}
	c.deploy(deployment("apps", "lbc", 1, lbc()))
	c.deploy(deployment("apps", "lbc-told", 1, lbc("--aws-vpc-id=vpc-0123456789abcdef0")))
	for _, app := range []string{"steady", "lbc-told"} {
		eventually(t, time.Minute, app+" runs", func() error { return c.all("apps", app, 1, "fargate:apps") })
	}
	eventually(t, time.Minute, "the controller exits and backs off", func() error {
		pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{LabelSelector: "app=lbc"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 || len(pods.Items[0].Status.ContainerStatuses) != 1 {
			return fmt.Errorf("lbc's pods: %d", len(pods.Items))
		}
		st := pods.Items[0].Status.ContainerStatuses[0]
		if last := st.LastTerminationState.Terminated; st.State.Waiting == nil || st.State.Waiting.Reason != "CrashLoopBackOff" ||
			last == nil || last.Reason != "Error" || last.ExitCode != 1 {
			return fmt.Errorf("lbc's container: %+v", st)
		}
		return nil
	})

	var pod corev1.Pod
	eventually(t, time.Minute, "flux's manager backs off", func() error {
		pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{LabelSelector: "app=flux"})
		if err != nil {
			return err
		}
		if len(pods.Items) != 1 {
			return fmt.Errorf("flux has %d pods, want 1", len(pods.Items))
		}
		pod = pods.Items[0]
		states := map[string]string{}
		for _, s := range pod.Status.ContainerStatuses {
			switch {
			case s.State.Waiting != nil:
				states[s.Name] = s.State.Waiting.Reason
			case s.State.Running != nil:
				states[s.Name] = "Running"
			}
		}
		if pod.Status.Phase != corev1.PodRunning || states["flux"] != "CrashLoopBackOff" || states["proxy"] != "Running" {
			return fmt.Errorf("phase %s, containers %v", pod.Status.Phase, states)
		}
		return nil
	})
	if !strings.HasPrefix(pod.Spec.NodeName, "fargate-ip-") || pod.Annotations[fargate.CapacityProvisionedAnnotation] != "0.25vCPU 0.5GB" {
		t.Errorf("flux's pod on node %q, provisioned %q", pod.Spec.NodeName, pod.Annotations[fargate.CapacityProvisionedAnnotation])
	}
	for _, s := range pod.Status.ContainerStatuses {
		if last := s.LastTerminationState.Terminated; s.Name == "flux" && (s.RestartCount != 1 || last == nil || last.Reason != "StartError" ||
			last.ExitCode != 128 || !strings.Contains(last.Message, `failed to write "100000"`) || !strings.HasSuffix(last.Message, "cpu.cfs_quota_us: invalid argument: unknown")) {
			t.Errorf("flux's container: restarts %d, last state %+v", s.RestartCount, last)
		}
	}
	evs, err := c.kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name})
	if err != nil {
		t.Fatal(err)
	}
	kubelet := map[string]string{}
	for _, e := range evs.Items {
		if e.Source.Component == "kubelet" && e.Type == corev1.EventTypeWarning {
			kubelet[e.Reason] = e.Message
		}
	}
	if !strings.HasPrefix(kubelet["Failed"], "Error: failed to create containerd task: ") ||
		kubelet["BackOff"] != fmt.Sprintf("Back-off restarting failed container flux in pod %s_apps(%s)", pod.Name, pod.UID) {
		t.Errorf("the kubelet's Warning events: %q", kubelet)
	}
	out := c.kubectl("get pods -n apps -l app=flux --no-headers")
	if !strings.Contains(out, "1/2") || !strings.Contains(out, "CrashLoopBackOff") {
		t.Errorf("kubectl get pods:\n%s", out)
	}

	r, code := c.scan(env)
	if code != 1 {
		t.Errorf("scan exit %d, want 1 (a blocker)", code)
	}
	msgs := r.find("LV012", "Deployment", "apps", "flux")
	if len(msgs) != 1 || !strings.Contains(msgs[0], `the cause: container "flux" has a CPU limit of 1, above the 0.25 vCPU Fargate provisions`) {
		t.Errorf("scan's LV012 of flux: %q (findings %v)", msgs, r.rules())
	}
	for _, f := range r.Findings {
		if f.Rule == "LV012" && f.Severity != "blocker" {
			t.Errorf("LV012 is a %s, want a blocker", f.Severity)
		}
	}
	msgs = r.find("LV012", "Deployment", "apps", "lbc")
	if len(msgs) != 1 || !strings.Contains(msgs[0], `last ended with Error (exit code 1)`) ||
		!strings.Contains(msgs[0], `the cause: container "lbc" (AWS Load Balancer Controller) asks the instance metadata service for the VPC ID`) {
		t.Errorf("scan's LV012 of lbc: %q", msgs)
	}
	if len(r.find("FG025", "Deployment", "apps", "flux")) != 1 || len(r.find("FG027", "Deployment", "apps", "lbc")) != 1 {
		t.Errorf("FG025 on flux, FG027 on lbc: findings %v", r.rules())
	}
	for _, app := range []string{"steady", "lbc-told"} {
		for _, rule := range []string{"LV012", "FG025", "FG027"} {
			if msgs := r.find(rule, "Deployment", "apps", app); len(msgs) != 0 {
				t.Errorf("%s on %s: %q", rule, app, msgs)
			}
		}
	}
}
