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

// killGroup kills what is left of the worker's process group after the
// worker itself has exited: its children, which would otherwise outlive
// the run (a shell's `cmd &`, a multiprocessing pool). The group's id is
// the worker's pid, which the kernel does not hand to a new process while
// the group has members, so the signal reaches only the worker's own; an
// empty group is an error ignored here.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// killProcess kills the worker's process group.
func killProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Process.Kill()
}
