package emulator_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eks"
	ekstypes "github.com/aws/aws-sdk-go-v2/service/eks/types"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/doccheck"
	"github.com/fargatekit/fargatekit/internal/emulator"
	"github.com/fargatekit/fargatekit/internal/emulator/awscli"
	"github.com/fargatekit/fargatekit/pkg/fargate"
)

// fargatekitBin is the fargatekit binary TestMain builds: the emulator runs
// its daemon from it, as `fargatekit emulator up` does.
var fargatekitBin string

// The integration tests (TestIntegration*) run in parallel, each on its own
// emulator, since an emulator mostly waits: every test chooses free ports
// and state directories of its own, and takes one of emulators' slots.
func TestMain(m *testing.M) {
	if os.Getenv("FARGATEKIT_CONTROLPLANE") == "" {
		os.Exit(m.Run()) // the integration tests skip, or fail when required: no binary to build
	}
	dir, err := os.MkdirTemp("", "fargatekit-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fargatekitBin, err = doccheck.Build(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every parallel test goes on to slot, which bounds the emulators and
	// lets the long tests go first: go test's -parallel (GOMAXPROCS by
	// default) would otherwise hold the others back in its own order.
	flag.Parse()
	parallel := false
	flag.Visit(func(f *flag.Flag) { parallel = parallel || f.Name == "test.parallel" })
	if !parallel {
		_ = flag.Set("test.parallel", "64")
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// cluster is a running emulator.
type cluster struct {
	t       testing.TB
	kube    kubernetes.Interface
	eks     *eks.Client
	name    string
	state   string
	args    []string // the emulator flags of this cluster
	eksURL  string
	binDir  string
	cfgPath string
}

// emulators bounds how many integration tests run at once (TestMain lifts
// go test's -parallel): two on the project's two cores, each with its own
// control plane of half a gigabyte.
var emulators = &places{free: 2}

// places is a semaphore whose long waiters go first.
type places struct {
	mu   sync.Mutex
	cond sync.Cond
	free int
	// long counts the long tests waiting.
	long int
	// longTests are the tests marked long, by name.
	longTests map[string]bool
}

// long marks t as one of the longest integration tests (minutes, where
// most take seconds): it takes the next free place before the others that
// wait. Started last, such a test would run on alone at the end with the
// other place idle; started first, the short ones fill the other place
// meanwhile.
func long(t testing.TB) {
	emulators.mu.Lock()
	defer emulators.mu.Unlock()
	if emulators.longTests == nil {
		emulators.longTests = map[string]bool{}
	}
	emulators.longTests[t.Name()] = true
}

// slot waits for one of emulators' places and gives it back when t ends,
// after the cleanups registered later (an emulator's down among them).
func slot(t testing.TB) {
	e := emulators
	e.mu.Lock()
	if e.cond.L == nil {
		e.cond.L = &e.mu
	}
	isLong := e.longTests[t.Name()]
	if isLong {
		e.long++
	}
	for e.free == 0 || (!isLong && e.long > 0) {
		e.cond.Wait()
	}
	e.free--
	if isLong {
		e.long--
	}
	e.mu.Unlock()
	t.Cleanup(func() {
		e.mu.Lock()
		e.free++
		e.cond.Broadcast()
		e.mu.Unlock()
	})
}

// freePort returns a loopback port free now, outside the ephemeral range
// (emulator.FreePorts): the tests running alongside would otherwise take it,
// for their outgoing connections, between now and the daemon listening on it.
func freePort(t testing.TB) int {
	t.Helper()
	ports, err := emulator.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	return ports[0]
}

// controlPlane returns the directory of the control plane binaries, and
// skips the test without them (fails it when they are required).
func controlPlane(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("FARGATEKIT_CONTROLPLANE")
	if bin == "" {
		const how = "FARGATEKIT_CONTROLPLANE is not set: build the control plane with `make controlplane` and export " +
			"FARGATEKIT_CONTROLPLANE=$(hack/build-controlplane.sh -q), or run `make test`, which does both"
		if os.Getenv("FARGATEKIT_INTEGRATION") == "required" { // make test and CI: a skip must not pass for a run
			t.Fatal(how)
		}
		t.Skip(how)
	}
	return bin
}

// start runs `fargatekit emulator up` with the configuration of a scenario
// of examples/emulator (and the extra emulator flags) and stops the emulator
// when the test ends.
func start(t testing.TB, scenario string, extra ...string) *cluster {
	t.Helper()
	bin := controlPlane(t)
	slot(t)
	cfgPath, err := filepath.Abs(filepath.Join("..", "..", "examples", "emulator", scenario, "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clusterconfig.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	var c *cluster
	// A port found free can be taken by another test's emulator before
	// this one listens on it: up then fails, and is tried again on other
	// ports in a new state directory.
	for attempt := 1; ; attempt++ {
		eksPort := freePort(t)
		c = &cluster{t: t, name: cfg.Metadata.Name, state: filepath.Join(t.TempDir(), "state"), binDir: bin, cfgPath: cfgPath,
			eksURL: fmt.Sprintf("http://127.0.0.1:%d", eksPort)}
		c.args = []string{"--config", cfgPath, "--state-dir", c.state, "--bin-dir", bin,
			"--eks-port", fmt.Sprint(eksPort), "--webhook-port", fmt.Sprint(freePort(t))}
		c.args = append(c.args, extra...)
		began := time.Now()
		out, err := exec.Command(fargatekitBin, append([]string{"emulator", "up"}, c.args...)...).CombinedOutput()
		if err == nil {
			t.Logf("emulator up in %s", time.Since(began).Round(100*time.Millisecond))
			break
		}
		if attempt == 3 || !strings.Contains(string(out), "address already in use") {
			t.Fatalf("fargatekit emulator up: %v\n%s", err, out)
		}
		t.Logf("emulator up found a port taken; trying other ports:\n%s", out)
	}
	t.Cleanup(func() {
		if t.Failed() { // what the daemon and the control plane saw, for the CI log
			components, _ := filepath.Glob(filepath.Join(c.state, "kwok", "clusters", c.name, "logs", "*.log"))
			for _, f := range append([]string{filepath.Join(c.state, "daemon.log"), filepath.Join(c.state, "spread", "spread.log")}, components...) {
				if data, err := os.ReadFile(f); err == nil {
					lines := strings.Split(strings.TrimSpace(string(data)), "\n")
					t.Logf("%s (last lines):\n%s", f, strings.Join(lines[max(0, len(lines)-40):], "\n"))
				}
			}
		}
		c.emulator("down")
	})
	rc, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.state, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	if c.kube, err = kubernetes.NewForConfig(rc); err != nil {
		t.Fatal(err)
	}
	c.eks = eks.New(eks.Options{
		Region: cfg.Metadata.Region, BaseEndpoint: aws.String(c.eksURL),
		Credentials: credentials.NewStaticCredentialsProvider("emulator", "emulator", ""),
	})
	return c
}

// emulator runs a `fargatekit emulator` subcommand on this cluster.
func (c *cluster) emulator(verb string) string {
	c.t.Helper()
	out, err := exec.Command(fargatekitBin, append([]string{"emulator", verb}, c.args...)...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("fargatekit emulator %s: %v\n%s", verb, err, out)
	}
	return string(out)
}

// patience stretches the waits of eventually: under `make test` the
// control plane shares two cores with the race-detected tests of the other
// packages, and what takes seconds alone has taken over a minute there. A
// test that passes waits no longer for it.
const patience = 3

// eventually polls check until it returns nil or timeout (times patience)
// passes.
func eventually(t testing.TB, timeout time.Duration, what string, check func() error) {
	t.Helper()
	timeout *= patience
	deadline := time.Now().Add(timeout)
	var err error
	for time.Now().Before(deadline) {
		if err = check(); err == nil {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s: still not true after %s: %v", what, timeout, err)
}

// consistently polls check for d and fails the test as soon as it returns an
// error: the way to say that something must not happen. It ends at once on
// the first failure, and a check that never fails costs d.
func consistently(t testing.TB, d time.Duration, what string, check func() error) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(200 * time.Millisecond) {
		if err := check(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if time.Now().After(deadline) {
			return
		}
	}
}

var ctx = context.Background()

func (c *cluster) namespace(name string) {
	c.t.Helper()
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func deployment(ns, name string, replicas int32, mutate func(*corev1.PodTemplateSpec)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "public.ecr.aws/example/" + name + ":1"}}},
			},
		},
	}
	if mutate != nil {
		mutate(&d.Spec.Template)
	}
	return d
}

func (c *cluster) deploy(d *appsv1.Deployment) {
	c.t.Helper()
	if _, err := c.kube.AppsV1().Deployments(d.Namespace).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

// placement is where a workload's running pods are: "fargate:<profile>",
// "ec2", "pending" (not bound) or "starting on <node>" (bound, not
// Running), one entry per pod.
func (c *cluster) placement(ns, app string) ([]string, error) {
	pods, err := c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(map[string]string{"app": app}).String()})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range pods.Items {
		switch {
		case p.DeletionTimestamp != nil:
			continue
		case p.Status.Phase != corev1.PodRunning && p.Spec.NodeName == "":
			out = append(out, "pending")
		case p.Status.Phase != corev1.PodRunning:
			out = append(out, "starting on "+p.Spec.NodeName)
		case strings.HasPrefix(p.Spec.NodeName, "fargate-"):
			out = append(out, "fargate:"+p.Labels[fargate.ProfileLabel])
		default:
			out = append(out, "ec2")
		}
	}
	return out, nil
}

// all checks that a workload runs its replicas, every one placed as want.
func (c *cluster) all(ns, app string, replicas int, want string) error {
	got, err := c.placement(ns, app)
	if err != nil {
		return err
	}
	if len(got) != replicas {
		return fmt.Errorf("%s/%s has %d pods %v, want %d", ns, app, len(got), got, replicas)
	}
	for _, g := range got {
		if g != want {
			return fmt.Errorf("%s/%s pods %v, want all %s", ns, app, got, want)
		}
	}
	return nil
}

func (c *cluster) restart(ns, name string) {
	c.t.Helper()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339Nano))
	if _, err := c.kube.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) createProfile(name string, namespaces ...string) error {
	var sels []ekstypes.FargateProfileSelector
	for _, ns := range namespaces {
		sels = append(sels, ekstypes.FargateProfileSelector{Namespace: aws.String(ns)})
	}
	_, err := c.eks.CreateFargateProfile(ctx, &eks.CreateFargateProfileInput{
		ClusterName: aws.String(c.name), FargateProfileName: aws.String(name),
		PodExecutionRoleArn: aws.String("arn:aws:iam::111122223333:role/fargate"), Selectors: sels,
	})
	return err
}

