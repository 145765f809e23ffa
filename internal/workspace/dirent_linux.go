package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// dirList is one directory of the loop root, opened once to be listed,
// to lstat its entries in, to read its files and links from and to open
// its subdirectories from: fstatat(2) with AT_SYMLINK_NOFOLLOW,
// openat(2) with O_NOFOLLOW (and O_DIRECTORY for a subdirectory) and
// readlinkat(2), of a name that holds no slash, on the directory's own
// descriptor, reach the entry itself and nothing through it (as os.Root
// does, without its resolution of a path for each entry, and with one
// open of a directory where os.Root and a listing of it took two). A walk
// so opens one descriptor per directory it is in, and no os.Root below
// the one it started from, whose name would grow with the path: what the
// walk holds for a directory does not grow with its depth. A dirList is
// used by one goroutine; close it when done.
type dirList struct {
	count int      // the number of entries the listing found
	fd    int      // the directory's descriptor
	f     *os.File // the directory opened by openListing; nil for sub's: close fd
	name  string   // the directory's name, for errors
	st    unix.Stat_t
}

// fileStat is what an lstat of an entry found: its stat key (StatKey
// holds the mode, size, times, device and inode a walk needs).
type fileStat struct {
	key StatKey
}

// openListing opens directory r for listing.
func openListing(r *os.Root) (*dirList, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	fd := -1
	if err == nil {
		err = rc.Control(func(p uintptr) { fd = int(p) })
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &dirList{f: f, fd: fd, name: "."}, nil
}

// sub opens the subdirectory name for listing. It refuses a symbolic link
// and anything but a directory, and never blocks on a FIFO.
func (l *dirList) sub(name string) (*dirList, error) {
	if err := entryName(name); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(l.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Openat(l.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "openat", Path: name, Err: err}
	}
	return &dirList{fd: fd, name: name}, nil
}

// subSame is sub for the subdirectory name whose lstat found s, refused
// unless the directory opened is that one (a directory swapped in since
// is not entered).
func (l *dirList) subSame(name string, s fileStat) (*dirList, error) {
	sub, err := l.sub(name)
	if err != nil {
		return nil, err
	}
	if err = unix.Fstat(sub.fd, &sub.st); err != nil {
		err = &fs.PathError{Op: "fstat", Path: name, Err: err}
	} else if k := keyOfStat(&sub.st); k.dev != s.key.dev || k.ino != s.key.ino {
		err = fmt.Errorf("changed while it was opened: %w", ErrParent)
	}
	if err != nil {
		sub.close()
		return nil, err
	}
	return sub, nil
}

// close releases the directory's descriptor.
func (l *dirList) close() {
	if l.f != nil {
		l.f.Close()
	} else {
		unix.Close(l.fd)
	}
}

// entryName refuses a name that is not a single component.
func entryName(name string) error {
	if name == "" || name == "." || name == ".." || strings.IndexByte(name, '/') >= 0 {
		return &fs.PathError{Op: "open", Path: name, Err: errors.New("not an entry name")}
	}
	return nil
}

// lstat returns the status of the entry name of the directory, never
// following a symbolic link. name must be a single component.
func (l *dirList) lstat(name string) (fileStat, error) {
	if err := entryName(name); err != nil {
		return fileStat{}, err
	}
	err := unix.Fstatat(l.fd, name, &l.st, unix.AT_SYMLINK_NOFOLLOW)
	for errors.Is(err, unix.EINTR) {
		err = unix.Fstatat(l.fd, name, &l.st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return fileStat{}, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return fileStat{key: keyOfStat(&l.st)}, nil
}

// info returns the fs.FileInfo of the entry name, whose lstat found s, for
// what reads a file and checks it is the one found: a fresh lstat (the
// file it describes is the one read, and the one whose key is kept).
func (l *dirList) info(name string, _ fileStat) (fs.FileInfo, error) {
	return l.Lstat(name)
}

// reader is the directory as a dirReader: the dirList itself.
func (l *dirList) reader() (dirReader, error) { return l, nil }

// Lstat returns the status of the entry name (one component) of the
// directory, never following a symbolic link.
func (l *dirList) Lstat(name string) (fs.FileInfo, error) {
	if err := entryName(name); err != nil {
		return nil, err
	}
	fi := &statInfo{name: name}
	err := unix.Fstatat(l.fd, name, &fi.st, unix.AT_SYMLINK_NOFOLLOW)
	for errors.Is(err, unix.EINTR) {
		err = unix.Fstatat(l.fd, name, &fi.st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "lstat", Path: name, Err: err}
	}
	return fi, nil
}

// OpenFile opens the entry name (one component) of the directory, never
// through a symbolic link: a link there is refused with an error wrapping
// ErrNotRegular.
func (l *dirList) OpenFile(name string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := entryName(name); err != nil {
		return nil, err
	}
	flag |= unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(l.fd, name, flag, uint32(perm.Perm()))
	for errors.Is(err, unix.EINTR) {
		fd, err = unix.Openat(l.fd, name, flag, uint32(perm.Perm()))
	}
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Readlink returns the target of the symbolic link name (one component).
func (l *dirList) Readlink(name string) (string, error) {
	if err := entryName(name); err != nil {
		return "", err
	}
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(l.fd, name, buf)
		for errors.Is(err, unix.EINTR) {
			n, err = unix.Readlinkat(l.fd, name, buf)
		}
		if err != nil {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// statInfo is the fs.FileInfo of a dirList's Lstat.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (i *statInfo) Name() string       { return i.name }
func (i *statInfo) Size() int64        { return i.st.Size }
func (i *statInfo) Mode() fs.FileMode  { return modeOfStat(&i.st) }
func (i *statInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *statInfo) IsDir() bool        { return i.Mode().IsDir() }
func (i *statInfo) Sys() any           { return &i.st }

// same reports whether now, the status of an opened file, is that of the
// entry whose lstat found s (os.SameFile's test: device and inode).
func (s fileStat) same(now fs.FileInfo) bool {
	dev, ino, _ := statIDs(now)
	return dev == s.key.dev && ino == s.key.ino
}

// keyOfStat is KeyOf of the fs.FileInfo os would make of st.
func keyOfStat(st *unix.Stat_t) StatKey {
	return StatKey{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), dev: uint64(st.Dev), ino: uint64(st.Ino), mode: modeOfStat(st)}
}

// modeOfStat is the fs.FileMode os would make of st.
func modeOfStat(st *unix.Stat_t) fs.FileMode {
	mode := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// entries lists the directory with each entry's type as the kernel's
// listing gives it (getdents64's d_type), so that passing by an entry of
// a known type costs no lstat; an entry whose type the listing leaves
// unknown is looked at with lstat. (os.File.ReadDir lstats every entry of
// a directory opened in an os.Root.) Entries are in the listing's order.
func (l *dirList) entries() ([]dirEntry, error) {
	var out []dirEntry
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(l.fd, buf)
		for errors.Is(err, unix.EINTR) {
			n, err = unix.Getdents(l.fd, buf)
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: l.name, Err: err}
		}
		if n <= 0 {
			l.count = len(out)
			return out, nil
		}
		if out, err = l.appendDirents(out, buf[:n]); err != nil {
			return nil, err
		}
	}
}

// direntBufs holds the buffers listings are read into, as
// os.File.ReadDir's own pool does: a walk lists every directory of the
// root, and fresh buffers would be garbage the collector has to chase
// while agents and checks run.
var direntBufs = sync.Pool{New: func() any {
	b := make([]byte, 8<<10)
	return &b
}}

// appendDirents appends the entries of a getdents64 buffer, but . and ..,
// to out.
func (l *dirList) appendDirents(out []dirEntry, buf []byte) ([]dirEntry, error) {
	for len(buf) >= 19 {
		reclen := int(buf[16]) | int(buf[17])<<8
		if reclen < 19 || reclen > len(buf) {
			return nil, errors.New("readdirent: malformed directory entry")
		}
		typ, name := buf[18], buf[19:reclen]
		buf = buf[reclen:]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if s := string(name); s != "." && s != ".." {
			e, ok, err := l.typed(s, typ)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// typed is the entry name of a listing whose d_type is typ; when typ is
// unknown, its lstat says. ok is false when it is gone meanwhile.
func (l *dirList) typed(name string, typ byte) (e dirEntry, ok bool, err error) {
	switch typ {
	case unix.DT_REG:
		return dirEntry{name, 0}, true, nil
	case unix.DT_DIR:
		return dirEntry{name, fs.ModeDir}, true, nil
	case unix.DT_LNK:
		return dirEntry{name, fs.ModeSymlink}, true, nil
	case unix.DT_FIFO:
		return dirEntry{name, fs.ModeNamedPipe}, true, nil
	case unix.DT_SOCK:
		return dirEntry{name, fs.ModeSocket}, true, nil
	case unix.DT_CHR:
		return dirEntry{name, fs.ModeDevice | fs.ModeCharDevice}, true, nil
	case unix.DT_BLK:
		return dirEntry{name, fs.ModeDevice}, true, nil
	}
	s, err := l.lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return dirEntry{}, false, nil
	}
	if err != nil {
		return dirEntry{}, false, err
	}
	return dirEntry{name, s.key.mode.Type()}, true, nil
}
