package workspace

import (
	"errors"
	"io/fs"
	"os"
)

// dirList is one directory of a walk, reached through an os.Root of its
// own: the walk lists it, lstats, reads and readlinks its entries by one
// component and opens its subdirectories through it, so nothing resolves
// outside it. A subdirectory is entered only if it is the directory the
// listing lstat'ed (openSame), never through a link swapped in since.
// Each os.Root names its path, at most MaxPathBytes (twice, with the "/."
// that OpenDir appends): what a walk holds per directory stays a few KiB.
// A dirList is used by one goroutine; close it when done.
type dirList struct {
	r     *os.Root
	own   bool // r was opened by subSame, and must be closed
	count int  // the number of entries the listing found
}

// fileStat is what an lstat of an entry found: its stat key, and the
// fs.FileInfo it was taken from.
type fileStat struct {
	key StatKey
	fi  fs.FileInfo
}

// statOf is the fileStat of fi.
func statOf(fi fs.FileInfo) fileStat { return fileStat{key: KeyOf(fi), fi: fi} }

// openListing is directory r for listing; r stays the caller's to close.
func openListing(r *os.Root) *dirList { return &dirList{r: r} }

// subSame opens the subdirectory name whose lstat found s, refused unless
// the directory opened is that one; it never blocks on a FIFO.
func (l *dirList) subSame(name string, s fileStat) (*dirList, error) {
	r, err := openSame(l.r, name, s.fi)
	if err != nil {
		return nil, err
	}
	return &dirList{r: r, own: true}, nil
}

// close releases the directory's root if subSame opened it.
func (l *dirList) close() {
	if l.own {
		l.r.Close()
	}
}

// dirEntry is an entry of a directory listing: its name, its type
// (fs.FileMode.Type bits) and its lstat.
type dirEntry struct {
	name string
	typ  fs.FileMode
	st   fileStat
}

// entries lists the directory, in the listing's order, with each entry's
// lstat: os.File.ReadDir of a directory opened in an os.Root takes it
// relative to the directory's descriptor, and leaves out an entry removed
// since the listing. The directory is the root's own, "." (no FIFO can be
// there): it is opened as a directory, not through ReadDir's non-blocking
// open, which the runtime's poller would then try to register.
func (l *dirList) entries() ([]dirEntry, error) {
	f, err := l.r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	out := make([]dirEntry, 0, len(des))
	for _, de := range des {
		fi, ierr := de.Info()
		if errors.Is(ierr, fs.ErrNotExist) {
			continue
		}
		if ierr != nil {
			return nil, ierr
		}
		out = append(out, dirEntry{de.Name(), fi.Mode().Type(), statOf(fi)})
	}
	l.count = len(out)
	return out, err
}
