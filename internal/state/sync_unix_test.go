//go:build unix

package state_test

import (
	"syscall"
	"time"
)

// syncAll writes every dirty page of the machine to disk, so that what a
// benchmark's setup wrote is not flushed by the first measured fsync.
func syncAll() { syscall.Sync() }

// cpuTimes returns the CPU time (user and system) this process and its
// waited-for children have used so far.
func cpuTimes() (self, children time.Duration) {
	var s, c syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &s) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &c) != nil {
		return 0, 0
	}
	cpu := func(r *syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return cpu(&s), cpu(&c)
}
