//go:build !unix

package external

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// killGroup does nothing: without process groups only the worker itself
// is ended (killProcess).
func killGroup(*exec.Cmd) {}

func killProcess(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
