package emulator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	smithy "github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	fkeks "github.com/fargatekit/fargatekit/pkg/eks"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// TestIntegrationUpgrade rehearses an upgrade of examples/emulator/upgrade
// (everything at 1.33) with the SDK, and each way EKS refuses or fails one
// on the way: the control plane goes to 1.34 (and its API server emulates
// 1.34, no longer 1.33); 1.35 is refused while the
// node group is behind; the node group update fails with
// PodEvictionFailure while a PodDisruptionBudget allows no disruption, and
// succeeds once it allows one, the Deployment's pods moved to the new
// nodes; 1.35 is refused while Fargate pods run 1.33 kubelets, and accepted
// once they are recreated; a pod held Terminating by a finalizer fails the
// next node group update, and a forced one goes through.
func TestIntegrationUpgrade(t *testing.T) {
	t.Parallel()
	c := start(t, "upgrade")
	c.namespace("apps")
	c.deploy(deployment("apps", "web", 2, nil))
	c.deploy(deployment("default", "api", 2, nil))
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "default"},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: ptr(intstr.FromInt32(2)),
			Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
		},
	}
	if _, err := c.kube.PolicyV1().PodDisruptionBudgets("default").Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "web on Fargate, api on EC2", func() error {
		return errors.Join(c.all("apps", "web", 2, "fargate:apps"), c.all("default", "api", 2, "ec2"))
	})
	if got := c.kubelets(); !slices.Equal(got, []string{"fargate 1.33", "fargate 1.33", "system 1.33", "system 1.33"}) {
		t.Fatalf("kubelets at the start: %v", got)
	}
	if v, resourceV1 := c.served(); v != "1.33" || resourceV1 {
		t.Fatalf("the API server at the start: emulates %s, serves resource.k8s.io/v1: %v; want 1.33 without", v, resourceV1)
	}
	env := c.env()
	// The plan foresees the failed drain: api's PDB allows no disruption.
	eventually(t, 30*time.Second, "the PDB's status", func() error {
		p, err := c.kube.PolicyV1().PodDisruptionBudgets("default").Get(ctx, "api", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.ObservedGeneration == 0 {
			return errors.New("not observed yet")
		}
		return nil
	})
	plan := c.upgradePlan(env, "1.35")
	if len(plan.Hops) != 2 || plan.From != "1.33" || !plan.Blocked {
		t.Fatalf("plan at the start: %+v", plan)
	}
	if got := plan.Hops[0].issues(); !slices.Contains(got, "blocker drain-blocked PodDisruptionBudget default/api") || slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "behind") }) {
		t.Errorf("first hop's issues: %v", got)
	}
	if got := plan.Hops[0].commands(); !slices.Contains(got, "aws eks update-cluster-version --name upgrade --kubernetes-version 1.34") ||
		!slices.Contains(got, "aws eks update-nodegroup-version --cluster-name upgrade --nodegroup-name system --kubernetes-version 1.34") {
		t.Errorf("first hop's commands: %v", got)
	}
	if _, _, code := c.fargatekit(env, "upgrade", "check"); code != 1 {
		t.Errorf("upgrade check with the PDB at 0 disruptions: exit %d, want 1", code)
	}

	// 1.33 → 1.34: nothing is behind. The API server now serves the APIs
	// new in 1.34.
	c.updateCluster("1.34")
	if _, resourceV1 := c.served(); !resourceV1 {
		t.Error("at 1.34 the API server does not serve resource.k8s.io/v1")
	}
	if _, err := c.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(c.name), Version: aws.String("1.35")}); !strings.Contains(errorText(err),
		"InvalidParameterException: Update failed because of Nodegroups system must be updated to match cluster version 1.34 before updating cluster version") {
		t.Fatalf("update to 1.35 with the node group behind: %v", err)
	}

	// EKS's insight says what is behind: the node group's two nodes and the
	// two Fargate nodes.
	insights, err := c.eks.ListInsights(ctx, &eks.ListInsightsInput{ClusterName: aws.String(c.name), Filter: &ekstypes.InsightsFilter{KubernetesVersions: []string{"1.35"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insights.Insights {
		if aws.ToString(in.Name) != "Kubelet version skew" {
			continue
		}
		d, err := c.eks.DescribeInsight(ctx, &eks.DescribeInsightInput{ClusterName: aws.String(c.name), Id: in.Id})
		if err != nil || d.Insight.InsightStatus.Status != ekstypes.InsightStatusValueError || len(d.Insight.Resources) != 4 {
			t.Errorf("kubelet skew insight with the node group behind: %+v %v", d, err)
		}
	}

	// The node group update cannot drain a node: the PDB allows no disruption.
	failed := c.updateNodegroup("system", false)
	if failed.Status != ekstypes.UpdateStatusFailed || len(failed.Errors) != 1 || failed.Errors[0].ErrorCode != ekstypes.ErrorCodePodEvictionFailure {
		t.Fatalf("node group update under a PDB at 0 disruptions: %s %+v", failed.Status, failed.Errors)
	}
	if got := aws.ToString(failed.Errors[0].ErrorMessage); got != "Reached max retries while trying to evict pods from nodes in node group system" {
		t.Errorf("PodEvictionFailure message: %q", got)
	}
	if v := c.nodegroupVersion("system"); v != "1.33" {
		t.Errorf("node group version after the failed update: %s", v)
	}
	// Fixed: the PDB allows one pod down. The same update now goes through.
	patch := []byte(`{"spec":{"minAvailable":1}}`)
	if _, err := c.kube.PolicyV1().PodDisruptionBudgets("default").Patch(ctx, "api", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := c.updateNodegroup("system", false); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("node group update with a PDB allowing one disruption: %s %+v", u.Status, u.Errors)
	}
	if v := c.nodegroupVersion("system"); v != "1.34" {
		t.Errorf("node group version after the update: %s", v)
	}
	eventually(t, time.Minute, "api on the new nodes", func() error {
		if err := c.all("default", "api", 2, "ec2"); err != nil {
			return err
		}
		if got := c.kubelets(); !slices.Equal(got, []string{"fargate 1.33", "fargate 1.33", "system 1.34", "system 1.34"}) {
			return fmt.Errorf("kubelets %v", got)
		}
		return nil
	})

	// The Fargate pods still run 1.33 kubelets: the plan says so, and EKS
	// refuses; recreated, they get 1.34.
	plan = c.upgradePlan(env, "1.35")
	if got := plan.Hops[0].issues(); !slices.Equal(got, []string{"blocker fargate-behind Deployment apps/web"}) {
		t.Errorf("issues with the Fargate pods behind: %v", got)
	}
	if _, err := c.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(c.name), Version: aws.String("1.35")}); !strings.Contains(errorText(err), "Fargate nodes fargate-ip-") {
		t.Fatalf("update to 1.35 with Fargate pods behind: %v", err)
	}
	c.restart("apps", "web")
	eventually(t, time.Minute, "web recreated on 1.34 kubelets", func() error {
		if got := c.kubelets(); !slices.Equal(got, []string{"fargate 1.34", "fargate 1.34", "system 1.34", "system 1.34"}) {
			return fmt.Errorf("kubelets %v", got)
		}
		return c.all("apps", "web", 2, "fargate:apps")
	})
	if out, _, code := c.fargatekit(env, "upgrade", "check"); code != 0 {
		t.Errorf("upgrade check with nothing behind: exit %d\n%s", code, out)
	}
	c.updateCluster("1.35")

	// A bare pod held Terminating by a finalizer keeps its node from draining.
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fkeks.NodegroupLabel + "=system"})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes of system: %v", err)
	}
	held := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "default", Finalizers: []string{"example.com/hold"}},
		Spec:       corev1.PodSpec{NodeName: nodes.Items[0].Name, Containers: []corev1.Container{{Name: "c", Image: "public.ecr.aws/example/held:1"}}},
	}
	if _, err := c.kube.CoreV1().Pods("default").Create(ctx, held, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := c.updateNodegroup("system", false); u.Status != ekstypes.UpdateStatusFailed || !slices.Contains(u.Errors[0].ResourceIds, nodes.Items[0].Name) {
		t.Fatalf("node group update with a pod held by a finalizer: %s %+v", u.Status, u.Errors)
	}
	if p, err := c.kube.CoreV1().Pods("default").Get(ctx, "held", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Errorf("the held pod should be Terminating: %v %v", p, err)
	}
	if u := c.updateNodegroup("system", true); u.Status != ekstypes.UpdateStatusSuccessful {
		t.Fatalf("forced node group update: %s %+v", u.Status, u.Errors)
	}
	if got := c.kubelets(); !slices.Equal(got, []string{"fargate 1.34", "fargate 1.34", "system 1.35", "system 1.35"}) {
		t.Errorf("kubelets at the end: %v", got)
	}
	if _, err := c.kube.CoreV1().Pods("default").Patch(ctx, "held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
		t.Error(err)
	}
}

