package emulator

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"
	"time"
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
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
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

// FreePorts returns n loopback ports the system gives out now, all
// different.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		ports[i] = ln.Addr().(*net.TCPAddr).Port
		defer func() { _ = ln.Close() }()
	}
	return ports, nil
}
