package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2/maybe"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
	"github.com/fargatekit/fargatekit/internal/emulator/egress"
	"github.com/fargatekit/fargatekit/internal/emulator/eksapi"
	"github.com/fargatekit/fargatekit/internal/settings"
)

// Options say where an emulator lives and what runs it.
type Options struct {
	Config *clusterconfig.Config
	// Settings are those of .fargatekit.yaml; SettingsPath is its file, ""
	// for none. The daemon reads it again.
	Settings     *settings.Settings
	SettingsPath string
	// ConfigPath is the configuration file the emulator was created from,
	// "" for the defaults. The daemon runs the recorded configuration.
	ConfigPath string
	// StateDir holds everything of the emulator: the control plane's work
	// directory (etcd data, certificates, logs), the EKS profiles, the
	// kubeconfig, the daemon's pid file and log.
	StateDir string
	// BinDir holds kube-apiserver, kube-controller-manager, kube-scheduler,
	// kubectl, etcd, kwok and kwokctl (hack/build-controlplane.sh).
	BinDir string
	// Self is the fargatekit binary the daemon runs from.
	Self string
	// EKSPort and WebhookPort are the daemon's loopback ports.
	EKSPort, WebhookPort int
	// Record is what the state directory records of its emulator; nil
	// before the first up.
	Record *Record
	// Progress receives one line per step; may be nil.
	Progress io.Writer
}

// Paths of the state directory.
func (o *Options) kwokDir() string { return filepath.Join(o.StateDir, "kwok") }
func (o *Options) pidFile() string { return filepath.Join(o.StateDir, "daemon.pid") }
func (o *Options) logFile() string { return filepath.Join(o.StateDir, "daemon.log") }

// eksStateDir is where the EKS API keeps its state, in an emulator's state
// directory.
func eksStateDir(stateDir string) string { return filepath.Join(stateDir, "eks") }

// KubernetesVersion is the version the control plane has reached through
// the EKS API's updates, or the configuration's before any.
func (o *Options) KubernetesVersion() string {
	if v := eksapi.SavedVersion(eksStateDir(o.StateDir)); v != "" {
		return v
	}
	return o.Config.KubernetesVersion
}
func (o *Options) egressConfig() string {
	return filepath.Join(o.StateDir, "egress-selector.yaml")
}

// EgressSocket is where the daemon proxies the API server's traffic to Services.
func (o *Options) EgressSocket() string { return filepath.Join(o.StateDir, "egress.sock") }
func (o *Options) clusterDir() string {
	return filepath.Join(o.kwokDir(), "clusters", o.Config.Metadata.Name)
}
func (o *Options) kwokKubeconfig() string { return filepath.Join(o.clusterDir(), "kubeconfig.yaml") }

// Kubeconfig is the admin kubeconfig of the emulated cluster.
func (o *Options) Kubeconfig() string { return filepath.Join(o.StateDir, "kubeconfig") }

// EKSEndpoint is the URL of the emulated EKS API.
func (o *Options) EKSEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", o.EKSPort) }

func (o *Options) say(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format+"\n", args...)
	}
}

// Binaries the emulator needs in BinDir.
var Binaries = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "etcd", "kwok", "kwokctl"}

