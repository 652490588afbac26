package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/renameio/v2/maybe"
)

// StartDetached starts self with args (and env added to this process's) in
// a session of its own, so that it outlives the command that starts it,
// with its output appended to logFile. onStart hears its pid once it runs.
// It then waits until ready reports true, and fails, quoting the end of
// the log, when the process exits first or timeout passes. what names the
// process in errors.
func StartDetached(ctx context.Context, what, self string, args, env []string, logFile string,
	onStart func(pid int) error, ready func() bool, timeout time.Duration) error {
	log, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("opening the log of %s: %w", what, err)
	}
	defer func() { _ = log.Close() }()
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), env...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", what, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if err := onStart(cmd.Process.Pid); err != nil {
		return err
	}
	logEnd := func() string {
		data, _ := os.ReadFile(logFile)
		return lastLines(string(data), 15)
	}
	deadline := time.Now().Add(timeout)
	for !ready() {
		select {
		case err := <-exited:
			return fmt.Errorf("%s stopped (%w); its log (%s) ends with:\n%s", what, err, logFile, logEnd())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not ready after %s; its log (%s) ends with:\n%s", what, timeout, logFile, logEnd())
		}
	}
	return nil
}

// FreePorts returns n different loopback ports free now, outside the
// system's range of ephemeral ports: a component listens on its port again
// when it restarts (a new version of the control plane, `emulator up` after
// `down`), and in between any outgoing connection may be given that port,
// and hold it for as long as it lives (then the component cannot listen).
func FreePorts(n int) ([]int, error) {
	pool := portPool(ephemeralPorts())
	size := 0
	for _, r := range pool {
		size += r[1] - r[0] + 1
	}
	ports := make([]int, 0, n)
	for tries := 0; len(ports) < n && tries < 100*n; tries++ {
		port := 0 // the system's pick, when the ephemeral range leaves no room
		if size > 0 {
			i := rand.IntN(size)
			for _, r := range pool {
				if i < r[1]-r[0]+1 {
					port = r[0] + i
					break
				}
				i -= r[1] - r[0] + 1
			}
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // taken
		}
		port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if !slices.Contains(ports, port) {
			ports = append(ports, port)
		}
	}
	if len(ports) < n {
		return nil, fmt.Errorf("finding %d free loopback ports: found %d", n, len(ports))
	}
	return ports, nil
}

// ephemeralPorts is the system's range of ephemeral ports: Linux's
// ip_local_port_range, else 32768-65535 (which holds Linux's default
// range and the BSDs' and macOS's, 49152-65535).
func ephemeralPorts() (lo, hi int) {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768, 65535
	}
	if _, err := fmt.Sscan(string(data), &lo, &hi); err != nil || lo > hi {
		return 32768, 65535
	}
	return lo, hi
}

// minPort is the lowest port FreePorts gives: below it are the ports of
// services the host may run (kubelet's 10250, and many more).
const minPort = 20000

// portPool is where FreePorts picks ports, given the ephemeral range: the
// inclusive ranges from minPort to 65535 outside it.
func portPool(lo, hi int) [][2]int {
	var pool [][2]int
	if lo > minPort {
		pool = append(pool, [2]int{minPort, lo - 1})
	}
	if hi < 65535 {
		pool = append(pool, [2]int{max(hi+1, minPort), 65535})
	}
	return pool
}

// HostProcess is a process of the host that stands in for pods of the
// cluster (KWOK runs no container), as `spread install --emulator` starts
// one. It is recorded in the state directory, so that `emulator up` starts
// it again after `emulator down`.
type HostProcess struct {
	// What names it in messages; Component is its directory in the state
	// directory and its component in Processes.
	What, Component string
	Args, Env       []string
	// Log is its log file; ReadyURL answers 200 once it serves.
	Log, ReadyURL string
}

func hostProcessFile(stateDir, component string) string {
	return filepath.Join(stateDir, component, "host-process.json")
}

// Start starts the host process with self (the fargatekit binary) and
// waits until it is ready; it returns its pid.
func (h HostProcess) Start(ctx context.Context, self string) (int, error) {
	probe := &http.Client{Timeout: 2 * time.Second}
	ready := func() bool {
		resp, err := probe.Get(h.ReadyURL)
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	var pid int
	started := func(p int) error { pid = p; return nil }
	err := StartDetached(ctx, h.What, self, h.Args, h.Env, h.Log, started, ready, 30*time.Second)
	return pid, err
}

// SaveHostProcess records h in stateDir for `emulator up`.
func SaveHostProcess(stateDir string, h HostProcess) error {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if err := maybe.WriteFile(hostProcessFile(stateDir, h.Component), data, 0o600); err != nil {
		return fmt.Errorf("recording %s: %w", h.What, err)
	}
	return nil
}

// ForgetHostProcess removes the record of a component's host process.
func ForgetHostProcess(stateDir, component string) error {
	if err := os.Remove(hostProcessFile(stateDir, component)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// startHostProcesses starts the recorded host processes that do not run.
func (o *Options) startHostProcesses(ctx context.Context) error {
	files, err := filepath.Glob(hostProcessFile(o.StateDir, "*"))
	if err != nil || len(files) == 0 {
		return err
	}
	running, err := Processes(o.StateDir)
	if err != nil {
		return err
	}
	var errs []error
	for _, f := range files {
		var h HostProcess
		data, err := os.ReadFile(f)
		if err == nil {
			err = json.Unmarshal(data, &h)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", f, err))
			continue
		}
		if slices.ContainsFunc(running, func(p Process) bool { return p.Component == h.Component }) {
			continue
		}
		pid, err := h.Start(ctx, o.Self)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		o.say("starting %s again (pid %d)", h.What, pid)
	}
	return errors.Join(errs...)
}
