//go:build unix

package state

import (
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock on the store-relative file rel without
// blocking, creating the file if needed. flock locks belong to the open
// file description, so two opens in one process exclude each other, and
// the kernel drops the lock when the process dies.
func (d *Dir) lockFile(rel string) (release func() error, err error) {
	f, err := d.root.OpenFile(rel, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() error {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}, nil
}

// sharedLock is a flock held shared by every open Branch of a cache, and
// exclusively by one that collects it.
type sharedLock struct{ f *os.File }

// lockShared takes a shared flock on the store-relative file rel, waiting
// while someone holds it exclusively, creating the file if needed.
func (d *Dir) lockShared(rel string) (*sharedLock, error) {
	f, err := d.root.OpenFile(rel, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	l := &sharedLock{f: f}
	if err := l.shared(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// tryExclusive converts the lock to an exclusive one without waiting,
// and reports whether it did. The conversion is not atomic: on failure
// the shared lock is lost, and shared must take it again.
func (l *sharedLock) tryExclusive() bool {
	return syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// shared takes (or converts the lock back to) a shared lock, waiting
// while someone else holds it exclusively.
func (l *sharedLock) shared() error {
	for {
		err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_SH)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// release drops the lock; nil does nothing.
func (l *sharedLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
