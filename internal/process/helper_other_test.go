//go:build !linux

package process

// helperMain: the test binary is never run as a helper program off Linux.
func helperMain() (code int, ok bool) { return 0, false }