// Up starts what is not running: the control plane (created on the first
// run, started again afterwards with its data) and the daemon. Running it
// when everything runs changes nothing. An up that fails part-way stops
// what runs of the emulator before it returns the error.
func Up(ctx context.Context, o *Options) error {
	if !supported {
		return fmt.Errorf("the emulator runs on Linux and macOS, not on %s", runtime.GOOS)
	}
	for _, b := range Binaries {
		if _, err := os.Stat(filepath.Join(o.BinDir, b)); err != nil {
			return fmt.Errorf("control plane binary %s is missing in %s: fargatekit's releases do not carry the control plane; "+
				"build it from source with `make controlplane` in a clone of https://github.com/fargatekit/fargatekit (once, cached), "+
				"or give --bin-dir (or FARGATEKIT_CONTROLPLANE) a directory of %s", b, o.BinDir, strings.Join(Binaries, ", "))
		}
	}
	if o.Record == nil {
		// Processes of this state directory without a record: it was removed
		// by hand while they ran. Starting another control plane here would
		// run two.
		if procs, err := Processes(o.StateDir); err != nil || len(procs) > 0 {
			return errors.Join(err, fmt.Errorf("processes of %s still run although it records no emulator: %s; stop them with `fargatekit emulator down --state-dir %s`",
				o.StateDir, describe(procs), o.StateDir))
		}
	}
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return fmt.Errorf("making the state directory: %w", err)
	}
	daemon := o.daemonPID()
	if daemon > 0 && o.controlPlaneReady(ctx) {
		o.say("the emulator %q in %s is already running (daemon pid %d)", o.Config.Metadata.Name, o.StateDir, daemon)
		if err := o.startHostProcesses(ctx); err != nil {
			o.say("warning: %v", err)
		}
		return nil
	}
	if daemon == 0 {
		// Before anything starts: a taken port must not leave a control plane behind.
		if err := o.portsFree(); err != nil {
			return err
		}
	}
	if err := o.writeRecord(); err != nil {
		return err
	}
	err := o.startControlPlane(ctx)
	if err == nil {
		err = writeKubeconfig(o.kwokKubeconfig(), o.Kubeconfig(), o.Config.ClusterARN())
	}
	if err == nil && o.daemonPID() == 0 {
		err = o.startDaemon()
	}
	if err == nil {
		// Not a reason to stop the emulator: say so and go on.
		if herr := o.startHostProcesses(ctx); herr != nil {
			o.say("warning: %v", herr)
		}
	}
	if err != nil {
		o.say("up failed: stopping what runs of the emulator")
		if _, stopErr := Down(ctx, o); stopErr != nil {
			err = errors.Join(err, stopErr)
		}
	}
	return err
}

