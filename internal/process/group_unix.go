//go:build unix

package process

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// setGroup makes the child the leader of a new session, and so of a new
// process group, whose ids are its pid: it and everything it spawns can be
// signalled together, and nothing it spawns can ever join this process's
// session again, which is how Sweep tells them from other children.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// terminateGroup asks every process of p's group to stop (SIGTERM).
func terminateGroup(p *os.Process) {
	signalGroup(p, syscall.SIGTERM)
}

// killGroup kills every process of p's group (SIGKILL).
func killGroup(p *os.Process) {
	signalGroup(p, syscall.SIGKILL)
}

// signalGroup sends sig to the process group led by p. Errors are ignored:
// ESRCH means the group is already gone, and EPERM can only arise for a
// member that changed its credentials, which nothing here could fix.
func signalGroup(p *os.Process, sig syscall.Signal) {
	if groupSignalled != nil {
		groupSignalled(p.Pid, sig)
	}
	_ = syscall.Kill(-p.Pid, sig)
}

// groupSignalled, when a test sets it, is called before every signal sent
// to a group, with the group's id.
var groupSignalled func(pgid int, sig syscall.Signal)

// groupAlive reports whether any process of p's group is still running.
// On Linux zombies do not count (see liveMembers); elsewhere they do, until
// their new parent reaps them.
func groupAlive(p *os.Process) bool {
	if alive, ok := liveMembers(p.Pid); ok {
		return alive
	}
	return !errors.Is(syscall.Kill(-p.Pid, 0), syscall.ESRCH)
}

// signalName returns the name of the signal that ended the process
// ("killed", "terminated", ...), or "" when it exited normally.
func signalName(ps *os.ProcessState) string {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	return ws.Signal().String()
}
