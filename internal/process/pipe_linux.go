package process

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// pipe returns a pipe whose end this process keeps (the read end when
// parentReads, else the write end) is non-blocking and read or written
// through the runtime's poller, while the child's end stays a plain
// blocking descriptor, never registered with the poller: os.Pipe makes
// both ends non-blocking and pollable, and the child's end then costs six
// more system calls, to make it blocking again for the child and to
// unregister it when it is closed.
func pipe(parentReads bool) (r, w *os.File, err error) {
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	mine := fds[1]
	if parentReads {
		mine = fds[0]
	}
	if err := unix.SetNonblock(mine, true); err != nil {
		unix.Close(fds[0])
		unix.Close(fds[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// devNull is the null device, opened once and handed to every child whose
// Spec.Stdin is nil, instead of os/exec opening it for each child.
var devNull = sync.OnceValue(func() *os.File {
	f, err := os.Open(os.DevNull)
	if err != nil {
		return nil // os/exec opens it itself, and reports why it cannot
	}
	return f
})
