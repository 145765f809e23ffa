//go:build windows

package state

import (
	"errors"
	"syscall"
)

// errSharingViolation is ERROR_SHARING_VIOLATION, which package syscall
// does not name.
const errSharingViolation syscall.Errno = 32

// lockFile opens the store-relative file rel with no sharing at all, which
// Windows refuses to every other opener until the handle is closed or the
// process dies. rel is below the store (run ids are validated), but unlike
// the rest of the store it is opened by path, not through the os.Root.
func (d *Dir) lockFile(rel string) (release func() error, err error) {
	name, err := syscall.UTF16PtrFromString(d.abs(rel))
	if err != nil {
		return nil, err
	}
	h, err := syscall.CreateFile(name, syscall.GENERIC_READ|syscall.GENERIC_WRITE, 0, nil,
		syscall.OPEN_ALWAYS, syscall.FILE_ATTRIBUTE_NORMAL, 0)
	if errors.Is(err, errSharingViolation) {
		return nil, ErrLocked
	}
	if err != nil {
		return nil, err
	}
	return func() error { return syscall.CloseHandle(h) }, nil
}

// sharedLock is held by every open Branch of a cache on Unix. On Windows
// the cache is never collected (open files cannot be deleted there), so
// there is nothing to hold.
type sharedLock struct{}

func (d *Dir) lockShared(string) (*sharedLock, error) { return &sharedLock{}, nil }
func (l *sharedLock) tryExclusive() bool              { return false }
func (l *sharedLock) shared() error                   { return nil }
func (l *sharedLock) release() error                  { return nil }
