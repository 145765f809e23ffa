package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Reading what agents can touch. An agent, or a check running its code,
// can put a FIFO, a socket or a device where a file or a directory was,
// at any moment. open(2) of a FIFO blocks until a writer comes, and a
// blocked system call ignores every context and signal handler: a plain
// os.Open of such a path hangs the run. So every file in the loop root is
// opened here, through an [os.Root], non-blocking; the opened file is
// checked to be what was expected; and reads are bounded.

// ErrNotRegular reports a path that is not a regular file where one was
// expected: a FIFO, socket, device or directory.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge reports a file larger than the caller's limit.
var ErrTooLarge = errors.New("larger than the limit")

// OpenFile opens the regular file name in r for reading, and returns it
// with its status. It never blocks in open(2): anything but a regular file
// is closed again and refused with an error wrapping ErrNotRegular.
func OpenFile(r *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ENXIO) { // a socket
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// ListDir lists the directory at the path name, which lies outside any
// Root (a git directory, say), failing at once, without blocking, if a FIFO
// or anything else but a directory is there.
func ListDir(name string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// ReadFile reads the regular file name in r, at most limit bytes: a larger
// file is an error wrapping ErrTooLarge. Like OpenFile it refuses anything
// but a regular file, and never blocks opening it.
func ReadFile(r *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := OpenFile(r, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, tooLarge(name, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit { // it grew since the stat
		return nil, tooLarge(name, limit)
	}
	return data, nil
}

func tooLarge(name string, limit int64) error {
	return &fs.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)}
}

// OpenDir opens the directory name in r as a root of its own. Unlike
// r.OpenRoot, it never blocks when name is a FIFO: the path is resolved
// through name as a directory, which a FIFO is not (ENOTDIR).
func OpenDir(r *os.Root, name string) (*os.Root, error) {
	return r.OpenRoot(name + string(os.PathSeparator) + ".")
}

// OpenRoot is os.OpenRoot for a directory an agent may have replaced: like
// OpenDir, it never blocks on a FIFO.
func OpenRoot(dir string) (*os.Root, error) {
	return os.OpenRoot(dir + string(os.PathSeparator) + ".")
}
