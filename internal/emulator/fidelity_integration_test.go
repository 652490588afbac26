package emulator_test

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// The tests of docs/emulator.md's fidelity table: what `kubectl get pods -o
// wide`, `kubectl describe pod` and the AWS CLI show of Fargate pods.

// The subnets of examples/emulator/small-subnet, by AZ.
var smallSubnets = map[string]netip.Prefix{"us-east-1a": netip.MustParsePrefix("10.0.1.0/28"), "us-east-1b": netip.MustParsePrefix("10.0.32.0/19")}

// kubectl runs kubectl in the emulator's environment.
func (c *cluster) kubectl(args string) string {
	c.t.Helper()
	out, err := c.shell(c.env(), "kubectl "+args)
	if err != nil {
		c.t.Fatalf("kubectl %s: %v\n%s", args, err, out)
	}
	return out
}

// wideRow is one pod as `kubectl get pods -o wide` shows it.
type wideRow struct{ name, status, ip, node string }

// wide reads `kubectl get pods -o wide` of a namespace.
func (c *cluster) wide(ns string) []wideRow {
	c.t.Helper()
	var rows []wideRow
	for _, line := range strings.Split(strings.TrimSpace(c.kubectl("get pods -o wide --no-headers -n "+ns)), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 {
			continue // no pods
		}
		rows = append(rows, wideRow{name: f[0], status: f[2], ip: f[5], node: f[6]})
	}
	return rows
}

// checkAddresses checks the running pods of a namespace as EKS shows Fargate
// pods: each pod's IP is its node's name and InternalIP, and its hostIP,
// inside the subnet of its node's AZ; no address is used twice. No node has
// the TTL controller's annotation: the emulator's controller-manager runs
// without it (docs/emulator.md).
func (c *cluster) checkAddresses(ns string, running int) error {
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: fargate.ComputeTypeLabel + "=fargate"})
	if err != nil {
		return err
	}
	byName := map[string]corev1.Node{}
	for _, n := range nodes.Items {
		if ttl, ok := n.Annotations[corev1.ObjectTTLAnnotationKey]; ok {
			return fmt.Errorf("node %s has the TTL controller's annotation %s=%s", n.Name, corev1.ObjectTTLAnnotationKey, ttl)
		}
		byName[n.Name] = n
	}
	seen, n := map[string]string{}, 0
	for _, p := range pods.Items {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
			continue
		}
		n++
		node, ok := byName[p.Spec.NodeName]
		if !ok {
			return fmt.Errorf("pod %s: node %q is not a Fargate node", p.Name, p.Spec.NodeName)
		}
		internal := ""
		for _, a := range node.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				internal = a.Address
			}
		}
		ip, err := netip.ParseAddr(p.Status.PodIP)
		switch {
		case err != nil:
			return fmt.Errorf("pod %s: IP %q", p.Name, p.Status.PodIP)
		case p.Status.HostIP != p.Status.PodIP || internal != p.Status.PodIP || len(p.Status.PodIPs) != 1 || p.Status.PodIPs[0].IP != p.Status.PodIP:
			return fmt.Errorf("pod %s: IP %s, IPs %v, host IP %s, node InternalIP %s: not one address", p.Name, p.Status.PodIP, p.Status.PodIPs, p.Status.HostIP, internal)
		case p.Spec.NodeName != "fargate-ip-"+strings.ReplaceAll(ip.String(), ".", "-")+".ec2.internal":
			return fmt.Errorf("pod %s at %s: node %s is not named after it", p.Name, ip, p.Spec.NodeName)
		case !smallSubnets[node.Labels[corev1.LabelTopologyZone]].Contains(ip):
			return fmt.Errorf("pod %s: %s is outside the subnet of %s", p.Name, ip, node.Labels[corev1.LabelTopologyZone])
		case seen[ip.String()] != "":
			return fmt.Errorf("pods %s and %s share %s", seen[ip.String()], p.Name, ip)
		}
		seen[ip.String()] = p.Name
	}
	if n != running {
		return fmt.Errorf("%d pods running, want %d", n, running)
	}
	return nil
}

// freeAddresses returns what `aws ec2 describe-subnets` says of a subnet's
// free addresses.
func (c *cluster) freeAddresses() func(subnet string) int {
	run := awscli.Runner(c.t, c.eksURL)
	return func(subnet string) int {
		c.t.Helper()
		out, stderr, err := run("ec2", "describe-subnets", "--subnet-ids", subnet, "--query", "Subnets[0].AvailableIpAddressCount")
		n, perr := strconv.Atoi(strings.TrimSpace(out))
		if err != nil || perr != nil {
			c.t.Fatalf("aws ec2 describe-subnets: %v %v\n%s%s", err, perr, out, stderr)
		}
		return n
	}
}

