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

// syncDir fsyncs the store-relative directory rel, making the entries
// created or renamed in it durable.
func (d *Dir) syncDir(rel string) error {
	f, err := d.root.OpenFile(rel, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK, 0) // never a FIFO in its place
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