// TestIntegrationUpgradeSelector: a Deployment whose file selects other
// pods than the live one. kubectl apply fails; the plan says so, and its
// steps, run as written with kubectl, change the selector while two pods
// serve all along.
func TestIntegrationUpgradeSelector(t *testing.T) {
	t.Parallel()
	c := start(t, "upgrade")
	c.namespace("apps")
	c.deploy(deployment("apps", "web", 2, nil))
	eventually(t, time.Minute, "web on Fargate", func() error { return c.all("apps", "web", 2, "fargate:apps") })
	file := filepath.Join(t.TempDir(), "web.yaml")
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: apps
spec:
  replicas: 2
  selector:
    matchLabels: {app: web, tier: front}
  template:
    metadata:
      labels: {app: web, tier: front}
    spec:
      containers:
        - name: web
          image: public.ecr.aws/example/web:2
`
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	env := c.env()
	if out, err := c.shell(env, "kubectl apply -f "+file); err == nil || !strings.Contains(out, "field is immutable") {
		t.Fatalf("kubectl apply of the new selector: %v\n%s", err, out)
	}
	plan := c.upgradePlan(env, "1.34", file)
	if got := plan.Hops[0].issues(); !slices.Contains(got, "warning selector-change Deployment apps/web") {
		t.Fatalf("issues: %v", got)
	}
	var steps []string
	for _, s := range plan.Hops[0].Steps {
		if strings.HasPrefix(s.Title, "Change the selector of Deployment apps/web") {
			steps = s.Commands
		}
	}
	if len(steps) == 0 {
		t.Fatalf("no step changes web's selector: %+v", plan.Hops[0].Steps)
	}
	// The fewest Ready pods of web (labelled app=web) while the steps run.
	stop, fewest := make(chan struct{}), make(chan int)
	go func() {
		least := 1 << 30
		for {
			select {
			case <-stop:
				fewest <- least
				return
			case <-time.After(50 * time.Millisecond):
			}
			pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				continue
			}
			n := 0
			for _, p := range pods.Items {
				if p.DeletionTimestamp == nil && slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
					return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
				}) {
					n++
				}
			}
			least = min(least, n)
		}
	}()
	for _, cmd := range steps {
		if out, err := c.shell(env, cmd); err != nil {
			close(stop)
			t.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	close(stop)
	if n := <-fewest; n < 2 {
		t.Errorf("web went down to %d Ready pod(s) while its selector changed", n)
	}
	d, err := c.kube.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{})
	if err != nil || metav1.FormatLabelSelector(d.Spec.Selector) != "app=web,tier=front" {
		t.Fatalf("web after the steps: %v %v", d, err)
	}
	if _, err := c.kube.AppsV1().Deployments("apps").Get(ctx, "web-migrate", metav1.GetOptions{}); err == nil {
		t.Error("the temporary copy web-migrate is still there")
	}
	if got := c.upgradePlan(env, "1.34", file).Hops[0].issues(); slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "selector-change") }) {
		t.Errorf("issues once changed: %v", got)
	}
}

// shell runs a command line with sh in env and returns its output.
func (c *cluster) shell(env []string, line string) (string, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func ptr[T any](v T) *T { return &v }

// errorText is an SDK error as "Type: message".
func errorText(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode() + ": " + ae.ErrorMessage()
	}
	if err == nil {
		return "no error"
	}
	return err.Error()
}

// kubelets lists the nodes as "<node group or fargate> <kubelet minor>",
// sorted, leaving out cordoned nodes.
func (c *cluster) kubelets() []string {
	c.t.Helper()
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	var out []string
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			continue
		}
		group := n.Labels[fkeks.NodegroupLabel]
		if n.Labels[fargate.ComputeTypeLabel] == "fargate" {
			group = "fargate"
		}
		v, _ := fkeks.ParseMinor(n.Status.NodeInfo.KubeletVersion)
		out = append(out, group+" "+v)
	}
	slices.Sort(out)
	return out
}

// updateCluster updates the control plane and waits for it with the SDK's
// waiter.
func (c *cluster) updateCluster(version string) {
	c.t.Helper()
	if _, err := c.eks.UpdateClusterVersion(ctx, &eks.UpdateClusterVersionInput{Name: aws.String(c.name), Version: aws.String(version)}); err != nil {
		c.t.Fatalf("update to %s: %v", version, err)
	}
	w := eks.NewClusterActiveWaiter(c.eks, func(o *eks.ClusterActiveWaiterOptions) { o.MinDelay, o.MaxDelay = 200*time.Millisecond, time.Second })
	// A restart of the control plane takes 10-40 s here; on a loaded machine
	// (CI) it once took more than a minute.
	out, err := w.WaitForOutput(ctx, &eks.DescribeClusterInput{Name: aws.String(c.name)}, 3*time.Minute)
	if err != nil || aws.ToString(out.Cluster.Version) != version {
		c.t.Fatalf("waiting for the update to %s: %v", version, err)
	}
	if got, _ := c.served(); got != version {
		c.t.Fatalf("ACTIVE at %s, the API server emulates %s", version, got)
	}
}

// served is the version the API server emulates, and whether it serves
// resource.k8s.io/v1 (GA in 1.34).
func (c *cluster) served() (version string, resourceV1 bool) {
	c.t.Helper()
	info, err := c.kube.Discovery().ServerVersion()
	if err != nil {
		c.t.Fatalf("the API server's version: %v", err)
	}
	groups, err := c.kube.Discovery().ServerGroups()
	if err != nil {
		c.t.Fatalf("the API server's groups: %v", err)
	}
	for _, g := range groups.Groups {
		for _, v := range g.Versions {
			resourceV1 = resourceV1 || v.GroupVersion == "resource.k8s.io/v1"
		}
	}
	return info.EmulationMajor + "." + info.EmulationMinor, resourceV1
}

// updateNodegroup updates a node group to the control plane's version and
// returns the update once it is no longer in progress.
func (c *cluster) updateNodegroup(name string, force bool) *ekstypes.Update {
	c.t.Helper()
	out, err := c.eks.UpdateNodegroupVersion(ctx, &eks.UpdateNodegroupVersionInput{ClusterName: aws.String(c.name), NodegroupName: aws.String(name), Force: force})
	if err != nil {
		c.t.Fatalf("update of node group %s: %v", name, err)
	}
	var u *ekstypes.Update
	eventually(c.t, 2*time.Minute, "the node group update ends", func() error {
		d, err := c.eks.DescribeUpdate(ctx, &eks.DescribeUpdateInput{Name: aws.String(c.name), NodegroupName: aws.String(name), UpdateId: out.Update.Id})
		if err != nil {
			return err
		}
		if u = d.Update; u.Status == ekstypes.UpdateStatusInProgress {
			return errors.New("in progress")
		}
		return nil
	})
	return u
}

func (c *cluster) nodegroupVersion(name string) string {
	c.t.Helper()
	out, err := c.eks.DescribeNodegroup(ctx, &eks.DescribeNodegroupInput{ClusterName: aws.String(c.name), NodegroupName: aws.String(name)})
	if err != nil {
		c.t.Fatal(err)
	}
	return aws.ToString(out.Nodegroup.Version)
}

// upgradeJSON is the part of `upgrade plan -o json` the test reads.
type upgradeJSON struct {
	From, To string
	Blocked  bool
	Hops     []hopJSON
	Errors   []string
}

type hopJSON struct {
	From, To string
	Issues   []struct{ Kind, Severity, Subject string }
	Steps    []struct {
		Title    string
		Commands []string
	}
}

func (h hopJSON) issues() []string {
	var out []string
	for _, i := range h.Issues {
		out = append(out, i.Severity+" "+i.Kind+" "+i.Subject)
	}
	return out
}

func (h hopJSON) commands() []string {
	var out []string
	for _, s := range h.Steps {
		out = append(out, s.Commands...)
	}
	return out
}

// upgradePlan runs `fargatekit upgrade plan --to version -o json [PATH...]`.
func (c *cluster) upgradePlan(env []string, version string, paths ...string) upgradeJSON {
	c.t.Helper()
	out, errOut, code := c.fargatekit(env, append([]string{"upgrade", "plan", "--to", version, "-o", "json"}, paths...)...)
	var p upgradeJSON
	if err := json.Unmarshal([]byte(out), &p); err != nil || code != 0 || len(p.Errors) > 0 {
		c.t.Fatalf("upgrade plan --to %s: exit %d, %v\n%s\n%s", version, code, err, out, errOut)
	}
	return p
}