func (c *cluster) waitActive(name string) {
	c.t.Helper()
	w := eks.NewFargateProfileActiveWaiter(c.eks, func(o *eks.FargateProfileActiveWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, time.Second
	})
	if err := w.Wait(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(c.name), FargateProfileName: aws.String(name)}, time.Minute); err != nil {
		c.t.Fatalf("waiting for profile %s: %v", name, err)
	}
}

func (c *cluster) deleteProfile(name string) {
	c.t.Helper()
	if _, err := c.eks.DeleteFargateProfile(ctx, &eks.DeleteFargateProfileInput{ClusterName: aws.String(c.name), FargateProfileName: aws.String(name)}); err != nil {
		c.t.Fatalf("deleting profile %s: %v", name, err)
	}
	w := eks.NewFargateProfileDeletedWaiter(c.eks, func(o *eks.FargateProfileDeletedWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, time.Second
	})
	if err := w.Wait(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(c.name), FargateProfileName: aws.String(name)}, time.Minute); err != nil {
		c.t.Fatalf("waiting for profile %s to go: %v", name, err)
	}
}

// warning returns the message of fargate-scheduler's FailedScheduling event
// on a pod of app.
func (c *cluster) warning(ns, app string) (string, error) {
	evs, err := c.kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err
	}
	for _, e := range evs.Items {
		if e.Source.Component == "fargate-scheduler" && e.Reason == "FailedScheduling" && strings.HasPrefix(e.InvolvedObject.Name, app) {
			return e.Message, nil
		}
	}
	return "", errors.New("no Warning event from fargate-scheduler yet")
}

