//go:build !linux

package process

import "os/exec"

// setup does nothing here: there is no subreaper, no dumpable flag and no
// per-thread capability set to manage.
func setup() error { return nil }

// spawn starts cmd on whatever thread calls it.
func spawn(cmd *exec.Cmd) error {
	return cmd.Start()
}

// sweep finds nothing to kill here: descendants cannot be listed.
func sweep(map[int]bool, bool) error { return nil }
