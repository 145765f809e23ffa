//go:build !linux

package process

import "os"

// pipe returns a pipe (os.Pipe); parentReads says which end this process
// keeps, which matters only on Linux.
func pipe(parentReads bool) (r, w *os.File, err error) {
	return os.Pipe()
}

// devNull is nil here: os/exec opens the null device for each child.
func devNull() *os.File { return nil }
