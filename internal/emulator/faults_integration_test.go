package emulator_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/emulator/placement"
	"github.com/fargatekit/fargatekit/pkg/fargate"
	"github.com/fargatekit/fargatekit/pkg/spread"
)

// TestIntegrationAZOutage: during an outage of us-east-1a its nodes go
// NotReady and their pods are evicted after their toleration. Without
// spread, the replicas of a profile over three AZs come back in the two
// others (fargate-scheduler draws again), and the pod of a profile only in
// us-east-1a waits with an event. With spread, a Deployment over three
// per-AZ profiles is back to 6 Running replicas in the two other AZs, none
// left waiting in us-east-1a, which spread marks unavailable; once the AZ is
// up again its nodes are Ready, the waiting pod starts there and spread
// balances the Deployment over the three with a bounded number of
// evictions. An outage outlives a down and up of the emulator.
func TestIntegrationAZOutage(t *testing.T) {
	t.Parallel()
	long(t)
	c := start(t, "spread")
	env := c.env()
	c.spreadNamespaces()
	metrics, _ := c.installSpread(env, "--eviction-interval", "1s", "--unavailable-after", "45s", "--zone-retry", "1m")
	// The node lifecycle evicts the pods of an unreachable node after their
	// toleration: 5 seconds here, 300 by default.
	tolerate := func(p *corev1.PodTemplateSpec) {
		five := int64(5)
		p.Spec.Tolerations = []corev1.Toleration{
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
		}
	}
	pinnedTo := func(profile string) func(*corev1.PodTemplateSpec) {
		return func(p *corev1.PodTemplateSpec) {
			tolerate(p)
			p.Labels[fargate.ProfileLabel] = profile
		}
	}
	// plain's profile has a subnet in each AZ; apps has one profile per AZ,
	// and spread.
	c.deploy(deployment("plain", "drawn", 6, tolerate))
	web := spreadDeployment("apps", "web", 6)
	tolerate(&web.Spec.Template)
	c.deploy(web)
	c.deploy(deployment("apps", "one", 1, pinnedTo("apps-us-east-1a")))
	if load := c.settled("plain", "drawn", 6); load["us-east-1a"] == 0 {
		t.Fatalf("drawn runs %v: none in us-east-1a, the outage would show nothing (change the seed)", load)
	}
	if load := c.settled("apps", "web", 6); spread.Skew(load, zones) != 0 {
		t.Fatalf("web's 6 replicas: %v, want two per AZ", load)
	}
	if load := c.settled("apps", "one", 1); load["us-east-1a"] != 1 {
		t.Fatalf("one runs %v, want in us-east-1a", load)
	}
	available := `fargatekit_spread_zone_available{zone="us-east-1a"}`
	eventually(t, time.Minute, "spread says us-east-1a is available", func() error {
		if v := metric(t, metrics, available); v != 1 {
			return fmt.Errorf("%s = %v", available, v)
		}
		return nil
	})

	out, errOut, code := c.fargatekit(env, "emulator", "fault", "az-outage", "us-east-1a", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "us-east-1a is down") {
		t.Fatalf("emulator fault az-outage: exit %d\n%s%s", code, out, errOut)
	}
	eventually(t, 3*time.Minute, "every node of us-east-1a is NotReady", func() error { return c.zoneReady("us-east-1a", false) })
	for _, w := range []struct{ ns, app string }{{"plain", "drawn"}, {"apps", "web"}} {
		eventually(t, 4*time.Minute, w.app+" is back to 6 Running pods in the other AZs, none waiting", func() error {
			load, pending, err := c.alive(w.ns, w.app)
			if err == nil && (load["us-east-1a"] != 0 || load["us-east-1b"]+load["us-east-1c"] != 6 || pending != 0) {
				err = fmt.Errorf("%s runs %v, %d waiting", w.app, load, pending)
			}
			return err
		})
	}
	unavailable := fmt.Sprintf(placement.UnavailableZoneMessage, "us-east-1a")
	eventually(t, 2*time.Minute, "one's new pod waits with an event", func() error { return c.waiting("apps", "one", unavailable) })
	if v := metric(t, metrics, available); v != 0 {
		t.Errorf("during the outage %s = %v, want 0", available, v)
	}
	events, err := c.kube.CoreV1().Events("apps").List(ctx, metav1.ListOptions{FieldSelector: "reason=SpreadZoneUnavailable"})
	if err != nil || len(events.Items) == 0 {
		t.Errorf("no SpreadZoneUnavailable event (%v)", err)
	}
	_, errOut, code = c.fargatekit(env, "emulator", "fault", "az-outage", "eu-west-1a", "--state-dir", c.state)
	if code != 2 || !strings.Contains(errOut, `"eu-west-1a" is not an AZ of the cluster spread`) {
		t.Errorf("emulator fault az-outage eu-west-1a: exit %d, want 2 naming the zone\n%s", code, errOut)
	}

	out, errOut, code = c.fargatekit(env, "emulator", "fault", "clear", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "us-east-1a is up again") {
		t.Fatalf("emulator fault clear: exit %d\n%s%s", code, out, errOut)
	}
	evicted := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`)
	eventually(t, 3*time.Minute, "every node of us-east-1a is Ready again", func() error { return c.zoneReady("us-east-1a", true) })
	if load := c.settled("apps", "one", 1); load["us-east-1a"] != 1 {
		t.Errorf("once us-east-1a is up, one runs %v, want in us-east-1a", load)
	}
	eventually(t, 5*time.Minute, "web balanced over the three AZs again", func() error {
		load, err := c.running("apps", "web", 6)
		if err == nil && spread.Skew(load, zones) > 1 {
			err = fmt.Errorf("web runs %v", load)
		}
		return err
	})
	n := metric(t, metrics, `fargatekit_spread_evictions_total{result="evicted"}`) - evicted
	t.Logf("web balanced again after %v rebalancing evictions", n)
	if n > 4 {
		t.Errorf("%v evictions to balance web again, want at most 4 (2 needed, and a try of the AZ that failed)", n)
	}

	// An outage outlives the emulator's daemon: a pod created after a down
	// and up waits too.
	if out, errOut, code := c.fargatekit(env, "emulator", "fault", "az-outage", "us-east-1b", "--state-dir", c.state); code != 0 {
		t.Fatalf("emulator fault az-outage us-east-1b: exit %d\n%s%s", code, out, errOut)
	}
	c.emulator("down")
	c.emulator("up")
	out, _, code = c.fargatekit(env, "emulator", "fault", "list", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "az-outage  us-east-1b") {
		t.Errorf("emulator fault list after down and up: exit %d\n%s", code, out)
	}
	c.deploy(deployment("apps", "two", 1, pinnedTo("apps-us-east-1b")))
	eventually(t, 2*time.Minute, "two, created after up, waits with an event", func() error {
		return c.waiting("apps", "two", fmt.Sprintf(placement.UnavailableZoneMessage, "us-east-1b"))
	})
}

// zoneReady checks that the zone has nodes and that every one is Ready
// (ready) or not.
func (c *cluster) zoneReady(zone string, ready bool) error {
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: corev1.LabelTopologyZone + "=" + zone})
	if err != nil {
		return err
	}
	if len(nodes.Items) == 0 {
		return errors.New("no node")
	}
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && (cond.Status == corev1.ConditionTrue) != ready {
				return fmt.Errorf("node %s is Ready %s", n.Name, cond.Status)
			}
		}
	}
	return nil
}

// alive returns, of a Deployment's pods that are not terminating, those
// Running per AZ and the number not bound to a node.
func (c *cluster) alive(ns, app string) (load map[string]int, pending int, err error) {
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return nil, 0, err
	}
	load = map[string]int{}
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
		case p.Spec.NodeName == "":
			pending++
		case p.Status.Phase == corev1.PodRunning:
			n, err := c.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
			if err != nil {
				return nil, 0, err
			}
			load[n.Labels[corev1.LabelTopologyZone]]++
		}
	}
	return load, pending, nil
}

// waiting checks that a Deployment has a pod not bound to a node, with a
// FailedScheduling event of message.
func (c *cluster) waiting(ns, app, message string) error {
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Spec.NodeName != "" {
			continue
		}
		events, err := c.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
		if err != nil {
			return err
		}
		for _, e := range events.Items {
			if e.Reason == "FailedScheduling" && e.Message == message {
				return nil
			}
		}
		return fmt.Errorf("pod %s is not bound and has no event %q", p.Name, message)
	}
	return errors.New("no pod waits")
}

// TestIntegrationFargatePatch: a Fargate OS patch recycles the Fargate pods
// created before it, AZ by AZ, through the Eviction API. A Deployment
// without a budget has its pods replaced; the pod of one whose
// PodDisruptionBudget allows no disruption runs on, gets EKS's scheduled
// termination event, and is deleted at the time it gives and replaced, as
// scan's FG033 warned beforehand.
func TestIntegrationFargatePatch(t *testing.T) {
	t.Parallel()
	c := start(t, "spread")
	env := c.env()
	c.namespace("plain")
	c.deploy(deployment("plain", "free", 3, nil))
	c.deploy(deployment("plain", "held", 1, nil))
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: "plain"},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(0)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "held"}}}}
	if _, err := c.kube.PolicyV1().PodDisruptionBudgets("plain").Create(ctx, budget, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.settled("plain", "free", 3)
	c.settled("plain", "held", 1)
	eventually(t, time.Minute, "held's budget counts its pod", func() error {
		b, err := c.kube.PolicyV1().PodDisruptionBudgets("plain").Get(ctx, "held", metav1.GetOptions{})
		if err == nil && (b.Status.CurrentHealthy != 1 || b.Status.DisruptionsAllowed != 0) {
			err = fmt.Errorf("budget status %+v", b.Status)
		}
		return err
	})
	// scan warns of the budget (FG033) before the patch proves it right.
	if r, _ := c.scan(env); len(r.find("FG033", "PodDisruptionBudget", "plain", "held")) != 1 {
		t.Errorf("scan's FG033 on the budget that allows no disruption: findings %v", r.rules())
	}
	free, held := podNames(t, c, "plain", "free"), podNames(t, c, "plain", "held")[0]

	out, errOut, code := c.fargatekit(env, "emulator", "fault", "fargate-patch", "--grace", "15s", "--retry", "3s", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "Fargate OS patch notified") {
		t.Fatalf("emulator fault fargate-patch: exit %d\n%s%s", code, out, errOut)
	}
	var at time.Time
	eventually(t, 2*time.Minute, "held's pod has its termination scheduled, with EKS's event", func() error {
		p, err := c.kube.CoreV1().Pods("plain").Get(ctx, held, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if at, err = time.Parse(time.RFC3339, p.Annotations[emulator.ScheduledTerminationAnnotation]); err != nil {
			return fmt.Errorf("annotations %v", p.Annotations)
		}
		events, err := c.kube.CoreV1().Events("plain").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + held + ",reason=" + emulator.ScheduledTerminationReason})
		if err == nil && (len(events.Items) != 1 || events.Items[0].Type != corev1.EventTypeWarning ||
			!strings.HasPrefix(events.Items[0].Message, "EKS Fargate Pod Scheduled Termination: ") || !strings.Contains(events.Items[0].Message, "disruption budget")) {
			err = fmt.Errorf("events %+v", events.Items)
		}
		return err
	})
	// It runs until then; deleted then.
	var deleted time.Time
	eventually(t, time.Minute, "held's pod is deleted", func() error {
		p, err := c.kube.CoreV1().Pods("plain").Get(ctx, held, metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil {
			return errors.New("it runs")
		}
		deleted = time.Now()
		return nil
	})
	if deleted.Before(at) {
		t.Errorf("held's pod was deleted at %s, before its scheduled termination %s", deleted.UTC().Format(time.RFC3339), at.Format(time.RFC3339))
	}

	out, errOut, code = c.fargatekit(env, "emulator", "fault", "fargate-patch", "--wait", "--timeout", "3m", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "already under way") || !strings.Contains(out, "us-east-1a patched\nus-east-1b patched\nus-east-1c patched\n") || !strings.HasSuffix(out, "the Fargate OS patch is done\n") {
		t.Errorf("emulator fault fargate-patch --wait: exit %d\n%s%s", code, out, errOut)
	}
	c.settled("plain", "free", 3)
	c.settled("plain", "held", 1)
	if now := podNames(t, c, "plain", "free"); slices.ContainsFunc(now, func(p string) bool { return slices.Contains(free, p) }) {
		t.Errorf("free's pods %v after the patch, before %v: want each replaced", now, free)
	}
	if now := podNames(t, c, "plain", "held"); slices.Contains(now, held) {
		t.Errorf("held's pod %s outlived the patch", held)
	}
	events, err := c.kube.CoreV1().Events("plain").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + emulator.ScheduledTerminationReason})
	if err != nil || len(events.Items) != 1 {
		t.Errorf("%d scheduled terminations (%v), want held's only", len(events.Items), err)
	}
	out, _, _ = c.fargatekit(env, "emulator", "fault", "list", "--state-dir", c.state)
	if !strings.Contains(out, "fargate-patch  -     done at ") {
		t.Errorf("emulator fault list after the patch:\n%s", out)
	}
}
