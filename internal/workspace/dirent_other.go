//go:build !linux

package workspace

import (
	"io/fs"
	"os"
)

// dirList is one directory of the loop root, to list and to lstat its
// entries in (through its os.Root).
type dirList struct {
	count int // the number of entries the listing found
	r     *os.Root
}

// fileStat is what an lstat of an entry found: its stat key, and the
// fs.FileInfo it was taken from.
type fileStat struct {
	key StatKey
	fi  fs.FileInfo
}

// openListing opens directory r for listing.
func openListing(r *os.Root) (*dirList, error) { return &dirList{r: r}, nil }

// close releases nothing: the listing holds no descriptor of its own.
func (l *dirList) close() {}

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