// kwokctl runs kwokctl with the emulator's work directory.
func (o *Options) kwokctl(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(o.BinDir, "kwokctl"), args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+o.kwokDir(), "PATH="+o.BinDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kwokctl %s: %w\n%s", strings.Join(args, " "), err, lastLines(out.String(), 10))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// startControlPlane creates the kwokctl cluster on the first run and starts
// it again afterwards; an unhealthy one is stopped first, so that a killed
// component comes back with the others.
func (o *Options) startControlPlane(ctx context.Context) error {
	name := o.Config.Metadata.Name
	if err := o.writeStages(); err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(o.clusterDir(), "kwok.yaml")); errors.Is(err, os.ErrNotExist) {
		binary, err := binaryVersion(ctx, filepath.Join(o.BinDir, "kube-apiserver"))
		if err != nil {
			return err
		}
		served := EmulatedVersion(binary, o.KubernetesVersion())
		o.say("creating the control plane (Kubernetes %s from %s, serving %s)", binary, o.BinDir, served)
		b := func(n string) string { return filepath.Join(o.BinDir, n) }
		args := []string{"create", "cluster", "--name", name, "--runtime", "binary",
			"--kube-apiserver-binary", b("kube-apiserver"), "--kube-controller-manager-binary", b("kube-controller-manager"),
			"--kube-scheduler-binary", b("kube-scheduler"), "--kwok-controller-binary", b("kwok"), "--etcd-binary", b("etcd"),
			"--kubeconfig", "", "--wait", "60s"}
		ports, extra, err := loopbackArgs()
		if err != nil {
			return err
		}
		// The API server reaches Services through the daemon (package egress).
		if err := maybe.WriteFile(o.egressConfig(), []byte(egress.Config(o.EgressSocket())), 0o600); err != nil {
			return fmt.Errorf("writing the API server's egress configuration: %w", err)
		}
		extra = append(extra, componentArg{component: ComponentAPIServer, key: "egress-selector-config-file", value: o.egressConfig()}, o.stagesArg())
		extra = append(extra, servingArgs(served)...)
		extra = append(extra, o.heartbeatArgs()...)
		args = append(append(args, ports...), extraArgs(extra)...)
		return o.kwokctl(ctx, args...)
	}
	unlock, err := o.lockControlPlane(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if o.controlPlaneReady(ctx) {
		return nil
	}
	o.say("starting the control plane again")
	o.stopControlPlane(ctx)
	return o.startStopped(ctx)
}

// stopControlPlane stops whatever runs of the control plane before it
// starts again, and waits until those processes are gone: kwokctl stop
// kills them without waiting, and a component started at once cannot
// listen on the port its predecessor still holds (on a loaded machine the
// restarted API server exited with "address already in use", and the
// restart waited on it for minutes). kwok-controller goes first, with the
// nodes' leases, so that the one started next takes the nodes at once.
func (o *Options) stopControlPlane(ctx context.Context) {
	if err := o.releaseNodes(ctx); err != nil {
		// Not a reason not to restart: startStopped or the leases' expiry hands them over.
		slog.Warn("restarting the control plane with the nodes' leases held", "err", err)
	}
	var ps []Process
	for _, c := range o.componentPIDs() {
		if c.pid != 0 {
			ps = append(ps, Process{PID: c.pid, Component: c.name})
		}
	}
	_ = o.kwokctl(ctx, "stop", "cluster", "--name", o.Config.Metadata.Name) // whatever runs of it
	waitGone(ctx, ps, 10*time.Second)
}

// lockControlPlane waits until this process alone may restart the control
// plane, and returns what ends that. The daemon (ServeVersion) and up both
// restart it when it does not run: two kwokctl starts at once started each
// component twice, and the one that lost the other's port was the one
// kwokctl kept the pid of, so that up failed.
func (o *Options) lockControlPlane(ctx context.Context) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(o.StateDir, "control-plane.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking the control plane: %w", err)
	}
	for {
		locked, err := tryLock(f)
		switch {
		case locked:
			return func() { _ = f.Close() }, nil // closing it unlocks
		case err != nil:
			_ = f.Close()
			return nil, fmt.Errorf("locking the control plane: %w", err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another process to restart the control plane: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startStopped starts the stopped control plane and waits until it is
// ready. When the nodes' Leases are still those of the kwok-controller
// stopped before (the API server was down: they could not be released),
// the new one is started again once they are deleted, so that it takes the
// nodes at once rather than when they expire. Should that fail, the start
// does not: the Leases expire.
func (o *Options) startStopped(ctx context.Context) error {
	since := time.Now()
	if err := o.startComponents(ctx); err != nil {
		return err
	}
	held, err := o.heldBefore(ctx, since)
	if held {
		o.say("restarting kwok-controller, so that it takes the nodes the stopped one held")
		err = o.releaseNodes(ctx)
	}
	if err != nil {
		slog.Warn("kwok-controller takes the nodes once the stopped one's leases expire", "err", err)
	}
	if !held {
		return nil
	}
	return o.startComponents(ctx)
}

// startComponents starts what is stopped of the control plane and waits
// until it is ready. kwokctl start succeeds whatever becomes of the
// components, and kwok-controller exits when the API server does not
// answer within about 15 s (a loaded machine): what exited is started
// again, twice at most.
func (o *Options) startComponents(ctx context.Context) error {
	if err := o.addStagesArg(); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		if err := o.kwokctl(ctx, "start", "cluster", "--name", o.Config.Metadata.Name, "--wait", "60s"); err != nil {
			return err
		}
		dead, err := o.deadComponents()
		switch {
		case err != nil:
			return err
		case len(dead) == 0:
			return nil
		case attempt == 3:
			return fmt.Errorf("the control plane's %s exited after %d starts: see %s", strings.Join(dead, ", "), attempt, filepath.Join(o.clusterDir(), "logs"))
		}
		o.say("starting the control plane's %s again: it exited", strings.Join(dead, ", "))
		if err := o.forget(dead...); err != nil {
			return err
		}
	}
}

// loopbackArgs are kwokctl flags that make every component listen on
// 127.0.0.1 only (kwokctl binds 0.0.0.0), on ports chosen here: the ports
// of the components, and the arguments that bind the API server,
// controller-manager and scheduler (bind-address), etcd and kwok-controller
// (their URLs) there. Later flags win, so these override kwokctl's.
func loopbackArgs() ([]string, []componentArg, error) {
	ports, err := FreePorts(6)
	if err != nil {
		return nil, nil, err
	}
	etcd, peer, kwok := ports[0], ports[1], ports[2]
	// Every port is one the system gave out now: kwokctl's own picks for the
	// API server, controller-manager and scheduler are the same for two
	// clusters created at once, which then fail each other.
	flags := []string{"--etcd-port", strconv.Itoa(etcd), "--controller-port", strconv.Itoa(kwok),
		"--kube-apiserver-port", strconv.Itoa(ports[3]), "--kube-controller-manager-port", strconv.Itoa(ports[4]),
		"--kube-scheduler-port", strconv.Itoa(ports[5])}
	var args []componentArg
	for _, c := range []string{ComponentAPIServer, ComponentControllerManager, ComponentScheduler} {
		args = append(args, componentArg{component: c, key: "bind-address", value: "127.0.0.1"})
	}
	client, peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcd), fmt.Sprintf("http://127.0.0.1:%d", peer)
	for _, kv := range [][2]string{{"listen-client-urls", client}, {"advertise-client-urls", client}, {"listen-peer-urls", peerURL},
		{"initial-advertise-peer-urls", peerURL}, {"initial-cluster", "node0=" + peerURL}} {
		args = append(args, componentArg{component: ComponentEtcd, key: kv[0], value: kv[1]})
	}
	args = append(args, componentArg{component: ComponentKwok, key: "server-address", value: fmt.Sprintf("127.0.0.1:%d", kwok)},
		// The controllers talk to the API server at 100 requests a second,
		// not their default 20: a Deployment of thousands of replicas comes
		// up in a minute, as on EKS.
		componentArg{component: ComponentControllerManager, key: "kube-api-qps", value: "100"},
		componentArg{component: ComponentControllerManager, key: "kube-api-burst", value: "200"},
		// Every controller but the TTL controller, which annotates each
		// node with the kubelet's cache TTL (nothing KWOK reads), and again
		// every node each time the cluster grows past 100, 500 and 1,000
		// nodes: a Fargate pod is a node, so 2.6 writes per pod in a burst
		// of a thousand. Two flags, not "*,-ttl-controller": kwokctl splits
		// an --extra-args value at its commas.
		componentArg{component: ComponentControllerManager, key: "controllers", value: "*", repeated: true},
		componentArg{component: ComponentControllerManager, key: "controllers", value: "-ttl-controller", repeated: true})
	return flags, args, nil
}

// heartbeatArgs set how long a node's Lease lasts (timings.nodeLease) and,
// in the ratio of Kubernetes' defaults (a 40 s Lease renewed every 10 s, a
// node NotReady after 50 s, looked at every 5 s), how soon the
// controller-manager marks a node whose Lease is not renewed NotReady.
func (o *Options) heartbeatArgs() []componentArg {
	lease := o.Config.Timings.NodeLease.Duration
	return []componentArg{
		{component: ComponentKwok, key: "node-lease-duration-seconds", value: strconv.Itoa(int(lease / time.Second))},
		{component: ComponentControllerManager, key: "node-monitor-grace-period", value: (lease + lease/4).String()},
		{component: ComponentControllerManager, key: "node-monitor-period", value: (lease / 8).String()},
	}
}

// controlPlaneReady reports whether the API server answers /readyz and every
// component of the control plane runs.
func (o *Options) controlPlaneReady(ctx context.Context) bool {
	if dead, err := o.deadComponents(); err != nil || len(dead) > 0 {
		return false
	}
	cmd := exec.CommandContext(ctx, filepath.Join(o.BinDir, "kubectl"), "--kubeconfig", o.kwokKubeconfig(), "get", "--raw", "/readyz", "--request-timeout", "5s")
	out, err := cmd.Output()
	return err == nil && strings.TrimSpace(string(out)) == "ok"
}

// deadComponents are the components of the control plane kwokctl started
// that no longer run (their pid files); an error when it started none.
func (o *Options) deadComponents() ([]string, error) {
	components := o.componentPIDs()
	if len(components) == 0 {
		return nil, fmt.Errorf("no pid files in %s", filepath.Join(o.clusterDir(), "pids"))
	}
	var dead []string
	for _, c := range components {
		if c.pid == 0 || !alive(c.pid) {
			dead = append(dead, c.name)
		}
	}
	return dead, nil
}

// componentPID is a component of the control plane kwokctl started, and
// the pid of its pid file (0 when unreadable).
type componentPID struct {
	name string
	pid  int
}

// forget removes the pid files of components that no longer run, as
// kwokctl stop does: kwokctl start takes a pid that still answers a signal
// for a component that runs, and a process that exited answers until its
// parent reaps it (here, an init that did not: a kwok-controller stopped
// was then never started again).
func (o *Options) forget(components ...string) error {
	for _, c := range components {
		if err := os.Remove(filepath.Join(o.clusterDir(), "pids", c+".pid")); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing the pid file of the stopped %s: %w", c, err)
		}
	}
	return nil
}

