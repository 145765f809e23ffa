//go:build !linux

package workspace

import (
	"io/fs"
	"os"
)

// dirList is one directory of the loop root, to list, to lstat its
// entries in and to open its subdirectories from (through its os.Root).
type dirList struct {
	count int // the number of entries the listing found
	r     *os.Root
	own   bool // r was opened by sub, and must be closed
}

// fileStat is what an lstat of an entry found: its stat key, and the
// fs.FileInfo it was taken from.
type fileStat struct {
	key StatKey
	fi  fs.FileInfo
}

// openListing opens directory r for listing.
func openListing(r *os.Root) (*dirList, error) { return &dirList{r: r}, nil }

// sub opens the subdirectory name for listing; it never blocks on a FIFO.
func (l *dirList) sub(name string) (*dirList, error) {
	r, err := OpenDir(l.r, name)
	if err != nil {
		return nil, err
	}
	return &dirList{r: r, own: true}, nil
}

// subSame is sub for the subdirectory name whose lstat found s, refused
// unless the directory opened is that one.
func (l *dirList) subSame(name string, s fileStat) (*dirList, error) {
	r, err := openSameStat(l.r, name, s)
	if err != nil {
		return nil, err
	}
	return &dirList{r: r, own: true}, nil
}

// reader is the directory as a dirReader: its os.Root.
func (l *dirList) reader() (dirReader, error) { return l.r, nil }

// close releases the directory's root if sub opened it.
func (l *dirList) close() {
	if l.own {
		l.r.Close()
	}
}

// lstat returns the status of the entry name, never following a link.
func (l *dirList) lstat(name string) (fileStat, error) {
	fi, err := l.r.Lstat(name)
	if err != nil {
		return fileStat{}, err
	}
	return fileStat{key: KeyOf(fi), fi: fi}, nil
}

// info returns the fs.FileInfo the lstat that found s took.
func (l *dirList) info(_ string, s fileStat) (fs.FileInfo, error) { return s.fi, nil }

// same reports whether now is the status of the file s was taken of.
func (s fileStat) same(now fs.FileInfo) bool { return os.SameFile(s.fi, now) }

// entries lists the directory with each entry's type (an lstat of each:
// os.File.ReadDir of a directory opened in an os.Root).
func (l *dirList) entries() ([]dirEntry, error) {
	f, err := l.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]dirEntry, 0, len(des))
	for _, de := range des {
		out = append(out, dirEntry{de.Name(), de.Type()})
	}
	l.count = len(out)
	return out, err
}
