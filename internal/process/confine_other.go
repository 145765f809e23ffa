//go:build !linux

package process

import "errors"

// Confined is true here: there are no per-thread capability sets to drop.
func Confined() bool { return true }

// Exec is not needed here (see Confined) and fails.
func Exec([]string, []string) error {
	return errors.New("process: confinement by re-execution needs Linux")
}
