//go:build unix

package emulator

import (
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
