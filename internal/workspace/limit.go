package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Bounds. What is in a loop root is the agents' doing, and nothing they
// put there may make a walk of it cost what the run's budgets do not
// allow: every walk and every read of a file takes a context, checked
// between entries and within a large file's read, and ends with an error
// wrapping its cause when it is done; a snapshot refuses, by its lstat
// alone, a file larger than its limit ([Checkout.MaxFileSize]); and no
// walk enters a directory deeper than [MaxDepth] or takes on a path
// longer than [MaxPathBytes].

// DefaultMaxFileSize is the largest regular file a snapshot holds unless
// [Checkout.MaxFileSize] says otherwise: 100 MiB, the largest file GitHub
// accepts in a push, so that whatever a snapshot holds can be delivered.
const DefaultMaxFileSize = 100 << 20

// MaxDepth is how many directories deep below the loop root a walk goes,
// and MaxPathBytes the longest path (slash-separated, relative to the
// root, as git records it) it takes on. Git checks a tree out by paths
// relative to the top of the checkout, and Linux refuses a path of
// PATH_MAX (4,096) bytes or more, its final NUL included: no checkout
// there writes a longer path, and since each directory adds at least two
// bytes ("d/"), none writes anything deeper than 2,048 directories. (Git
// 2.45 and later also refuse trees deeper than core.maxTreeDepth, 4,096
// by default.) So nothing beyond these limits can be delivered, and a walk
// that stops at them keeps the memory it holds for the directories it is
// in, and for every path it records, within a few KiB each.
const (
	MaxDepth     = 2048
	MaxPathBytes = 4095
)

// ErrFileTooLarge is wrapped by the error of a walk that found a regular
// file larger than its limit.
var ErrFileTooLarge = errors.New("larger than the largest file a snapshot holds")

// ErrTooDeep is wrapped by the error of a walk that found a directory
// deeper than MaxDepth, or a path longer than MaxPathBytes.
var ErrTooDeep = fmt.Errorf("deeper than %d directories or longer than %d bytes, which no git checkout on Linux writes", MaxDepth, MaxPathBytes)

// maxFileSize is the limit a walk holds files to.
func (k Checkout) maxFileSize() int64 {
	if k.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return k.MaxFileSize
}

// tooLargeFile is the error of a walk that found the file rel, of size
// bytes, larger than limit.
func tooLargeFile(rel string, size, limit int64) error {
	return fmt.Errorf("%q is %s (%d bytes): %w (%s)", rel, phrase.Bytes(size), size, ErrFileTooLarge, phrase.Bytes(limit))
}

// CheckFileSize refuses a regular file of size bytes, at rel, larger than
// limit, with an error wrapping ErrFileTooLarge that names it: a walk's,
// and package isolate's for what it copies.
func CheckFileSize(rel string, size, limit int64) error {
	if size > limit {
		return tooLargeFile(rel, size, limit)
	}
	return nil
}

// checkDepth refuses the path of a directory a walk is about to enter, or
// of an entry it records, that is beyond MaxDepth or MaxPathBytes. It
// costs a pass over the path's components, which is bounded by the limit.
func checkDepth(path []string) error {
	n := len(path) - 1 // the slashes
	for _, c := range path {
		n += len(c)
	}
	if len(path) <= MaxDepth && n <= MaxPathBytes {
		return nil
	}
	return tooDeep(path, n)
}

// tooDeep is the error of checkDepth for path, of n bytes: it names the
// path by its first and last components.
func tooDeep(path []string, n int) error {
	shown := strings.Join(path, "/")
	if len(path) > 8 {
		shown = strings.Join(path[:4], "/") + "/…/" + strings.Join(path[len(path)-3:], "/")
	}
	return fmt.Errorf("%q (%d directories, %d bytes): %w", shown, len(path), n, ErrTooDeep)
}

// placedError is an error of a walk in the directory at Path (a
// subdirectory's, named relative to the root).
type placedError struct {
	Path string
	Err  error
}

func (e *placedError) Error() string { return fmt.Sprintf("scan %q: %s", e.Path, e.Err) }
func (e *placedError) Unwrap() error { return e.Err }

// placed is err, if not nil, placed in the directory rel: once, by the
// deepest directory it came from. (Wrapped again at every level on the
// way up, an error from 2,000 directories down would be 2,000 copies of
// ever longer paths, costing the cube of the depth to make.)
func placed(rel string, err error) error {
	var pe *placedError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return &placedError{Path: rel, Err: err}
}

// stopped is the error of a walk or a read whose context ctx is done: it
// wraps ctx's cause, and ctx's error where that is another.
func stopped(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return fmt.Errorf("stopped: %w", err)
	}
	return fmt.Errorf("stopped: %w (%w)", cause, err)
}

// live is nil while ctx is not done, and then stopped(ctx).
func live(ctx context.Context) error {
	if ctx.Err() != nil {
		return stopped(ctx)
	}
	return nil
}

// ctxReader reads from r until ctx is done: each read first checks it.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := live(c.ctx); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