// componentPIDs reads kwokctl's pid files, in the order of their names.
func (o *Options) componentPIDs() []componentPID {
	files, _ := filepath.Glob(filepath.Join(o.clusterDir(), "pids", "*.pid"))
	out := make([]componentPID, 0, len(files))
	for _, f := range files {
		out = append(out, componentPID{strings.TrimSuffix(filepath.Base(f), ".pid"), readPID(f)})
	}
	return out
}

// portsFree checks that the daemon's ports can be listened on.
func (o *Options) portsFree() error {
	for _, port := range []int{o.EKSPort, o.WebhookPort} {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			return fmt.Errorf("port %d is in use: choose others with --eks-port and --webhook-port: %w", port, err)
		}
		_ = ln.Close()
	}
	return nil
}

// startDaemon starts `fargatekit emulator serve` in its own session and
// waits until the EKS API answers.
func (o *Options) startDaemon() error {
	// At info, its log says when it restarts the control plane, and why.
	args := []string{"emulator", "serve", "--log-level", "info", "--state-dir", o.StateDir,
		"--eks-port", strconv.Itoa(o.EKSPort), "--webhook-port", strconv.Itoa(o.WebhookPort)}
	if o.SettingsPath != "" {
		args = append(args, "--settings", o.SettingsPath)
	}
	started := func(pid int) error {
		if err := maybe.WriteFile(o.pidFile(), []byte(strconv.Itoa(pid)), 0o600); err != nil {
			return fmt.Errorf("writing the daemon pid file: %w", err)
		}
		o.say("starting the EKS API, Fargate webhook and fargate-scheduler (pid %d)", pid)
		return nil
	}
	return StartDetached(context.Background(), "the emulator daemon", o.Self, args, nil, o.logFile(), started, o.daemonAnswers, 90*time.Second)
}

