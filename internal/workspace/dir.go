package workspace

import (
	"errors"
	"io/fs"
	"os"
)

// dirList is one directory of a walk, through an os.Root of its own: its
// entries are reached by one component, so nothing resolves outside it,
// and a subdirectory is entered only if it is the one lstat'ed. An
// os.Root names its path (at most MaxPathBytes, twice): a walk holds a few
// KiB per directory. A dirList is used by one goroutine; close it.
type dirList struct {
	r     *os.Root
	own   bool // r was opened by subSame, and must be closed
	count int  // the number of entries the listing found
}

// fileStat is what an lstat of an entry found.
type fileStat struct {
	key StatKey
	fi  fs.FileInfo
}

// statOf is the fileStat of fi.
func statOf(fi fs.FileInfo) fileStat { return fileStat{key: KeyOf(fi), fi: fi} }

// openListing is directory r for listing; r stays the caller's to close.
func openListing(r *os.Root) *dirList { return &dirList{r: r} }

// subSame opens the subdirectory name, refused unless it is the one whose
// lstat found s.
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

// dirEntry is an entry of a listing: its name, type bits and lstat.
type dirEntry struct {
	name string
	typ  fs.FileMode
	st   fileStat
}

// entries lists the directory with each entry's lstat (relative to its
// descriptor), leaving out entries removed since. "." is opened plainly,
// not through ReadDir's non-blocking open, which the runtime's poller
// would try to register.
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
