package emulator_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/internal/emulator/placement"
)

// TestIntegrationAZOutage: during an outage of us-east-1a its nodes go
// NotReady and their pods are evicted after their toleration; the replicas
// of a profile over three AZs come back in the two others, the pod of a
// profile only in us-east-1a stays Pending with an event, through a down
// and up of the emulator; once cleared, the nodes are Ready again and the
// pending pods start there.
func TestIntegrationAZOutage(t *testing.T) {
	t.Parallel()
	c := start(t, "spread")
	env := c.env()
	c.namespace("apps")
	c.namespace("plain")
	// The node lifecycle evicts the pods of an unreachable node after their
	// toleration: 5 seconds here, 300 by default.
	tolerate := func(p *corev1.PodTemplateSpec) {
		five := int64(5)
		p.Spec.Tolerations = []corev1.Toleration{
			{Key: corev1.TaintNodeUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
			{Key: corev1.TaintNodeNotReady, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &five},
		}
	}
	// web's profile, plain, has a subnet in each AZ; one's, without spread,
	// is apps-us-east-1a (the first by name of apps's per-AZ profiles).
	c.deploy(deployment("plain", "web", 6, tolerate))
	c.deploy(deployment("apps", "one", 1, tolerate))
	if load := c.settled("plain", "web", 6); load["us-east-1a"] == 0 {
		t.Fatalf("web runs %v: none in us-east-1a, the outage would show nothing (change the seed)", load)
	}
	if load := c.settled("apps", "one", 1); load["us-east-1a"] != 1 {
		t.Fatalf("one runs %v, want in us-east-1a", load)
	}

	out, errOut, code := c.fargatekit(env, "emulator", "fault", "az-outage", "us-east-1a", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "us-east-1a is down") {
		t.Fatalf("emulator fault az-outage: exit %d\n%s%s", code, out, errOut)
	}
	eventually(t, 3*time.Minute, "every node of us-east-1a is NotReady", func() error { return c.zoneReady("us-east-1a", false) })
	eventually(t, 3*time.Minute, "web is back to 6 Running pods, in the other AZs", func() error {
		load, pending, err := c.alive("plain", "web")
		if err == nil && (load["us-east-1a"] != 0 || load["us-east-1b"]+load["us-east-1c"] != 6 || pending != 0) {
			err = fmt.Errorf("web runs %v, %d pending", load, pending)
		}
		return err
	})
	unavailable := fmt.Sprintf(placement.UnavailableZoneMessage, "us-east-1a")
	eventually(t, 2*time.Minute, "one's new pod waits with an event", func() error { return c.waiting("apps", "one", unavailable) })

	// The outage outlives the emulator's daemon: a pod created after a down
	// and up waits too.
	c.emulator("down")
	c.emulator("up")
	out, _, code = c.fargatekit(env, "emulator", "fault", "list", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "az-outage  us-east-1a") {
		t.Errorf("emulator fault list after down and up: exit %d\n%s", code, out)
	}
	c.deploy(deployment("apps", "two", 1, tolerate))
	eventually(t, 2*time.Minute, "two, created after up, waits with an event", func() error { return c.waiting("apps", "two", unavailable) })

	_, errOut, code = c.fargatekit(env, "emulator", "fault", "az-outage", "eu-west-1a", "--state-dir", c.state)
	if code != 2 || !strings.Contains(errOut, `"eu-west-1a" is not an AZ of the cluster spread`) {
		t.Errorf("emulator fault az-outage eu-west-1a: exit %d, want 2 naming the zone\n%s", code, errOut)
	}

	out, errOut, code = c.fargatekit(env, "emulator", "fault", "clear", "--state-dir", c.state)
	if code != 0 || !strings.Contains(out, "us-east-1a is up again") {
		t.Fatalf("emulator fault clear: exit %d\n%s%s", code, out, errOut)
	}
	eventually(t, 3*time.Minute, "every node of us-east-1a is Ready again", func() error { return c.zoneReady("us-east-1a", true) })
	for _, app := range []string{"one", "two"} {
		if load := c.settled("apps", app, 1); load["us-east-1a"] != 1 {
			t.Errorf("once us-east-1a is up, %s runs %v, want in us-east-1a", app, load)
		}
	}
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
