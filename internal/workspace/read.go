package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Reading what agents can touch: an agent can put a FIFO, socket or
// device anywhere at any moment, and open(2) of a FIFO blocks beyond any
// context or signal. So files are opened here, through an [os.Root],
// non-blocking, checked to be what was expected, and read bounded.

// ErrNotRegular reports a path that is not a regular file where one was
// expected.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge reports a file larger than the caller's limit.
var ErrTooLarge = errors.New("larger than the limit")

// OpenFile opens the regular file name in r for reading, with its status,
// never blocking: anything else is refused (ErrNotRegular).
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

// ListDir lists the directory at the path name, outside any Root (a git
// directory), failing at once if anything else is there.
func ListDir(name string) ([]fs.DirEntry, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// ReadFile reads the regular file name in r as OpenFile opens it, at most
// limit bytes (else ErrTooLarge).
func ReadFile(r *os.Root, name string, limit int64) ([]byte, error) {
	f, fi, err := OpenFile(r, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(f, fi.Size(), name, limit)
}

// readLimited reads f, whose stat says size, at most limit bytes.
func readLimited(f io.Reader, size int64, name string, limit int64) ([]byte, error) {
	if size > limit {
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

// OpenDir opens the directory name in r as a root. Unlike r.OpenRoot it
// never blocks on a FIFO: "name/." resolves only a directory.
func OpenDir(r *os.Root, name string) (*os.Root, error) {
	return r.OpenRoot(name + string(os.PathSeparator) + ".")
}

// OpenRoot is os.OpenRoot never blocking on a FIFO, as OpenDir.
func OpenRoot(dir string) (*os.Root, error) {
	return os.OpenRoot(dir + string(os.PathSeparator) + ".")
}
