package workspace

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// readEntries lists directory r with each entry's type as the kernel's
// listing gives it (getdents64's d_type), so that passing by an entry of
// a known type costs no lstat; an entry whose type the listing leaves
// unknown is looked at with lstat. (os.File.ReadDir lstats every entry of
// a directory opened in an os.Root.) Entries are in the listing's order.
func readEntries(r *os.Root) ([]dirEntry, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var out []dirEntry
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		var n int
		var gerr error
		err := rc.Read(func(fd uintptr) bool {
			for n, gerr = unix.Getdents(int(fd), buf); errors.Is(gerr, unix.EINTR); {
				n, gerr = unix.Getdents(int(fd), buf)
			}
			return true // a directory is never waited for
		})
		if err == nil {
			err = gerr
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdirent", Path: f.Name(), Err: err}
		}
		if n <= 0 {
			return out, nil
		}
		if out, err = appendDirents(out, r, buf[:n]); err != nil {
			return nil, err
		}
	}
}

// direntBufs holds the buffers readEntries lists directories into, as
// os.File.ReadDir's own pool does: a walk lists every directory of the
// root, and fresh buffers would be garbage the collector has to chase
// while agents and checks run.
var direntBufs = sync.Pool{New: func() any {
	b := make([]byte, 8<<10)
	return &b
}}

// appendDirents appends the entries of a getdents64 buffer, but . and ..,
// to out.
func appendDirents(out []dirEntry, r *os.Root, buf []byte) ([]dirEntry, error) {
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
			e, ok, err := typed(r, s, typ)
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
func typed(r *os.Root, name string, typ byte) (e dirEntry, ok bool, err error) {
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
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return dirEntry{}, false, nil
	}
	if err != nil {
		return dirEntry{}, false, err
	}
	return dirEntry{name, fi.Mode().Type()}, true, nil
}
