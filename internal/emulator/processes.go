package emulator

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The components of an emulator, in the order they are reported: the
// control plane kwokctl runs, and the daemon (`fargatekit emulator serve`).
const (
	ComponentEtcd              = "etcd"
	ComponentAPIServer         = "kube-apiserver"
	ComponentControllerManager = "kube-controller-manager"
	ComponentScheduler         = "kube-scheduler"
	ComponentKwok              = "kwok-controller"
	ComponentDaemon            = "daemon"
)

// Components lists every component an emulator runs.
var Components = []string{ComponentEtcd, ComponentAPIServer, ComponentControllerManager, ComponentScheduler, ComponentKwok, ComponentDaemon}

// ComponentSpread is `fargatekit spread serve` when `spread install
// --emulator` started it, and ComponentWatch `fargatekit watch serve` when
// `watch install --emulator` did: optional, listed after the components,
// stopped with them.
const (
	ComponentSpread = "spread"
	ComponentWatch  = "watch"
)

// order ranks a component in reports.
func order(c string) int {
	if i := slices.Index(Components, c); i >= 0 {
		return i
	}
	return len(Components)
}

// Process is a running process of an emulator, found by what it runs with:
// every component names files of the emulator's state directory in its
// arguments (kwokctl runs the control plane from there, the daemon gets
// --state-dir), so the processes of a state directory are found even when
// its pid files are gone.
type Process struct {
	PID       int
	Component string
	// Ports are the TCP ports it listens on.
	Ports []int
}

func (p Process) String() string {
	s := fmt.Sprintf("%s (pid %d", p.Component, p.PID)
	if len(p.Ports) > 0 {
		ports := make([]string, len(p.Ports))
		for i, port := range p.Ports {
			ports[i] = strconv.Itoa(port)
		}
		s += ", ports " + strings.Join(ports, ", ")
	}
	return s + ")"
}

// Processes returns the running processes of the emulator whose state is
// in dir, in the order of Components. It reads /proc.
func Processes(dir string) ([]Process, error) {
	dir = filepath.Clean(dir)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	listening := listeningInodes()
	var out []Process
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !alive(pid) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or not ours to read
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		c := component(args)
		if c == "" || !mentions(args, dir) {
			continue
		}
		out = append(out, Process{PID: pid, Component: c, Ports: portsOf(pid, listening)})
	}
	slices.SortFunc(out, func(a, b Process) int {
		if d := order(a.Component) - order(b.Component); d != 0 {
			return d
		}
		return a.PID - b.PID
	})
	return out, nil
}

// component names what a command line runs; "" for anything else (an
// editor or a `tail` of the daemon's log is no component, nor a binary of
// the control plane asked its `--version`, as the daemon does).
func component(args []string) string {
	if len(args) == 0 || (len(args) == 2 && args[1] == "--version") {
		return ""
	}
	base := filepath.Base(args[0])
	if slices.Contains(Components, base) && base != ComponentDaemon {
		return base
	}
	for i := 1; i+1 < len(args); i++ {
		switch {
		case args[i] == "emulator" && args[i+1] == "serve":
			return ComponentDaemon
		case args[i] == "spread" && args[i+1] == "serve":
			return ComponentSpread
		case args[i] == "watch" && args[i+1] == "serve":
			return ComponentWatch
		}
	}
	return ""
}

// mentions reports whether an argument is dir, or a path below it, on its
// own or as the value of a --flag=value.
func mentions(args []string, dir string) bool {
	for _, a := range args {
		if i := strings.IndexByte(a, '='); i >= 0 && strings.HasPrefix(a, "-") {
			a = a[i+1:]
		}
		if a == dir || strings.HasPrefix(a, dir+"/") {
			return true
		}
	}
	return false
}

// listeningInodes maps the socket inodes of listening TCP sockets to their ports.
func listeningInodes() map[string]int {
	out := map[string]int{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, ok := strings.Cut(fields[1], ":")
			port, err := strconv.ParseInt(hexPort, 16, 32)
			if ok && err == nil {
				out[fields[9]] = int(port)
			}
		}
	}
	return out
}

// portsOf returns the ports a process listens on.
func portsOf(pid int, listening map[string]int) []int {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return nil
	}
	var out []int
	for _, fd := range fds {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if port, ok := listening[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")]; ok && !slices.Contains(out, port) {
			out = append(out, port)
		}
	}
	slices.Sort(out)
	return out
}

// terminate stops processes: SIGTERM, then SIGKILL for those still alive
// after grace. It returns the processes still alive at the end.
func terminate(ps []Process, grace time.Duration) []Process {
	signal := func(sig syscall.Signal) {
		for _, p := range ps {
			_ = signalProcess(p.PID, sig)
		}
	}
	signal(syscall.SIGTERM)
	if left := waitGone(context.Background(), ps, grace); len(left) > 0 {
		ps = left
		signal(syscall.SIGKILL)
		return waitGone(context.Background(), ps, 5*time.Second)
	}
	return nil
}

// waitGone waits until none of ps is alive, for at most timeout (a pid the
// system gave to a new process would otherwise hold it for ever), or until
// ctx ends, and returns those still alive.
func waitGone(ctx context.Context, ps []Process, timeout time.Duration) []Process {
	deadline := time.Now().Add(timeout)
	for {
		left := slices.DeleteFunc(slices.Clone(ps), func(p Process) bool { return !alive(p.PID) })
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		select {
		case <-ctx.Done():
			return left
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// StopComponent stops the processes of one component of the emulator in
// dir (SIGTERM, then SIGKILL after grace) and returns those that ran.
func StopComponent(dir, component string, grace time.Duration) ([]Process, error) {
	ps, err := Processes(dir)
	if err != nil {
		return nil, err
	}
	ps = slices.DeleteFunc(ps, func(p Process) bool { return p.Component != component })
	if left := terminate(ps, grace); len(left) > 0 {
		return ps, fmt.Errorf("still running after SIGKILL: %s", describe(left))
	}
	return ps, nil
}
