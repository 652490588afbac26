//go:build unix

package emulator

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// supported: the emulator runs on Linux and macOS.
const supported = true

// signalProcess sends sig to the process pid; sig 0 only asks whether it exists.
func signalProcess(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// detach starts cmd in a session of its own, so that it outlives the command
// that started it and its terminal.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// tryLock takes an exclusive lock on f, held until f is closed; false when
// another open file holds it.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

// lock takes an exclusive lock on f, held until f is closed, waiting for
// another open file to let it go.
func lock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
