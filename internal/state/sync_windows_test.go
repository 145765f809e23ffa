//go:build windows

package state_test

import "time"

// syncAll does nothing on Windows (see the Unix version).
func syncAll() {}

// cpuTimes returns zeros on Windows (see the Unix version).
func cpuTimes() (self, children time.Duration) { return 0, 0 }