// refused waits until fargate-scheduler refuses the one pod of app with the
// event want, and the pod stays Pending.
func (c *cluster) refused(ns, app, want string) {
	c.t.Helper()
	eventually(c.t, time.Minute, app+" refused", func() error {
		msg, err := c.warning(ns, app)
		if err != nil {
			return err
		}
		if msg != want {
			return fmt.Errorf("event %q, want %q", msg, want)
		}
		return c.all(ns, app, 1, "pending")
	})
}

var incidentNamespaces = []string{"orders", "payments", "catalog", "shipping"}

// deployIncident deploys the incident's four workloads and waits until each
// runs on the profile of its namespace.
func (c *cluster) deployIncident() {
	c.t.Helper()
	for _, ns := range incidentNamespaces {
		c.namespace(ns)
		c.deploy(deployment(ns, ns, 2, nil))
	}
	for _, ns := range incidentNamespaces {
		eventually(c.t, time.Minute, ns+" on its own profile", func() error { return c.all(ns, ns, 2, "fargate:"+ns) })
	}
}

// mergeDeletingFirst makes the incident's change as the Terraform apply did:
// it deletes the four profiles, one at a time, then (after calling between,
// when given) creates the merged one, and waits until the pods the deletions
// stopped run on EC2 nodes.
func (c *cluster) mergeDeletingFirst(between ...func()) {
	c.t.Helper()
	for _, ns := range incidentNamespaces {
		c.deleteProfile(ns)
	}
	for _, f := range between {
		f()
	}
	if err := c.createProfile("apps", incidentNamespaces...); err != nil {
		c.t.Fatal(err)
	}
	c.waitActive("apps")
	for _, ns := range incidentNamespaces {
		eventually(c.t, time.Minute, ns+" on EC2", func() error { return c.all(ns, ns, 2, "ec2") })
	}
}

// TestIntegrationProfileMergeIncident replays the incident of
// examples/incident: merging four per-namespace profiles into one by
// deleting first moves the pods to EC2 nodes, where they stay until restarted.
func TestIntegrationProfileMergeIncident(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	c.deployIncident()
	c.mergeDeletingFirst()
	// The new profile is ACTIVE, and still nothing moves.
	consistently(t, 3*time.Second, "after the merged profile is ACTIVE", func() error {
		for _, ns := range incidentNamespaces {
			if err := c.all(ns, ns, 2, "ec2"); err != nil {
				return err
			}
		}
		return nil
	})
	// kubectl rollout restart brings them back.
	for _, ns := range incidentNamespaces {
		c.restart(ns, ns)
	}
	for _, ns := range incidentNamespaces {
		eventually(t, time.Minute, ns+" back on Fargate", func() error { return c.all(ns, ns, 2, "fargate:apps") })
	}
}

