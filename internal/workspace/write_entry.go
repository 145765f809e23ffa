package workspace

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// modeBits are the mode bits besides the type an [Entry] records.
const modeBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// RecordLimit is the largest file whose content an [Entry] keeps; a larger
// one's size and digest tell that it changed, not how to put it back.
const RecordLimit = 64 << 20

// Entry is the recorded state of one path: its mode, and a file's content
// and SHA-256 or a link's target. Other kinds have their mode alone.
type Entry struct {
	Mode fs.FileMode
	Data []byte   // a file's content (nil above RecordLimit), or a link's target
	Size int64    // a file's size
	Sum  [32]byte // SHA-256 of a file's content
	Err  string   // why a file could not be read
}

// Equal reports whether e and o record the same state, ignoring the mode
// bits of links and directories.
func (e Entry) Equal(o Entry) bool {
	if e.Mode.Type() != o.Mode.Type() || e.Err != o.Err {
		return false
	}
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		return bytes.Equal(e.Data, o.Data)
	case e.Mode.IsDir():
		return true
	case e.Mode.IsRegular():
		return e.Mode&modeBits == o.Mode&modeBits && e.Size == o.Size && e.Sum == o.Sum
	}
	return e.Mode&modeBits == o.Mode&modeBits
}

// Kind names what e records: "a file", "a symbolic link", "a directory"...
func (e Entry) Kind() string { return kindOf(e.Mode) }

// Replaced is a parent [Writer.Put] replaced with a real directory.
type Replaced struct {
	Path   string
	Mode   fs.FileMode // what it was
	Target string      // a symbolic link's target
}

// Put makes rel hold e, a file (with its content), link or directory, and
// returns the parents it replaced: one that is a link or a file is
// removed (a link itself, never what it points to) and becomes an empty
// directory, since e says rel is a path of the tree. Whatever rel holds is
// replaced, a directory with everything in it.
func (w *Writer) Put(rel string, e Entry) ([]Replaced, error) {
	if e.Mode.IsRegular() && e.Data == nil && e.Size > 0 || e.Err != "" {
		return nil, fmt.Errorf("write %q: its recorded content is not kept (%s)", rel, recordedWhy(e))
	}
	return w.put(rel, e, reclaim)
}

func recordedWhy(e Entry) string {
	if e.Err != "" {
		return e.Err
	}
	return fmt.Sprintf("%d bytes, above the record limit", e.Size)
}

// put writes e at rel, with parents as how says.
func (w *Writer) put(rel string, e Entry, how parentMode) ([]Replaced, error) {
	if err := checkWrite(rel); err != nil {
		return nil, err
	}
	d, name, replaced, err := w.parent(rel, how)
	if err != nil {
		return replaced, wrapOp("write", rel, err)
	}
	defer d.close()
	switch {
	case e.Mode.IsDir():
		err = putDir(d.r, name, e.Mode&modeBits)
	case e.Mode.IsRegular():
		err = putFile(d.r, name, bytes.NewReader(e.Data), e.Mode&modeBits, how)
	case e.Mode&fs.ModeSymlink != 0:
		err = putLink(d.r, name, string(e.Data), how)
	default:
		err = fmt.Errorf("%s cannot be written", kindOf(e.Mode))
	}
	return replaced, wrapOp("write", rel, err)
}

// putDir makes the child name of r a real directory, replacing what else
// is there.
func putDir(r *os.Root, name string, perm fs.FileMode) error {
	fi, err := r.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r.Mkdir(name, perm)
	case err != nil:
		return err
	case fi.IsDir():
		return nil
	}
	if err := r.Remove(name); err != nil {
		return err
	}
	return r.Mkdir(name, perm)
}

// putFile writes content beside the child name of r, with mode, and
// renames it into place.
func putFile(r *os.Root, name string, content io.Reader, mode fs.FileMode, how parentMode) error {
	tmp, err := Atomic{Perm: mode}.Stage(r, name, content)
	if err != nil {
		return err
	}
	return replace(r, tmp, name, how)
}

// putLink makes the child name of r a link to target, renamed into place.
func putLink(r *os.Root, name, target string, how parentMode) error {
	tmp := TempName(name)
	if err := r.Symlink(target, tmp); err != nil {
		return err
	}
	return replace(r, tmp, name, how)
}

// replace renames tmp over name, first removing a directory there: with
// everything in it for reclaim, else only if empty.
func replace(r *os.Root, tmp, name string, how parentMode) error {
	err := r.Rename(tmp, name)
	if err != nil {
		if fi, lerr := r.Lstat(name); lerr == nil && fi.IsDir() {
			if how == reclaim {
				err = r.RemoveAll(name)
			} else {
				err = r.Remove(name)
			}
			if err == nil {
				err = r.Rename(tmp, name)
			}
		}
	}
	if err != nil {
		_ = r.Remove(tmp)
	}
	return err
}

// Lookup returns the recorded state of rel, and false when rel is not a
// path of the tree: missing, or below a symbolic link or a file. It never
// follows a link and never blocks on a named pipe.
func (w *Writer) Lookup(rel string) (Entry, bool, error) {
	d, name, fi, err := w.lookup(rel)
	if d == nil || err != nil {
		return Entry{}, false, wrapOp("read", rel, err)
	}
	defer d.close()
	return record(context.Background(), d.r, name, fi), true, nil
}

// lookup returns the directory holding rel, rel's name and lstat there,
// or a nil directory when rel is not a path of the tree.
func (w *Writer) lookup(rel string) (*dirList, string, fs.FileInfo, error) {
	if err := checkRel(rel); err != nil {
		return nil, "", nil, err
	}
	d, name, _, err := w.parent(rel, existing)
	if d == nil || err != nil {
		if errors.Is(err, ErrParent) {
			err = nil
		}
		return nil, "", nil, err
	}
	fi, err := d.r.Lstat(name)
	if err != nil {
		d.close()
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return nil, "", nil, err
	}
	return d, name, fi, nil
}