// TestIntegrationPodAddresses: a Fargate pod's IP is its node's address,
// drawn from the subnet of its profile that has room (the /28 fills, then
// only the /19 is drawn from), and no address is used twice while pods come
// and go, 500 times, across a restart of the emulator. EC2's
// AvailableIpAddressCount counts what is really free.
func TestIntegrationPodAddresses(t *testing.T) {
	t.Parallel()
	long(t)
	c := start(t, "small-subnet")
	freeAddresses := c.freeAddresses()
	c.namespace("apps")
	// 50 pods over a /28 (11 addresses) and a /19, drawn at random among the
	// subnets with room: the /28 fills (the chance it does not is 1e-5),
	// then only the /19 is drawn from.
	const replicas = 50
	c.deploy(deployment("apps", "web", replicas, nil))
	eventually(t, time.Minute, "web runs, each pod at its node's address", func() error { return c.checkAddresses("apps", replicas) })
	for _, r := range c.wide("apps") { // as kubectl shows them
		if want := "fargate-ip-" + strings.ReplaceAll(r.ip, ".", "-") + ".ec2.internal"; r.node != want || r.status != "Running" {
			t.Errorf("kubectl get pods -o wide: %+v, want node %s", r, want)
		}
	}
	// AvailableIpAddressCount: a /28 has 11 addresses, a /19 8187, less
	// those the pods use.
	counted := func() error {
		inSmall := 0
		for _, r := range c.wide("apps") {
			if ip, err := netip.ParseAddr(r.ip); err == nil && smallSubnets["us-east-1a"].Contains(ip) {
				inSmall++
			}
		}
		if small, large := freeAddresses("subnet-small"), freeAddresses("subnet-large"); small != 11-inSmall || large != 8187-(replicas-inSmall) {
			return fmt.Errorf("free: subnet-small %d, subnet-large %d; %d pods in subnet-small", small, large, inSmall)
		}
		return nil
	}
	if err := counted(); err != nil {
		t.Error(err)
	}
	if free := freeAddresses("subnet-small"); free != 0 {
		t.Errorf("subnet-small: %d free addresses, want none", free)
	}
	churned := 0
	churn := func(rounds int) {
		for range rounds {
			c.kubectl("delete pods -n apps -l app=web --wait=false")
			churned += replicas
			eventually(t, 2*time.Minute, fmt.Sprintf("web running again after %d churns", churned), func() error { return c.checkAddresses("apps", replicas) })
		}
	}
	churn(5)
	c.emulator("down")
	c.emulator("up")
	eventually(t, time.Minute, "web running after the restart", func() error { return c.checkAddresses("apps", replicas) })
	churn(5)
	if churned < 500 {
		t.Fatalf("%d churns", churned)
	}
	// Once the deleted pods' addresses are released, the counts are those of
	// the pods that run.
	eventually(t, 30*time.Second, "AvailableIpAddressCount counts the running pods", counted)
}

// TestIntegrationSubnetFull: a profile over one /28 places exactly eleven
// pods; the twelfth stays Pending with fargate-scheduler's event, scan
// reports the profile's subnets (LV011), and when a pod goes its address
// goes to the waiting pod.
func TestIntegrationSubnetFull(t *testing.T) {
	t.Parallel()
	c := start(t, "small-subnet")
	freeAddresses := c.freeAddresses()
	c.namespace("small")
	for i := range 12 {
		c.kubectl(fmt.Sprintf("run -n small p%02d --image=public.ecr.aws/nginx/nginx:1.27", i))
	}
	waiting := ""
	eventually(t, time.Minute, "eleven pods run, one waits", func() error {
		if err := c.checkAddresses("small", 11); err != nil {
			return err
		}
		for _, r := range c.wide("small") {
			if r.status == "Pending" {
				waiting = r.name
			}
		}
		if waiting == "" {
			return fmt.Errorf("no pod Pending")
		}
		msg, err := c.warning("small", waiting)
		if err != nil {
			return err
		}
		if want := "InsufficientFreeAddressesInSubnet: no free IP address for the pod's network interface in subnets subnet-small"; msg != want {
			return fmt.Errorf("event %q, want %q", msg, want)
		}
		return nil
	})
	if free := freeAddresses("subnet-small"); free != 0 {
		t.Errorf("subnet-small: %d free addresses, want 0", free)
	}
	r, _ := c.scan(c.env())
	if msgs := r.find("LV011", "FargateProfile", "", "small"); len(msgs) != 1 || !strings.Contains(msgs[0], "have 0 free addresses (subnet-small 0)") {
		t.Errorf("LV011 on profile small: %q; findings %v", msgs, r.rules())
	}
	var gone wideRow
	for _, r := range c.wide("small") {
		if r.status == "Running" {
			gone = r
		}
	}
	c.kubectl("delete pod -n small " + gone.name)
	eventually(t, time.Minute, "the waiting pod runs at the freed address", func() error {
		if err := c.checkAddresses("small", 11); err != nil {
			return err
		}
		for _, r := range c.wide("small") {
			if r.name == waiting && r.ip != gone.ip {
				return fmt.Errorf("%s runs at %s, not at the freed %s", waiting, r.ip, gone.ip)
			}
		}
		return nil
	})
}

