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
func awaitExit(p *os.Process) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			return err == nil
		}
	}
}
