package state

import (
	"fmt"
	"path/filepath"
	"sync"
)

// Lock holds the run for this process: it takes an exclusive lock on
// runs/<run-id>/.lock without waiting, and returns an error wrapping
// ErrLocked when someone else holds it. The lock is released by unlock or
// by the death of the process, however it dies; calling unlock again does
// nothing more. Each Lock opens the file anew, so a second Lock of the same
// run fails even within one process.
func (d *Dir) Lock(runID string) (unlock func() error, err error) {
	if err := ValidRunID(runID); err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	run := runDir(runID)
	if err := d.mkdirs(run); err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	release, err := d.lockFile(filepath.Join(run, lockFile))
	if err != nil {
		return nil, fmt.Errorf("lock run %q: %w", runID, err)
	}
	var once sync.Once
	var uerr error
	return func() error {
		once.Do(func() {
			if err := release(); err != nil {
				uerr = fmt.Errorf("unlock run %q: %w", runID, err)
			}
		})
		return uerr
	}, nil
}
