//go:build !unix

package process

import (
	"os"
	"os/exec"
)

// This fallback only exists so the package compiles on non-unix systems.
// There are no process groups here: only the leader is ever killed, so
// processes it started can outlive a timeout.

// setGroup does nothing on this platform.
func setGroup(*exec.Cmd) {}

// terminateGroup kills the leader: there is no SIGTERM here.
func terminateGroup(p *os.Process) {
	_ = p.Kill()
}

// killGroup kills the leader; errors (already exited) are ignored.
func killGroup(p *os.Process) {
	_ = p.Kill()
}

// groupAlive always reports false: group membership cannot be queried here.
func groupAlive(*os.Process) bool {
	return false
}

// signalName always returns "": there are no signals here.
func signalName(*os.ProcessState) string {
	return ""
}