// TestIntegrationTwoPhaseMerge makes the same change in two phases: create
// the merged profile, wait until it is ACTIVE, then delete the old ones.
// The pods never leave Fargate.
func TestIntegrationTwoPhaseMerge(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	c.deployIncident()
	if err := c.createProfile("apps", incidentNamespaces...); err != nil {
		t.Fatal(err)
	}
	c.waitActive("apps")
	for _, gone := range incidentNamespaces {
		c.deleteProfile(gone)
		for _, ns := range incidentNamespaces {
			eventually(t, time.Minute, ns+" on Fargate", func() error {
				got, err := c.placement(ns, ns)
				if err != nil {
					return err
				}
				for _, g := range got {
					if !strings.HasPrefix(g, "fargate:") && g != "pending" && !strings.HasPrefix(g, "starting on fargate-") {
						t.Fatalf("after deleting %s, %s has a pod on %s", gone, ns, g)
					}
				}
				return c.all(ns, ns, 2, "fargate:"+map[bool]string{true: "apps", false: ns}[isDeleted(ns, gone)])
			})
		}
	}
}

// isDeleted reports whether the profile named ns is deleted once gone is:
// the profiles are deleted in incidentNamespaces order.
func isDeleted(ns, gone string) bool {
	for _, n := range incidentNamespaces {
		if n == ns {
			return true
		}
		if n == gone {
			return false
		}
	}
	return false
}

// TestIntegrationOneOperationAtATime: the second of two creations in a row is
// refused with EKS's ResourceInUseException, and the AWS CLI's waiter works.
func TestIntegrationOneOperationAtATime(t *testing.T) {
	t.Parallel()
	c := start(t, "one-at-a-time")
	if err := c.createProfile("first", "a"); err != nil {
		t.Fatal(err)
	}
	err := c.createProfile("second", "b")
	var inUse *ekstypes.ResourceInUseException
	if !errors.As(err, &inUse) || aws.ToString(inUse.Message) != "Cannot create Fargate Profile second because cluster shop currently has Fargate profile first in status CREATING" {
		t.Fatalf("second create: %v, want ResourceInUseException with EKS's text", err)
	}
	run := awscli.Runner(t, c.eksURL)
	if _, stderr, err := run("eks", "wait", "fargate-profile-active", "--cluster-name", "shop", "--fargate-profile-name", "first"); err != nil {
		t.Fatalf("aws eks wait fargate-profile-active: %v\n%s", err, stderr)
	}
}

// TestIntegrationAZSpread: fargate-scheduler picks a subnet (an AZ) uniformly
// at random for every pod, ignoring the pods' zone anti-affinity.
func TestIntegrationAZSpread(t *testing.T) {
	t.Parallel()
	c := start(t, "az-spread")
	c.namespace("apps")
	c.deploy(deployment("apps", "web", 3, func(p *corev1.PodTemplateSpec) {
		p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey: "topology.kubernetes.io/zone", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}}
	}))
	counts := map[string]int{}
	shared := 0
	const rollouts = 15
	for i := range rollouts {
		if i > 0 {
			c.restart("apps", "web")
		}
		var zones []string
		eventually(t, time.Minute, "rollout running", func() error {
			if err := c.all("apps", "web", 3, "fargate:apps"); err != nil {
				return err
			}
			pods, err := c.kube.CoreV1().Pods("apps").List(ctx, metav1.ListOptions{})
			if err != nil {
				return err
			}
			zones = zones[:0]
			for _, p := range pods.Items {
				n, err := c.kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
				if err != nil {
					return err
				}
				zones = append(zones, n.Labels["topology.kubernetes.io/zone"])
			}
			return nil
		})
		seen := map[string]bool{}
		for _, z := range zones {
			counts[z]++
			if seen[z] {
				shared++
			}
			seen[z] = true
		}
	}
	n := 3.0 * rollouts
	chi := 0.0
	for _, az := range []string{"us-east-1a", "us-east-1b", "us-east-1c"} {
		d := float64(counts[az]) - n/3
		chi += d * d / (n / 3)
	}
	t.Logf("zones over %d rollouts: %v (chi-square %.2f); %d times two replicas shared an AZ", rollouts, counts, chi, shared)
	// 2 degrees of freedom: a chi-square above 9.21 happens with probability 1%.
	if chi > 9.21 {
		t.Errorf("zones %v are not uniform (chi-square %.2f)", counts, chi)
	}
	if shared == 0 {
		t.Error("replicas never shared an AZ: the zone anti-affinity was not ignored")
	}
}

