package workspace

import (
	"context"
	"crypto/sha1"
	"errors"
	"hash"
	"io"
	"io/fs"
	"math"
	"os"
	"sync"
)

// errChanged reports a file that changed while it was being read.
var errChanged = errors.New("changed while being read")

// maxAttempts bounds the reads of a file that changes while read.
const maxAttempts = 3

// blobHash returns a hash primed with the blob header for size bytes.
func blobHash(size int64) hash.Hash {
	h := sha1.New()
	h.Write(objectHeader("blob", size))
	return h
}

// LinkID returns the blob id of a symbolic link to target.
func LinkID(target string) ObjectID {
	return hashObject("blob", []byte(target))
}

// HashFile returns the blob id of the regular file name in r (lstat: fi),
// with the status of the file it read. It never blocks on a named pipe,
// reads only the file lstat found, again if it changes meanwhile, and
// stops when ctx is done. One no longer regular wraps [ErrNotRegular].
func HashFile(ctx context.Context, r *os.Root, name string, fi fs.FileInfo) (ObjectID, fs.FileInfo, error) {
	return hashFile(ctx, r, name, fi, math.MaxInt64)
}

// hashFile is HashFile of at most limit bytes (see readStable).
func hashFile(ctx context.Context, r *os.Root, name string, fi fs.FileInfo, limit int64) (ObjectID, fs.FileInfo, error) {
	var id ObjectID
	now, err := readStable(r, name, fi, limit, func(f *os.File, now fs.FileInfo) error {
		h := blobHash(now.Size())
		if err := pump(ctx, nil, f, h, now.Size()); err != nil {
			return err
		}
		id = ObjectID(h.Sum(nil))
		return nil
	})
	return id, now, err
}

// readAll reads exactly size bytes from f, else fails with errChanged.
func readAll(ctx context.Context, f io.Reader, size int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(ctxReader{ctx, f}, size+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, errChanged
	}
	return data, nil
}

// readStable opens the regular file name in r (lstat: fi) and calls read
// with it and its status, again from a fresh lstat while that fails with
// errChanged (maxAttempts in all). A file grown beyond limit since is not
// read: errOverLimit, with the status that says so.
func readStable(r *os.Root, name string, fi fs.FileInfo, limit int64, read func(f *os.File, now fs.FileInfo) error) (fs.FileInfo, error) {
	return retry(r, name, fi, func(fi fs.FileInfo) (fs.FileInfo, error) {
		if !fi.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "read", Path: name, Err: ErrNotRegular}
		}
		f, now, err := openRegular(r, name, fi)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if now.Size() > limit {
			return now, errOverLimit
		}
		return now, read(f, now)
	})
}

// errOverLimit reports a file grown beyond a read's limit since lstat.
var errOverLimit = errors.New("grew beyond the limit")

// retry calls try, with a fresh lstat of name before each new attempt,
// while it fails with errChanged, at most maxAttempts times.
func retry[T any](r *os.Root, name string, fi fs.FileInfo, try func(fi fs.FileInfo) (T, error)) (T, error) {
	var v T
	var err error
	for i := range maxAttempts {
		if i > 0 {
			if fi, err = r.Lstat(name); err != nil {
				return v, err
			}
		}
		if v, err = try(fi); !errors.Is(err, errChanged) {
			return v, err
		}
	}
	return v, err
}

// openRegular opens the regular file name in r, checked to be the one
// lstat found (fi): one replaced since fails with errChanged.
func openRegular(r *os.Root, name string, fi fs.FileInfo) (*os.File, fs.FileInfo, error) {
	f, now, err := OpenFile(r, name)
	if errors.Is(err, ErrNotRegular) {
		return nil, nil, errChanged
	}
	if err != nil {
		return nil, nil, err
	}
	if !os.SameFile(fi, now) {
		f.Close()
		return nil, nil, errChanged
	}
	return f, now, nil
}

var buffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// pump copies size bytes from r to h and w (if not nil), failing with
// errChanged on another size. It checks ctx before each 64 KiB read.
func pump(ctx context.Context, w io.Writer, r io.Reader, h hash.Hash, size int64) error {
	bp := buffers.Get().(*[]byte)
	defer buffers.Put(bp)
	buf, n := *bp, int64(0)
	for {
		if err := live(ctx); err != nil {
			return err
		}
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
