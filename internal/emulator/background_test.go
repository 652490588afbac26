package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fargatekit/fargatekit/internal/clusterconfig"
)

func TestPortPool(t *testing.T) {
	for _, tc := range []struct {
		lo, hi int
		want   [][2]int
	}{
		{32768, 60999, [][2]int{{20000, 32767}, {61000, 65535}}}, // Linux's default
		{49152, 65535, [][2]int{{20000, 49151}}},                 // IANA's, macOS's
		{10000, 15000, [][2]int{{20000, 65535}}},
		{10000, 65535, nil}, // no room: the system picks
		{1024, 65535, nil},
	} {
		if diff := cmp.Diff(tc.want, portPool(tc.lo, tc.hi)); diff != "" {
			t.Errorf("portPool(%d, %d) (-want +got):\n%s", tc.lo, tc.hi, diff)
		}
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := ephemeralPorts()
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] || p < minPort || (p >= lo && p <= hi) {
			t.Errorf("port %d: a duplicate, below %d or in the ephemeral range %d-%d (%v)", p, minPort, lo, hi, ports)
		}
		seen[p] = true
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			t.Errorf("port %d is not free: %v", p, err)
			continue
		}
		_ = ln.Close()
	}
}

// TestDeadComponents: a component whose pid file names no live process is
// dead (kwok-controller after giving up on a slow API server), and so is
// one whose process exited but was not reaped (a zombie, which kwokctl
// start takes for running); one whose process runs is not. forget removes
// the pid files of the dead ones, so that kwokctl start starts them again.
func TestDeadComponents(t *testing.T) {
	if !supported {
		t.Skip("the emulator runs on Linux and macOS")
	}
	o := &Options{StateDir: t.TempDir(), Config: clusterconfig.Default()}
	if _, err := o.deadComponents(); err == nil {
		t.Error("no pid files: no error")
	}
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = zombie.Wait() })
	pids := filepath.Join(o.clusterDir(), "pids")
	if err := os.MkdirAll(pids, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, pid := range map[string]int{"kube-apiserver": os.Getpid(), "kwok-controller": exited.Process.Pid, "kube-scheduler": zombie.Process.Pid} {
		if err := os.WriteFile(filepath.Join(pids, name+".pid"), []byte(fmt.Sprint(pid)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var dead []string
	deadline := time.Now().Add(10 * time.Second) // until the zombie has exited
	for {
		var err error
		if dead, err = o.deadComponents(); err != nil {
			t.Fatal(err)
		}
		if len(dead) == 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if want := []string{"kube-scheduler", "kwok-controller"}; !slices.Equal(dead, want) {
		t.Errorf("dead components: %v; want %v", dead, want)
	}
	if err := o.forget(dead...); err != nil {
		t.Fatal(err)
	}
	if left := o.componentPIDs(); len(left) != 1 || left[0].name != "kube-apiserver" {
		t.Errorf("pid files after forgetting the dead: %v; want kube-apiserver's alone", left)
	}
	if err := o.forget("etcd"); err != nil {
		t.Errorf("forgetting a component with no pid file: %v", err)
	}
}

// TestLockControlPlane: while one holds the control plane's lock, another
// (the daemon, or a second up: another open file, as in another process)
// waits for it, and gives up when its context ends; once the first lets
// go, the other takes it.
func TestLockControlPlane(t *testing.T) {
	if !supported {
		t.Skip("the emulator runs on Linux and macOS")
	}
	o := &Options{StateDir: t.TempDir(), Config: clusterconfig.Default()}
	unlock, err := o.lockControlPlane(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := o.lockControlPlane(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a second lock while the first is held: %v; want it to wait until its deadline", err)
	}
	unlock()
	second, err := o.lockControlPlane(context.Background())
	if err != nil {
		t.Fatalf("the lock once released: %v", err)
	}
	second()
}

// TestWaitGone: waitGone returns once the processes have exited (a zombie
// has: it holds no port), and at its timeout when one has not.
func TestWaitGone(t *testing.T) {
	if !supported {
		t.Skip("the emulator runs on Linux and macOS")
	}
	sleeper := func() *exec.Cmd {
		cmd := exec.Command("sleep", "30")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	killed := sleeper()
	time.AfterFunc(300*time.Millisecond, func() { _ = killed.Process.Kill() }) // not waited for: a zombie
	start := time.Now()
	waitGone(context.Background(), []Process{{PID: killed.Process.Pid}}, 10*time.Second)
	if took := time.Since(start); took < 250*time.Millisecond || took > 5*time.Second || alive(killed.Process.Pid) {
		t.Errorf("waitGone returned after %s, the process alive: %v; want it to wait for the kill at 300ms", took, alive(killed.Process.Pid))
	}
	running := sleeper()
	start = time.Now()
	waitGone(context.Background(), []Process{{PID: running.Process.Pid}}, 200*time.Millisecond)
	if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
		t.Errorf("waitGone on a running process returned after %s; want its timeout, 200ms", took)
	}
}
