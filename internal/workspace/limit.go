package workspace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
)

// DefaultMaxFileSize is the largest regular file a snapshot holds unless
// [Checkout.MaxFileSize] says otherwise: 100 MiB, the largest file GitHub
// accepts in a push, so that whatever a snapshot holds can be delivered.
const DefaultMaxFileSize = 100 << 20

// MaxDepth is how many directories deep a walk goes, and MaxPathBytes the
// longest path (relative to the root, as git records it) it takes on.
// Linux refuses paths of PATH_MAX (4,096) bytes or more, NUL included, and
// git checks out by paths relative to the checkout's top: no checkout
// writes a longer path, nor, at two bytes a directory ("d/"), one deeper
// than 2,048. Nothing beyond can be delivered, and a walk stopping there
// holds a few KiB per directory and per path.
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

// CheckFileSize refuses a file at rel of size bytes larger than limit,
// with an error wrapping ErrFileTooLarge that names it.
func CheckFileSize(rel string, size, limit int64) error {
	if size > limit {
		return tooLargeFile(rel, size, limit)
	}
	return nil
}

// checkDepth refuses a path beyond MaxDepth or MaxPathBytes.
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

// tooDeep is checkDepth's error for path, of n bytes, named by its first
// and last components.
func tooDeep(path []string, n int) error {
	shown := strings.Join(path, "/")
	if len(path) > 8 {
		shown = strings.Join(path[:4], "/") + "/…/" + strings.Join(path[len(path)-3:], "/")
	}
	return fmt.Errorf("%q (%d directories, %d bytes): %w", shown, len(path), n, ErrTooDeep)
}

// placedError is an error of a walk in the directory at Path.
type placedError struct {
	Path string
	Err  error
}

func (e *placedError) Error() string { return fmt.Sprintf("scan %q: %s", e.Path, e.Err) }
func (e *placedError) Unwrap() error { return e.Err }

// placed is err placed in the directory rel, once, by the deepest: wrapped
// at every level, an error 2,000 directories down would cost the cube of
// the depth to make.
func placed(rel string, err error) error {
	var pe *placedError
	if err == nil || errors.As(err, &pe) {
		return err
	}
	return &placedError{Path: rel, Err: err}
}

// stopped is the error of a walk or read whose ctx is done: it wraps the
// cause, and ctx's error where that is another.
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

// ctxReader reads from r until ctx is done.
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
