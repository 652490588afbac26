//go:build !unix

package emulator

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// supported: the emulator runs on Linux and macOS, not here (Windows); the
// rest of fargatekit does.
const supported = false

func signalProcess(int, syscall.Signal) error { return errors.ErrUnsupported }

func detach(*exec.Cmd) {}

func tryLock(*os.File) (bool, error) { return true, nil }

func lock(*os.File) error { return nil }
