package workspace

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
)

// Durable says what an [Atomic] write makes survive a crash of the
// machine. Readers see the old content or the new, whole, at every level.
type Durable uint8

const (
	// Renamed fsyncs nothing: after a crash the file may hold nothing.
	Renamed Durable = iota
	// FileSynced fsyncs the temporary file before the rename: after a
	// crash the file holds the old content or the new.
	FileSynced
	// DirSynced also fsyncs the directory after the rename: once the
	// write returns, the new content survives a crash.
	DirSynced
)

// Atomic is how a file is replaced whole: its content goes to a regular
// file beside it, opened without blocking (a FIFO there fails at once),
// given Perm whatever the umask, fsynced as Sync says, and renamed over
// the file, replacing a link or file there rather than writing through.
type Atomic struct {
	Perm fs.FileMode // the file's mode bits: permissions, setuid, setgid, sticky
	Sync Durable
	// Temp is the temporary file's name. Empty, a fresh one is made
	// exclusively; a fixed one (for serialised writers) is truncated and
	// reused, so one a killed writer left does not pile up.
	Temp string
}

// Write replaces the file name in r with data.
func (a Atomic) Write(r *os.Root, name string, data []byte) error {
	tmp, err := a.Stage(r, name, bytes.NewReader(data))
	if err != nil {
		return err
	}
	if err := r.Rename(tmp, name); err != nil {
		_ = r.Remove(tmp)
		return err
	}
	if a.Sync < DirSynced {
		return nil
	}
	return SyncDir(r, filepath.Dir(name))
}

// WriteFile replaces the file at path, through an [os.Root] on its
// directory.
func (a Atomic) WriteFile(path string, data []byte) error {
	r, err := OpenRoot(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer r.Close()
	return a.Write(r, filepath.Base(path), data)
}

// Stage writes src to the temporary file of name in r and returns its
// name, for the caller to rename over name (or remove). On an error
// nothing is left behind.
func (a Atomic) Stage(r *os.Root, name string, src io.Reader) (string, error) {
	tmp, flag := a.Temp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC
	if tmp == "" {
		tmp, flag = TempName(name), os.O_WRONLY|os.O_CREATE|os.O_EXCL
	}
	f, err := OpenWrite(r, tmp, flag, 0o600)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Chmod(a.Perm) // on the open file: whatever the umask, never through a link
	}
	if err == nil && a.Sync >= FileSynced {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = r.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// TempName is a fresh name beside name for what is being written.
func TempName(name string) string {
	dir, base := filepath.Split(name)
	return dir + "." + base + ".loop-write-" + strconv.FormatUint(rand.Uint64(), 36)
}

// OpenWrite opens the file name in r for writing with flag and perm,
// never blocking in open(2) on a FIFO put there, and refuses anything but
// a regular file ([ErrNotRegular]).
func OpenWrite(r *os.Root, name string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := r.OpenFile(name, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, perm)
	if errors.Is(err, syscall.ENXIO) { // a FIFO with no reader, or a socket
		err = &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, nil
}

// SyncDir fsyncs the directory dir of r ("." for r), making the names
// created and renamed in it durable; a FIFO there fails at once. On
// Windows, where directories cannot be fsynced, it does nothing.
func SyncDir(r *os.Root, dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := r.OpenFile(dir+string(os.PathSeparator)+".", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadDir lists the directory name in r, failing at once on a FIFO.
func ReadDir(r *os.Root, name string) ([]fs.DirEntry, error) {
	f, err := r.OpenFile(name+string(os.PathSeparator)+".", os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Escapes reports whether err is an [os.Root]'s refusal of a path leading
// out of it (through ".." or a link): nothing outside was read.
func Escapes(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent" // os.Root's own words (TestEscapes)
}