// TestIntegrationRefusedPods: fargate-scheduler leaves what Fargate refuses
// Pending, with its Warning event.
func TestIntegrationRefusedPods(t *testing.T) {
	t.Parallel()
	c := start(t, "refused")
	c.namespace("apps")
	c.deploy(deployment("apps", "hostnet", 1, func(p *corev1.PodTemplateSpec) { p.Spec.HostNetwork = true }))
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "apps"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: deployment("apps", "agent", 1, nil).Spec.Template,
		},
	}
	if _, err := c.kube.AppsV1().DaemonSets("apps").Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for app, want := range map[string]string{
		"hostnet": "Pod not supported on Fargate: fields not supported: HostNetwork",
		"agent":   "Pod not supported on Fargate: DaemonSet pods are not supported",
	} {
		c.refused("apps", app, want)
	}
	// scan quotes the event, and check's rule names the field.
	r, code := c.scan(c.env())
	if msgs := r.find("LV003", "Deployment", "apps", "hostnet"); code != 1 || len(msgs) != 1 ||
		msgs[0] != `1 pod is Pending, refused by fargate-scheduler: "Pod not supported on Fargate: fields not supported: HostNetwork"` ||
		len(r.find("FG006", "Deployment", "apps", "hostnet")) != 1 {
		t.Errorf("scan (exit %d): refused %q; findings %v", code, msgs, r.rules())
	}
}

