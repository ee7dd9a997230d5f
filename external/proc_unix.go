//go:build unix

package external

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the worker in a process group of its own, so
// that killing it also ends what it started (a shell's child, a pool of
// its own).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcess kills the worker's process group.
func killProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
