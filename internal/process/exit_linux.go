package process

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit blocks until p has exited and leaves it unreaped, a zombie:
// until cmd.Wait reaps it, its pid — and so the id of the group it leads —
// cannot be given to another process, and the group can be signalled
// without hitting a stranger. It reports false when it could not wait
// (the caller then reaps first).
//
// It waits through the runtime's poller where it can (pollExit): a thread
// blocked in waitid(2) keeps its processor from other goroutines until
// the runtime notices, which with ten children starting at once on two
// processors held the next starts back by milliseconds.
func awaitExit(p *os.Process) bool {
	if exited, polled := pollExit(p.Pid); polled {
		return exited
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}

// pollExit waits for the child pid to exit, without reaping it, through
// a pidfd, which the poller reports readable once the process has exited.
// polled is false when that cannot be done here (no pidfds before Linux
// 5.3, or a pidfd the poller does not take): the caller then blocks.
func pollExit(pid int) (exited, polled bool) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return false, false
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		var info unix.Siginfo // Signo stays 0 while the child runs
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOWAIT|unix.WNOHANG, nil)
		if errors.Is(werr, unix.EINTR) || errors.Is(werr, unix.EAGAIN) {
			return false // not yet: wait for the pidfd to be readable
		}
		return werr != nil || info.Signo != 0
	})
	if err != nil {
		return false, false // not pollable: the caller blocks instead
	}
	return werr == nil, true
}