// TestIntegrationSettings: the settings of .fargatekit.yaml reach
// fargate-scheduler through `up --settings`, as check applies them: an
// allowed capability runs, allowPrivilegeEscalation is refused when the
// settings say so, and a pod whose node selector asks for EC2 is sent to
// fargate-scheduler all the same and refused.
func TestIntegrationSettings(t *testing.T) {
	t.Parallel()
	settings := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(settings, []byte("allowedCapabilities: [NET_ADMIN]\nrefusePrivilegeEscalation: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := start(t, "refused", "--settings", settings)
	c.namespace("apps")
	yes := true
	c.deploy(deployment("apps", "netadmin", 1, func(p *corev1.PodTemplateSpec) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_ADMIN"}}}
	}))
	c.deploy(deployment("apps", "escalates", 1, func(p *corev1.PodTemplateSpec) {
		p.Spec.Containers[0].SecurityContext = &corev1.SecurityContext{AllowPrivilegeEscalation: &yes}
	}))
	c.deploy(deployment("apps", "ec2only", 1, func(p *corev1.PodTemplateSpec) {
		p.Spec.NodeSelector = map[string]string{fargate.ComputeTypeLabel: "ec2"}
	}))
	eventually(t, time.Minute, "NET_ADMIN allowed", func() error { return c.all("apps", "netadmin", 1, "fargate:apps") })
	for app, want := range map[string]string{
		"escalates": "Pod not supported on Fargate: invalid SecurityContext fields: AllowPrivilegeEscalation",
		"ec2only":   "MatchNodeSelector failed: Fargate profile apps cannot place the pod: node selection excludes Fargate nodes",
	} {
		c.refused("apps", app, want)
	}
}

// TestIntegrationDNSHostnamesDisabled: every Fargate node is fargate-null,
// so only one Fargate pod runs.
func TestIntegrationDNSHostnamesDisabled(t *testing.T) {
	t.Parallel()
	c := start(t, "dns-hostnames")
	c.namespace("apps")
	c.deploy(deployment("apps", "web", 2, nil))
	eventually(t, time.Minute, "one pod runs, one waits", func() error {
		got, err := c.placement("apps", "web")
		if err != nil {
			return err
		}
		if strings.Join(got, " ") != "fargate:apps pending" && strings.Join(got, " ") != "pending fargate:apps" {
			return fmt.Errorf("pods %v", got)
		}
		msg, err := c.warning("apps", "web")
		if err != nil {
			return err
		}
		if !strings.Contains(msg, "fargate-null") {
			return fmt.Errorf("event %q", msg)
		}
		return nil
	})
	r, code := c.scan(c.env())
	if msgs := r.find("LV008", "Node", "", fargate.NullNodeName); code != 1 || len(msgs) != 1 || !strings.Contains(msgs[0], "(1 Fargate pod waiting)") ||
		r.fix("LV008", "Node", "", fargate.NullNodeName) != `aws ec2 modify-vpc-attribute --vpc-id vpc-0fa76a7e0000emu --enable-dns-hostnames '{"Value":true}'` {
		t.Errorf("scan (exit %d): fargate-null %q; findings %v", code, msgs, r.rules())
	}
	// The cause, from the EC2 API: the VPC's DNS hostnames attribute.
	if msgs := r.find("FG053", "VPC", "", "vpc-0fa76a7e0000emu"); len(msgs) != 1 || !strings.Contains(msgs[0], "DNS hostnames disabled") {
		t.Errorf("FG053 on the VPC: %q; findings %v", msgs, r.rules())
	}
	// scan's fix, run as printed with the AWS CLI, then the pods recreated:
	// their Fargate nodes have names again, and both run.
	if out, err := c.shell(c.env(), r.fix("LV008", "Node", "", fargate.NullNodeName)); err != nil {
		t.Fatalf("scan's fix: %v\n%s", err, out)
	}
	c.restart("apps", "web")
	eventually(t, time.Minute, "both pods on named Fargate nodes", func() error {
		if err := c.all("apps", "web", 2, "fargate:apps"); err != nil {
			return err
		}
		nodes, err := c.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, n := range nodes.Items {
			if n.Name == fargate.NullNodeName {
				return errors.New("a fargate-null node is left")
			}
		}
		return nil
	})
}

// TestIntegrationCoreDNSComputeType: CoreDNS annotated compute-type ec2 stays
// off Fargate although a profile matches it; without the annotation it lands there.
func TestIntegrationCoreDNSComputeType(t *testing.T) {
	t.Parallel()
	c := start(t, "coredns")
	d := deployment("kube-system", "coredns", 2, func(p *corev1.PodTemplateSpec) {
		p.Labels["k8s-app"] = "kube-dns"
		p.Annotations = map[string]string{fargate.ComputeTypeAnnotation: "ec2"}
	})
	c.deploy(d)
	eventually(t, time.Minute, "CoreDNS on EC2", func() error { return c.all("kube-system", "coredns", 2, "ec2") })
	patch := `[{"op": "remove", "path": "/spec/template/metadata/annotations/eks.amazonaws.com~1compute-type"}]`
	if _, err := c.kube.AppsV1().Deployments("kube-system").Patch(ctx, "coredns", types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "CoreDNS on Fargate", func() error { return c.all("kube-system", "coredns", 2, "fargate:coredns") })
}

// TestIntegrationLifecycle: up twice starts one copy; killed processes come
// back with up, with nothing lost; a taken port is a clear error; down stops
// every process the emulator started.
func TestIntegrationLifecycle(t *testing.T) {
	t.Parallel()
	c := start(t, "one-at-a-time")
	if err := c.createProfile("kept", "kept"); err != nil {
		t.Fatal(err)
	}
	c.waitActive("kept")
	pidOf := func(name string) int {
		data, err := os.ReadFile(filepath.Join(c.state, name))
		if err != nil {
			t.Fatal(err)
		}
		var pid int
		if _, err := fmt.Sscan(string(data), &pid); err != nil {
			t.Fatal(err)
		}
		return pid
	}
	daemon := pidOf("daemon.pid")
	if out := c.emulator("up"); !strings.Contains(out, "already running") || pidOf("daemon.pid") != daemon {
		t.Errorf("a second up: %s", out)
	}
	// A pod on a Fargate node, to delete once the control plane crashed and
	// up started it again.
	c.namespace("kept")
	runPod := func(name string) {
		t.Helper()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kept"},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "public.ecr.aws/example/app:1"}}},
		}
		if _, err := c.kube.CoreV1().Pods("kept").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 30*time.Second, "the pod runs on Fargate", func() error {
			p, err := c.kube.CoreV1().Pods("kept").Get(ctx, name, metav1.GetOptions{})
			if err == nil && p.Status.Phase != corev1.PodRunning {
				err = fmt.Errorf("phase %s on %q", p.Status.Phase, p.Spec.NodeName)
			}
			return err
		})
	}
	// deletePod deletes a pod and waits until it is gone, which takes
	// kwok-controller (the pod's kubelet) holding its node's lease (0.2 s
	// when it does).
	deletePod := func(name string) {
		t.Helper()
		if err := c.kube.CoreV1().Pods("kept").Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "the pod "+name+" deleted after up is gone", func() error {
			switch _, err := c.kube.CoreV1().Pods("kept").Get(ctx, name, metav1.GetOptions{}); {
			case apierrors.IsNotFound(err):
				return nil
			case err != nil:
				return err
			}
			return errors.New("still there")
		})
	}
	runPod("before-kill")
	// Kill the daemon and the API server; up brings both back.
	apiserver := pidOf(filepath.Join("kwok", "clusters", c.name, "pids", "kube-apiserver.pid"))
	for _, pid := range []int{daemon, apiserver} {
		p, err := os.FindProcess(pid)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "status sees the kill", func() error {
		if err := exec.Command(fargatekitBin, append([]string{"emulator", "status"}, c.args...)...).Run(); err == nil {
			return errors.New("status still says running")
		}
		return nil
	})
	c.emulator("up")
	c.emulator("status")
	out, err := c.eks.DescribeFargateProfile(ctx, &eks.DescribeFargateProfileInput{ClusterName: aws.String(c.name), FargateProfileName: aws.String("kept")})
	if err != nil || out.FargateProfile.Status != ekstypes.FargateProfileStatusActive {
		t.Fatalf("the profile after a restart: %v %v", out, err)
	}
	if _, err := c.kube.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("the API server after up: %v", err)
	}
	// A second emulator on the same EKS port is refused with a clear error
	// (its webhook's port is free: not the default one of the documents' walkthroughs).
	otherState := t.TempDir()
	other := []string{"emulator", "up", "--config", c.cfgPath, "--state-dir", otherState, "--bin-dir", c.binDir,
		"--eks-port", strings.TrimPrefix(c.eksURL, "http://127.0.0.1:"), "--webhook-port", fmt.Sprint(freePort(t))}
	if msg, err := exec.Command(fargatekitBin, other...).CombinedOutput(); err == nil || !strings.Contains(string(msg), "in use") {
		t.Errorf("up on a taken port: %v\n%s", err, msg)
	}
	if ps := processesOf(t, otherState); len(ps) > 0 {
		t.Errorf("a failed up left processes behind: %v", ps)
	}
	// The API server died with kwok-controller holding the nodes' leases,
	// which a new kwok-controller would wait 200 s for: up makes it take
	// them at once, so that the pod can be deleted.
	deletePod("before-kill")
	// A pod on a Fargate node, to delete after down and up.
	runPod("before-down")
	// down stops every process of the emulator.
	c.emulator("down")
	pids, _ := filepath.Glob(filepath.Join(c.state, "kwok", "clusters", c.name, "pids", "*.pid"))
	for _, f := range append(pids, filepath.Join(c.state, "daemon.pid")) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var pid int
		if _, err := fmt.Sscan(string(data), &pid); err == nil && processAlive(pid) {
			t.Errorf("%s: process %d still runs after down", f, pid)
		}
	}
	// Up again: kwok-controller takes the nodes at once (down released their
	// leases, which a new one would otherwise wait 200 s for), so the pod
	// on its Fargate node can be deleted.
	c.emulator("up")
	deletePod("before-down")
}