// daemonAnswers reports whether this emulator's EKS API answers on its
// port: ListClusters names the cluster. Any other server that took the
// port meanwhile is not mistaken for it; the daemon then stops, saying
// that it cannot listen.
func (o *Options) daemonAnswers() bool {
	req, err := http.NewRequest(http.MethodGet, o.EKSEndpoint()+"/clusters", nil)
	if err != nil || Sign(req, "eks", o.Config.Metadata.Region) != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer func() { _ = resp.Body.Close() }()
	var list struct {
		Clusters []string `json:"clusters"`
	}
	return resp.StatusCode == http.StatusOK &&
		json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&list) == nil &&
		slices.Contains(list.Clusters, o.Config.Metadata.Name)
}

// Down stops every process of the emulator: the control plane through
// kwokctl, then whatever still runs of the state directory (daemon
// included) with SIGTERM, and SIGKILL after a grace period. It returns the
// processes that ran; it fails when one is still alive. The state directory
// keeps everything for the next Up.
func Down(ctx context.Context, o *Options) ([]Process, error) {
	ran, err := Processes(o.StateDir)
	if err != nil {
		return nil, err
	}
	if len(ran) == 0 {
		_ = os.Remove(o.pidFile())
		return nil, nil
	}
	// The daemon first: it may restart the control plane (ServeVersion).
	if slices.ContainsFunc(ran, func(p Process) bool { return p.Component == ComponentDaemon }) {
		if _, err := StopComponent(o.StateDir, ComponentDaemon, 10*time.Second); err != nil {
			o.say("warning: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(o.clusterDir(), "kwok.yaml")); err == nil && slices.ContainsFunc(ran, isControlPlane) {
		o.say("stopping the control plane")
		stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		// So that the next up's kwok-controller takes the nodes at once.
		if err := o.releaseNodes(stopCtx); err != nil {
			o.say("warning: %v", err)
		}
		if err := o.kwokctl(stopCtx, "stop", "cluster", "--name", o.Config.Metadata.Name); err != nil {
			o.say("kwokctl could not stop the control plane, stopping its processes: %v", err)
		}
		cancel()
	}
	rest, err := Processes(o.StateDir)
	if err != nil {
		return ran, err
	}
	if len(rest) > 0 {
		o.say("stopping %s", describe(rest))
	}
	left := terminate(rest, 10*time.Second)
	_ = os.Remove(o.pidFile())
	if len(left) > 0 {
		return ran, fmt.Errorf("still running after SIGKILL: %s", describe(left))
	}
	return ran, nil
}

// Delete stops the emulator and removes its state directory.
func Delete(ctx context.Context, o *Options) ([]Process, error) {
	ran, err := Down(ctx, o)
	if err != nil {
		return ran, fmt.Errorf("%w: the state directory %s stays", err, o.StateDir)
	}
	if err := os.RemoveAll(o.StateDir); err != nil {
		return ran, fmt.Errorf("removing the state directory: %w", err)
	}
	return ran, nil
}

// Status is what runs of an emulator, told by its processes.
type Status struct {
	// Recorded is false when the state directory records no emulator: any
	// process still running of it is an orphan.
	Recorded bool
	// Running are the processes of the state directory.
	Running []Process
	// Stopped are the components with no process.
	Stopped []string
}

// GetStatus tells what runs of the emulator, from its processes.
func GetStatus(o *Options) (Status, error) {
	procs, err := Processes(o.StateDir)
	if err != nil {
		return Status{}, err
	}
	st := Status{Recorded: o.Record != nil, Running: procs}
	for _, c := range Components {
		if !slices.ContainsFunc(procs, func(p Process) bool { return p.Component == c }) {
			st.Stopped = append(st.Stopped, c)
		}
	}
	return st, nil
}

// AllRunning reports whether every component runs.
func (s Status) AllRunning() bool { return s.Recorded && len(s.Stopped) == 0 }

func isControlPlane(p Process) bool {
	return p.Component != ComponentDaemon && p.Component != ComponentSpread && p.Component != ComponentWatch
}

// describe lists processes for a message: "etcd (pid 12, ports 2379), ...".
func describe(ps []Process) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

// daemonPID returns the pid of the running daemon, 0 when none runs. The pid
// file is trusted only when that process is a fargatekit emulator daemon.
func (o *Options) daemonPID() int {
	pid := readPID(o.pidFile())
	if pid == 0 || !alive(pid) {
		return 0
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("emulator\x00serve")) {
		return 0 // a pid reused by another process
	}
	return pid
}

func readPID(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0
	}
	return pid
}

func alive(pid int) bool {
	if signalProcess(pid, 0) != nil {
		return false
	}
	// A zombie is not alive.
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(fields) == 0 || fields[0] != "Z"
}

// writeKubeconfig writes the control plane's kubeconfig to to, its cluster,
// user and context named by the cluster's ARN as `aws eks update-kubeconfig`
// names them, so that the cluster's name and region can be read from it.
func writeKubeconfig(from, to, arn string) error {
	cfg, err := clientcmd.LoadFromFile(from)
	if err != nil {
		return fmt.Errorf("reading the control plane's kubeconfig: %w", err)
	}
	ctx := cfg.Contexts[cfg.CurrentContext]
	if ctx == nil {
		return fmt.Errorf("reading the control plane's kubeconfig %s: it has no current context", from)
	}
	out := clientcmdapi.NewConfig()
	out.Clusters[arn] = cfg.Clusters[ctx.Cluster]
	out.AuthInfos[arn] = cfg.AuthInfos[ctx.AuthInfo]
	out.Contexts[arn] = &clientcmdapi.Context{Cluster: arn, AuthInfo: arn}
	out.CurrentContext = arn
	if err := clientcmd.WriteToFile(*out, to); err != nil {
		return fmt.Errorf("writing the kubeconfig: %w", err)
	}
	return os.Chmod(to, 0o600)
}
