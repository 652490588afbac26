package emulator_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestIntegrationWatchRepair: watch's chart with repair.drift brings the
// profile-merge incident back to Fargate by itself, one workload at a
// time, with an Event on each, and leaves alone what Fargate would refuse.
func TestIntegrationWatchRepair(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	c.deployIncident()
	env := c.env()
	watched := c.installWatch(env, "--repair-drift", "--repair-after", "0s")
	c.mergeDeletingFirst(func() {
		c.deploy(deployment("orders", "agent", 1, func(p *corev1.PodTemplateSpec) {
			p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
		}))
	})
	eventually(t, time.Minute, "agent on EC2", func() error { return c.all("orders", "agent", 1, "ec2") })
	agent := podNames(t, c, "orders", "agent")
	for _, ns := range incidentNamespaces {
		eventually(t, 3*time.Minute, "watch repairs "+ns, func() error {
			if err := c.all(ns, ns, 2, "fargate:apps"); err != nil {
				return err
			}
			if err := c.watchEvent(ns, "DriftRepaired", corev1.EventTypeNormal); err != nil {
				return err
			}
			return c.watchEvent(ns, "DriftOffFargateResolved", corev1.EventTypeNormal)
		})
	}
	eventually(t, time.Minute, "the drift gauges", func() error {
		for _, ns := range incidentNamespaces {
			want := 0.0
			if ns == "orders" {
				want = 1 // agent
			}
			sample := fmt.Sprintf(`fargatekit_findings{name="drift-off-fargate",namespace=%q,rule="LV001",severity="blocker"}`, ns)
			if v := watched(sample); v != want {
				return fmt.Errorf("%s = %v, want %v", sample, v, want)
			}
		}
		return nil
	})
	if err := c.watchEventOn("orders", "agent", "DriftNotRepaired", corev1.EventTypeWarning); err != nil {
		t.Error(err)
	}
	if got := podNames(t, c, "orders", "agent"); !slices.Equal(got, agent) {
		t.Errorf("watch restarted the privileged agent: pods %v, were %v", got, agent)
	}
	for result, want := range map[string]float64{"restarted": 4, "failed": 0, "skipped": 1} {
		if v := watched(fmt.Sprintf(`fargatekit_watch_repairs_total{result=%q}`, result)); v != want {
			t.Errorf("repairs %s = %v, want %v", result, v, want)
		}
	}
}

// TestIntegrationWatchFindings: watch's chart, installed into the
// emulator, publishes a refused pod, an AZ skew and a node group behind
// as scan finds them: each in the metrics within 15 s, with an Event on the
// workload (a node group has no object to carry one).
func TestIntegrationWatchFindings(t *testing.T) {
	t.Parallel()
	c := start(t, "scan") // seed 7 piles web's replicas; node group old runs kubelet 1.34
	env := c.env()
	c.namespace("apps")
	watched := c.installWatch(env)
	finding := func(rule, name, namespace, severity string) func() error {
		sample := fmt.Sprintf(`fargatekit_findings{name=%q,namespace=%q,rule=%q,severity=%q}`, name, namespace, rule, severity)
		return func() error {
			if v := watched(sample); v != 1 {
				return fmt.Errorf("%s = %v, want 1", sample, v)
			}
			return nil
		}
	}
	eventually(t, 15*time.Second, "the node group behind", finding("LV006", "kubelet-behind", "", "warning"))

	c.deploy(deployment("apps", "web", 6, nil))
	eventually(t, time.Minute, "web on Fargate", func() error { return c.all("apps", "web", 6, "fargate:apps") })
	eventually(t, 15*time.Second, "web's skew", func() error {
		if err := finding("LV005", "az-skew", "apps", "warning")(); err != nil {
			return err
		}
		return c.watchEventOn("apps", "web", "AzSkew", corev1.EventTypeWarning)
	})

	c.deploy(deployment("apps", "agent", 1, func(p *corev1.PodTemplateSpec) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: new(true)}
	}))
	eventually(t, 15*time.Second, "agent refused", func() error {
		if err := finding("LV003", "refused-by-fargate", "apps", "blocker")(); err != nil {
			return err
		}
		return c.watchEventOn("apps", "agent", "RefusedByFargate", corev1.EventTypeWarning)
	})
}

// watchRelease is the namespace and name of the release `watch install
// --emulator` makes.
const watchRelease = "fargatekit-watch"

// installWatch runs `fargatekit watch install --emulator`, as a user
// would, and returns a reader of its metrics through the API server's
// service proxy (kubectl get --raw
// /api/v1/namespaces/fargatekit-watch/services/fargatekit-watch:metrics/proxy/metrics):
// one sample's value, 0 when absent.
func (c *cluster) installWatch(env []string, flags ...string) func(sample string) float64 {
	c.t.Helper()
	out, errOut, code := c.fargatekit(env, append([]string{"watch", "install", "--emulator", "--state-dir", c.state, "--eks-interval", "10s", "--coalesce", "500ms"}, flags...)...)
	if code != 0 || !strings.Contains(out, "kubectl get --raw /api/v1/namespaces/fargatekit-watch/services/fargatekit-watch:metrics/proxy/metrics\n") {
		c.t.Fatalf("watch install exit %d:\n%s\n%s", code, out, errOut)
	}
	// The chart's RBAC reads, and writes Events only; with repair, it
	// patches workloads too, and still deletes nothing.
	can, err := c.shell(env, "kubectl auth can-i patch deployments --as system:serviceaccount:fargatekit-watch:fargatekit-watch")
	if repair := slices.Contains(flags, "--repair-drift"); repair != (err == nil) || strings.TrimSpace(can) != map[bool]string{true: "yes", false: "no"}[repair] {
		c.t.Fatalf("the chart's service account may patch Deployments (repair %v): %v %s", repair, err, can)
	}
	if can, err := c.shell(env, "kubectl auth can-i delete pods --as system:serviceaccount:fargatekit-watch:fargatekit-watch"); err == nil || strings.TrimSpace(can) != "no" {
		c.t.Fatalf("the chart's service account may delete pods: %v %s", err, can)
	}
	read := func() ([]byte, error) {
		return c.kube.CoreV1().Services(watchRelease).ProxyGet("http", watchRelease, "metrics", "metrics", nil).DoRaw(ctx)
	}
	// The Service has an endpoint once the chart's pod runs on a node.
	eventually(c.t, time.Minute, "watch's metrics through the API server", func() error {
		_, err := read()
		return err
	})
	return func(sample string) float64 {
		c.t.Helper()
		body, err := read()
		if err != nil {
			c.t.Fatalf("reading watch's metrics through the API server: %v", err)
		}
		return sampleValue(c.t, bytes.NewReader(body), sample)
	}
}

// watchEvent checks that watch recorded an Event of reason and type on
// the Deployment ns/ns.
func (c *cluster) watchEvent(ns, reason, typ string) error {
	return c.watchEventOn(ns, ns, reason, typ)
}

// watchEventOn checks that watch recorded an Event of reason and type on
// the Deployment ns/name.
func (c *cluster) watchEventOn(ns, name, reason, typ string) error {
	events, err := c.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Deployment,involvedObject.name=" + name + ",reason=" + reason})
	if err != nil {
		return err
	}
	for _, e := range events.Items {
		if e.Type == typ && e.Source.Component == "fargatekit-watch" {
			return nil
		}
	}
	return fmt.Errorf("no %s Event %s from fargatekit-watch on Deployment %s/%s", typ, reason, ns, name)
}