func processAlive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// fk runs `fargatekit emulator ARGS` with XDG_STATE_HOME at root ("" keeps
// the environment's) and returns its output and exit code.
func fk(t *testing.T, root string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(fargatekitBin, append([]string{"emulator"}, args...)...)
	if root != "" {
		cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+root)
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		t.Fatalf("fargatekit emulator %s: %v", strings.Join(args, " "), err)
	}
	return string(out), 0
}

// processesOf returns the running processes of a state directory, by pid.
func processesOf(t *testing.T, state string) []emulator.Process {
	t.Helper()
	ps, err := emulator.Processes(state)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestIntegrationLifecycleRecorded: the state directory records its
// emulator. down given only --state-dir stops every process of it; up
// without --config runs the recorded cluster; another --config is refused
// with the fields that differ, until --recreate; delete removes it all.
func TestIntegrationLifecycleRecorded(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	only := []string{"--state-dir", c.state, "--bin-dir", c.binDir}
	if len(processesOf(t, c.state)) != len(emulator.Components) {
		t.Fatalf("after up: %v", processesOf(t, c.state))
	}
	out, code := fk(t, "", append([]string{"down"}, only...)...)
	if code != 0 || !strings.Contains(out, `stopped the emulator "shop"`) || !strings.Contains(out, "kube-apiserver (pid") {
		t.Errorf("down with only --state-dir (exit %d):\n%s", code, out)
	}
	if ps := processesOf(t, c.state); len(ps) > 0 {
		t.Fatalf("still running after down: %v", ps)
	}
	if out, code := fk(t, "", append([]string{"down"}, only...)...); code != 0 || !strings.Contains(out, "nothing was running") {
		t.Errorf("a second down (exit %d):\n%s", code, out)
	}
	// up without --config: the recorded cluster, on its recorded ports.
	if out, code := fk(t, "", append([]string{"up"}, only...)...); code != 0 || !strings.Contains(out, `EKS cluster "shop"`) || !strings.Contains(out, c.eksURL) {
		t.Fatalf("up without --config (exit %d):\n%s", code, out)
	}
	if out, code := fk(t, "", append([]string{"status"}, only...)...); code != 0 || !strings.Contains(out, `emulator "shop"`) {
		t.Errorf("status (exit %d):\n%s", code, out)
	}
	other, err := filepath.Abs(filepath.Join("..", "..", "examples", "emulator", "az-spread", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, code = fk(t, "", append([]string{"up", "--config", other}, only...)...)
	if code != 2 || !strings.Contains(out, "these fields differ: fargateProfiles") || !strings.Contains(out, "--recreate") {
		t.Errorf("up with another --config (exit %d):\n%s", code, out)
	}
	out, code = fk(t, "", append([]string{"delete"}, only...)...)
	if code != 0 || !strings.Contains(out, "deleted "+c.state) {
		t.Errorf("delete (exit %d):\n%s", code, out)
	}
	if _, err := os.Stat(c.state); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state directory after delete: %v", err)
	}
	if ps := processesOf(t, c.state); len(ps) > 0 {
		t.Errorf("still running after delete: %v", ps)
	}
}

// TestIntegrationLifecycleOrphans: a state directory removed by hand while
// its emulator runs leaves orphans; up refuses to start a second control
// plane there and names them, status calls them orphaned, down stops them.
func TestIntegrationLifecycleOrphans(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	running := processesOf(t, c.state)
	if err := os.RemoveAll(c.state); err != nil {
		t.Fatal(err)
	}
	out, code := fk(t, "", append([]string{"up"}, c.args...)...)
	if code != 2 || !strings.Contains(out, "still run although it records no emulator") || !strings.Contains(out, fmt.Sprintf("pid %d", running[0].PID)) {
		t.Errorf("up over orphans (exit %d):\n%s", code, out)
	}
	// Orphans may die on their own once their files are gone (the
	// controller-manager does, at times): what counts is that up started
	// nothing new.
	for _, p := range processesOf(t, c.state) {
		if !slices.ContainsFunc(running, func(r emulator.Process) bool { return r.PID == p.PID }) {
			t.Errorf("up started %s over the orphans %v", p, running)
		}
	}
	only := []string{"--state-dir", c.state, "--bin-dir", c.binDir}
	if out, code := fk(t, "", append([]string{"status"}, only...)...); code != 1 || !strings.Contains(out, "no emulator is recorded") || !strings.Contains(out, "  orphaned  ") {
		t.Errorf("status of orphans (exit %d):\n%s", code, out)
	}
	if out, code := fk(t, "", append([]string{"down"}, only...)...); code != 0 || !strings.Contains(out, "orphaned processes") {
		t.Errorf("down of orphans (exit %d):\n%s", code, out)
	}
	if ps := processesOf(t, c.state); len(ps) > 0 {
		t.Errorf("orphans still run after down: %v", ps)
	}
}

// TestIntegrationLifecycleKilled: status tells which component a kill -9
// stopped, from the processes; up brings it back.
func TestIntegrationLifecycleKilled(t *testing.T) {
	t.Parallel()
	c := start(t, "incident")
	only := []string{"--state-dir", c.state, "--bin-dir", c.binDir}
	for _, component := range emulator.Components {
		var victim emulator.Process
		for _, p := range processesOf(t, c.state) {
			if p.Component == component {
				victim = p
			}
		}
		if victim.PID == 0 {
			t.Fatalf("%s does not run: %v", component, processesOf(t, c.state))
		}
		if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, component+" reported stopped", func() error {
			out, code := fk(t, "", append([]string{"status"}, only...)...)
			if code != 1 || !regexp.MustCompile(`(?m)^  `+component+` +stopped`).MatchString(out) {
				return fmt.Errorf("status (exit %d):\n%s", code, out)
			}
			return nil
		})
		if out, code := fk(t, "", append([]string{"up"}, only...)...); code != 0 {
			t.Fatalf("up after killing %s (exit %d):\n%s", component, code, out)
		}
		if out, code := fk(t, "", append([]string{"status"}, only...)...); code != 0 {
			t.Fatalf("status after up (exit %d):\n%s", code, out)
		}
	}
}

// TestIntegrationLifecycleDiscovery: without --state-dir or --config the
// commands find the emulator under the state root, and with two they list
// them and ask for one; kubeconfig never prints a path that does not exist.
func TestIntegrationLifecycleDiscovery(t *testing.T) {
	t.Parallel()
	slot(t)
	root := t.TempDir()
	cfg, err := filepath.Abs(filepath.Join("..", "..", "examples", "emulator", "incident", "cluster.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bin := controlPlane(t)
	if out, code := fk(t, root, "kubeconfig"); code != 2 || !strings.Contains(out, "no emulator in") {
		t.Errorf("kubeconfig with no emulator (exit %d):\n%s", code, out)
	}
	ports := []string{"--eks-port", fmt.Sprint(freePort(t)), "--webhook-port", fmt.Sprint(freePort(t)), "--bin-dir", bin}
	if out, code := fk(t, root, append([]string{"up", "--config", cfg}, ports...)...); code != 0 {
		t.Fatalf("up (exit %d):\n%s", code, out)
	}
	state := filepath.Join(root, "fargatekit", "emulator", "shop")
	t.Cleanup(func() { fk(t, root, "delete", "--state-dir", state) })
	out, code := fk(t, root, "kubeconfig")
	if code != 0 || strings.TrimSpace(out) != filepath.Join(state, "kubeconfig") {
		t.Errorf("kubeconfig (exit %d): %q", code, out)
	}
	if out, code := fk(t, root, "status", "--bin-dir", bin); code != 0 || !strings.Contains(out, `emulator "shop" in `+state) {
		t.Errorf("status without flags (exit %d):\n%s", code, out)
	}
	// A second state directory: created, never started.
	second := filepath.Join(root, "fargatekit", "emulator", "other")
	if out, code := fk(t, root, "up", "--state-dir", second, "--bin-dir", filepath.Join(root, "no-binaries")); code != 2 || !strings.Contains(out, "missing") {
		t.Fatalf("up without binaries (exit %d):\n%s", code, out)
	}
	if err := os.MkdirAll(second, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(second, emulator.RecordFile), []byte(`{"config": {"metadata": {"name": "other"}}, "eksPort": 9780, "webhookPort": 9781}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := fk(t, root, "status"); code != 2 || !strings.Contains(out, "2 emulators in") || !strings.Contains(out, "--state-dir") {
		t.Errorf("status with two emulators (exit %d):\n%s", code, out)
	}
	out, code = fk(t, root, "list")
	if code != 0 || !regexp.MustCompile(`(?m)^shop +`+regexp.QuoteMeta(state)+` +\d+ +\d+ +running$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^other +`+regexp.QuoteMeta(second)+` +9780 +9781 +stopped$`).MatchString(out) {
		t.Errorf("list (exit %d):\n%s", code, out)
	}
	if out, code := fk(t, root, "kubeconfig", "--state-dir", second); code != 2 || !strings.Contains(out, "has not been started") {
		t.Errorf("kubeconfig of a never-started emulator (exit %d):\n%s", code, out)
	}
}