// describedEvents is the Events section of `kubectl describe pod`, a line
// per event: "Type Reason From Message".
func describedEvents(out string) []string {
	_, events, _ := strings.Cut(out, "\nEvents:\n")
	var lines []string
	for _, line := range strings.Split(events, "\n")[2:] { // past the header and its underline
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		lines = append(lines, strings.Join(append(f[:2], f[3:]...), " ")) // without the age
	}
	return lines
}

// TestIntegrationLoggingEvents: `kubectl describe pod` of a Fargate pod shows
// fargate-scheduler's logging event, then Scheduled, as on EKS; the logging
// state follows the aws-logging ConfigMap as it was when the pod was
// created, and an invalid ConfigMap gives the problem check's FG051 names.
func TestIntegrationLoggingEvents(t *testing.T) {
	t.Parallel()
	c := start(t, "small-subnet")
	c.namespace("apps")
	describe := func(pod string) (annotation string, events []string) {
		t.Helper()
		var out string
		eventually(t, time.Minute, pod+" runs", func() error {
			out = c.kubectl("describe pod -n apps " + pod)
			if !strings.Contains(out, "Status:           Running") || !strings.Contains(out, "Scheduled") {
				return fmt.Errorf("not running, or no Scheduled event:\n%s", out)
			}
			return nil
		})
		p, err := c.kube.CoreV1().Pods("apps").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p.Annotations[fargate.LoggingAnnotation], describedEvents(out)
	}
	run := func(pod string) {
		c.kubectl("run -n apps " + pod + " --image=public.ecr.aws/nginx/nginx:1.27")
	}
	scheduled := func(pod string) string {
		p, err := c.kube.CoreV1().Pods("apps").Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return "Normal Scheduled fargate-scheduler Successfully assigned apps/" + pod + " to " + p.Spec.NodeName
	}
	check := func(pod, annotation, event string) {
		t.Helper()
		got, events := describe(pod)
		want := []string{event, scheduled(pod)}
		if got != annotation || strings.Join(events, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: annotation Logging %q, events\n%s\nwant %q and\n%s", pod, got, strings.Join(events, "\n"), annotation, strings.Join(want, "\n"))
		}
	}
	run("before")
	notFound := `Warning LoggingDisabled fargate-scheduler Disabled logging because aws-logging configmap was not found. configmap "aws-logging" not found`
	check("before", "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND", notFound)

	// The ConfigMap of the EKS user guide: new pods log, the pod created
	// before it does not until it is recreated.
	dir := t.TempDir()
	write := func(name, output string) string {
		path := filepath.Join(dir, name)
		doc := "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: aws-observability\n  labels: {aws-observability: enabled}\n---\n" +
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: aws-logging\n  namespace: aws-observability\ndata:\n  output.conf: |\n" +
			"    [OUTPUT]\n        Name " + output + "\n        Match *\n        region us-east-1\n"
		if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	c.kubectl("apply -f " + write("valid.yaml", "cloudwatch_logs"))
	run("after")
	check("after", "LoggingEnabled", "Normal LoggingEnabled fargate-scheduler Successfully enabled logging for pod")
	if got, _ := describe("before"); got != "LoggingDisabled: LOGGING_CONFIGMAP_NOT_FOUND" {
		t.Errorf("the pod created before the ConfigMap: annotation Logging %q, want it unchanged", got)
	}
	// Recreated, it logs.
	c.kubectl("delete pod -n apps before")
	run("before")
	check("before", "LoggingEnabled", "Normal LoggingEnabled fargate-scheduler Successfully enabled logging for pod")

	// An output Fargate does not support: the problem in the event is the one
	// check reports on the same file.
	invalid := write("invalid.yaml", "http")
	c.kubectl("apply -f " + invalid)
	out, _, _ := c.fargatekit(c.env(), "check", "-o", "json", invalid)
	var rep scanReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("check: %v\n%s", err, out)
	}
	var problem string
	for _, f := range rep.Findings {
		if f.Rule == "FG051" {
			problem = f.Message
		}
	}
	if problem == "" {
		t.Fatalf("check reports no FG051 on %s: %v", invalid, rep.Findings)
	}
	run("invalid")
	check("invalid", "LoggingDisabled: LOGGING_CONFIGMAP_INVALID",
		"Warning LoggingDisabled fargate-scheduler Disabled logging for pod due to invalid configmap. "+problem+". Please fix the logging configmap")
}
