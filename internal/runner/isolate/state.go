package isolate

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

// kind is what a path holds, as far as a snapshot is concerned.
type kind uint8

const (
	absent     kind = iota // nothing (or, in a worktree, a directory or special file)
	regular                // a regular file without the owner execute bit
	executable             // a regular file with the owner execute bit
	symlink                // a symbolic link; its id is that of its target text
	blocked                // root only: a directory, special file, or beyond a non-directory
)

// state is the content of one path: its kind and, unless absent or
// blocked, its git blob id.
type state struct {
	kind kind
	id   [sha1.Size]byte
}

func (s state) present() bool { return s.kind != absent && s.kind != blocked }

// changeKind names the change from state a to b (b present).
func changeKind(a, b state) string {
	switch {
	case !a.present():
		return Created
	case a.id == b.id && a.kind != symlink && b.kind != symlink:
		return Mode
	}
	return Modified
}

// statKey is what must be unchanged for a remembered state to be reused.
type statKey struct {
	size  int64
	mtime int64 // UnixNano
	ctime int64 // UnixNano where available, else 0
	ino   uint64
	mode  fs.FileMode
}

func keyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	k.ino, k.ctime = inodeAndCtime(fi)
	return k
}

// racyWindow is git's racy-clean rule with a margin, as in package
// workspace: a stat result is trusted to stand for a content only if the
// file's mtime is older than this before the content was read, since a
// same-size rewrite within one timestamp tick keeps the same stat.
const racyWindow = 2 * time.Second

// stamped is a stat key and when the content it stands for was read.
type stamped struct {
	key statKey
	at  time.Time
}

// vouches reports whether a file whose stat is k still holds the content
// read when s was taken.
func (s stamped) vouches(k statKey) bool {
	return s.key == k && !s.at.IsZero() && s.key.mtime < s.at.Add(-racyWindow).UnixNano()
}

// errChanged reports a file that changed while it was being read.
var errChanged = errors.New("changed while being read")

// maxAttempts bounds how often a file that changes while read is retried.
const maxAttempts = 3

// blobHasher returns a hash primed with the git blob header for size bytes.
func blobHasher(size int64) hash.Hash {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(size, 10) + "\x00"))
	return h
}

func linkState(target string) state {
	h := blobHasher(int64(len(target)))
	h.Write([]byte(target))
	return state{kind: symlink, id: [sha1.Size]byte(h.Sum(nil))}
}

func fileKind(m fs.FileMode) kind {
	if m&0o100 != 0 {
		return executable
	}
	return regular
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// pump copies size bytes from r to w (if not nil) and h, and fails with
// errChanged if r does not hold exactly size bytes.
func pump(w io.Writer, r io.Reader, h hash.Hash, size int64) error {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf, n := *bp, int64(0)
	for {
		k, err := r.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			if w != nil {
				if _, werr := w.Write(buf[:k]); werr != nil {
					return werr
				}
			}
			n += int64(k)
		}
		if err == io.EOF || (err == nil && k == 0) {
			break
		}
		if err != nil {
			return err
		}
		if n > size {
			return errChanged
		}
	}
	if n != size {
		return errChanged
	}
	return nil
}

// readState returns the state of name in r, whose lstat result is fi, and
// the stat key of what was read. It does not look at name's parents.
func readState(r *os.Root, name string, fi fs.FileInfo) (state, statKey, error) {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		target, err := r.Readlink(name)
		return linkState(target), keyOf(fi), err
	case !mode.IsRegular():
		return state{kind: blocked}, statKey{}, nil
	}
	var err error
	for range maxAttempts {
		var st state
		var key statKey
		if st, key, err = hashFile(r, name, keyOf(fi).ino); !errors.Is(err, errChanged) {
			return st, key, err
		}
		if fi, err = r.Lstat(name); err != nil {
			return state{}, statKey{}, err
		}
		if !fi.Mode().IsRegular() {
			return readState(r, name, fi)
		}
	}
	return state{}, statKey{}, fmt.Errorf("hash %q: %w", name, err)
}

// hashFile hashes the regular file name in r, which lstat found with inode ino.
func hashFile(r *os.Root, name string, ino uint64) (state, statKey, error) {
	f, fi, err := workspace.OpenFile(r, name) // never blocks on a FIFO swapped in
	if errors.Is(err, workspace.ErrNotRegular) {
		return state{}, statKey{}, errChanged // replaced since lstat
	}
	if err != nil {
		return state{}, statKey{}, err
	}
	defer f.Close()
	key := keyOf(fi)
	if key.ino != ino {
		return state{}, statKey{}, errChanged // replaced since lstat
	}
	h := blobHasher(key.size)
	if err := pump(nil, f, h, key.size); err != nil {
		return state{}, statKey{}, err
	}
	return state{kind: fileKind(fi.Mode()), id: [sha1.Size]byte(h.Sum(nil))}, key, nil
}