// record reads the child name of r (lstat: fi). A file that cannot be
// read, or whose read ctx stopped (the caller checks), has the reason.
func record(ctx context.Context, r *os.Root, name string, fi fs.FileInfo) Entry {
	e := Entry{Mode: fi.Mode()}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := r.Readlink(name)
		if err != nil {
			e.Err = err.Error()
		}
		e.Data = []byte(t)
	case fi.Mode().IsRegular():
		if err := readRegular(ctx, r, name, fi, &e); err != nil {
			e.Data, e.Err = nil, err.Error()
		}
	}
	return e
}

// readRegular reads the regular file name of r, the one lstat found,
// into e.
func readRegular(ctx context.Context, r *os.Root, name string, fi fs.FileInfo, e *Entry) error {
	f, now, err := openRegular(r, name, fi)
	if err != nil {
		return err
	}
	defer f.Close()
	e.Mode = now.Mode()
	h := sha256.New()
	var buf bytes.Buffer
	var dst io.Writer = h
	if now.Size() <= RecordLimit {
		dst = io.MultiWriter(h, &buf)
	}
	n, err := io.Copy(dst, ctxReader{ctx, f})
	if err != nil {
		return err
	}
	e.Size, e.Sum = n, [32]byte(h.Sum(nil))
	if n <= RecordLimit && now.Size() <= RecordLimit {
		e.Data = buf.Bytes()
		if e.Data == nil {
			e.Data = []byte{}
		}
	}
	return nil
}

// Scan records the paths below the directory dir ("" for the root) that
// keep selects, directories included, entering those descend selects. It
// never follows a link: a dir that is one, or is missing, holds nothing.
// It stops when ctx is done, and never enters a directory beyond MaxDepth
// or MaxPathBytes (ErrTooDeep).
func (w *Writer) Scan(ctx context.Context, dir string, descend, keep func(rel string) bool) (map[string]Entry, error) {
	return w.ScanCached(ctx, dir, descend, keep, nil)
}

// ScanCached is Scan taking from c what its stats vouch for, and keeping
// in c what it found. A nil c reads everything.
func (w *Writer) ScanCached(ctx context.Context, dir string, descend, keep func(rel string) bool, c *ScanCache) (map[string]Entry, error) {
	out := map[string]Entry{}
	pass := c.begin()
	defer c.end(pass)
	d := &dirList{r: w.root}
	if dir != "" {
		sub, err := w.openDir(dir)
		if sub == nil || err != nil {
			return out, err
		}
		d = &dirList{r: sub, own: true}
	}
	defer d.close()
	s := &scan{ctx: ctx, descend: descend, keep: keep, out: out, cache: pass, rel: []byte(dir)}
	if dir != "" {
		s.depth = strings.Count(dir, "/") + 1
	}
	if err := s.dir(openListing(d.r)); err != nil {
		return out, fmt.Errorf("scan %q: %w", dir, err)
	}
	return out, nil
}

// openDir opens the real directory rel, or returns nil when rel is not one.
func (w *Writer) openDir(rel string) (*os.Root, error) {
	d, name, fi, err := w.lookup(rel)
	if d == nil || err != nil {
		return nil, err
	}
	defer d.close()
	if !fi.IsDir() {
		return nil, nil
	}
	return openSame(d.r, name, fi)
}

// scan is one ScanCached.
type scan struct {
	ctx           context.Context
	descend, keep func(rel string) bool
	out           map[string]Entry
	cache         *statPass[Entry] // nil: read everything
	// rel is the path of the directory at hand, in one buffer extended in
	// place, so that no directory keeps a path of its own; depth is how
	// many directories it names.
	rel   []byte
	depth int
}

// dir scans directory l, at s.rel.
func (s *scan) dir(l *dirList) error {
	entries, err := l.entries()
	if err != nil {
		return err
	}
	at := len(s.rel)
	defer func() { s.rel = s.rel[:at] }()
	for _, e := range entries {
		if err := live(s.ctx); err != nil {
			return err
		}
		s.rel = s.rel[:at]
		if at > 0 {
			s.rel = append(s.rel, '/')
		}
		s.rel = append(s.rel, e.name...)
		rel := string(s.rel)
		if !s.keep(rel) && (!e.typ.IsDir() || !s.descend(rel)) {
			continue // nothing to record nor to enter
		}
		st := e.st
		if st.key.mode.IsDir() {
			if s.keep(rel) {
				s.out[rel] = Entry{Mode: st.key.mode}
			}
			if !s.descend(rel) {
				continue
			}
			if err := s.sub(l, e.name, st); err != nil {
				return err
			}
			continue
		}
		if s.keep(rel) {
			s.out[rel] = recordCached(s.ctx, s.cache, l, rel, e.name, st)
			if err := live(s.ctx); err != nil {
				return err // the record says the read stopped: it is no record
			}
		}
	}
	return nil
}

// sub scans the subdirectory name of l, at s.rel (lstat: st). One that
// may not be read, or is gone, holds nothing: what it held looks deleted,
// and putting it back fails where access is still refused.
func (s *scan) sub(l *dirList, name string, st fileStat) error {
	if s.depth++; s.depth > MaxDepth || len(s.rel) > MaxPathBytes {
		return tooDeep(strings.Split(string(s.rel), "/"), len(s.rel))
	}
	defer func() { s.depth-- }()
	sub, err := l.subSame(name, st)
	if err == nil {
		err = s.dir(sub)
		sub.close()
	}
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return placed(string(s.rel), err)
}
