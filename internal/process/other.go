//go:build !linux

package process

import (
	"errors"
	"os"
	"os/exec"
)

// setup does nothing here: there is no subreaper, no dumpable flag and no
// per-thread capability set to manage.
func setup() error { return nil }

// spawn starts cmd on whatever thread calls it.
func spawn(cmd *exec.Cmd) error {
	return cmd.Start()
}

// sweep finds nothing to kill here: descendants cannot be listed.
func sweep(map[int]bool, bool) error { return nil }

// awaitExit cannot wait for an exit without reaping here: it reports false,
// and the caller reaps first, signalling the group afterwards as best it
// can (the pid may then be reused before the group is signalled).
func awaitExit(*os.Process) bool { return false }

// Confined is true here: there are no per-thread capability sets to drop.
func Confined() bool { return true }

// Exec is not needed here (see Confined) and fails.
func Exec([]string, []string) error {
	return errors.New("process: confinement by re-execution needs Linux")
}
