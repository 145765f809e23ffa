package workspace

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// chain makes depth nested directories named "d" under root, with a file
// named bottom (unless "") in the deepest, through descriptors (the path
// is longer than the system takes), and removes them when t ends, one
// level at a time (os.RemoveAll would hold a descriptor per level).
func chain(t testing.TB, root string, depth int, bottom string) {
	t.Helper()
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	for range depth {
		if err := unix.Mkdirat(fd, "d", 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := unix.Openat(fd, "d", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatal(err)
		}
		fd = next
	}
	if bottom != "" {
		f, err := unix.Openat(fd, bottom, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(f)
	}
	unix.Close(fd)
	t.Cleanup(func() { unchain(t, root) })
}

// unchain removes the chain of "d" under root: each time, the second
// level is moved up beside the first, which is then empty but for the
// bottom's file.
func unchain(t testing.TB, root string) {
	top, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Error(err)
		return
	}
	defer unix.Close(top)
	name := "d"
	for i := 0; ; i++ {
		fd, err := unix.Openat(top, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return // gone, or never made
		}
		next := "u" + strconv.Itoa(i)
		moved := unix.Renameat(fd, "d", top, next) == nil
		if !moved {
			for _, f := range []string{"f", "x"} {
				_ = unix.Unlinkat(fd, f, 0)
			}
		}
		unix.Close(fd)
		if err := unix.Unlinkat(top, name, unix.AT_REMOVEDIR); err != nil {
			t.Errorf("remove the chain: %v", err)
			return
		}
		if !moved {
			return
		}
		name = next
	}
}

// TestDeepChainRefused: a chain of 12,000 directories fails every walk
// that would enter it, at the depth limit, with ErrTooDeep; an ignored
// one is passed by by a snapshot and refused by the listing of ignored
// files, which enters it. Without the limit each walk holds a descriptor
// and more per level, 12,000 deep.
func TestDeepChainRefused(t *testing.T) {
	t.Parallel()
	for _, ignored := range []bool{false, true} {
		t.Run("ignored="+strconv.FormatBool(ignored), func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if ignored {
				file(".gitignore", "/d/\n")(t, root)
			}
			chain(t, root, 12_000, "f")
			h := NewHasher(root)
			w := openWriter(t, root)
			walks := map[string]func() error{
				"Snapshot":      func() error { _, err := h.Snapshot(t.Context()); return err },
				"Files":         func() error { _, err := h.Files(t.Context()); return err },
				"ScanUncarried": func() error { _, err := ScanUncarried(t.Context(), root); return err },
				"Scan":          func() error { _, err := w.Scan(t.Context(), "", everything, everything); return err },
			}
			for name, walk := range walks {
				err := walk()
				passedBy := ignored && (name == "Snapshot" || name == "Files")
				switch {
				case passedBy && err != nil:
					t.Errorf("%s of an ignored chain: %v", name, err)
				case !passedBy && !errors.Is(err, ErrTooDeep):
					t.Errorf("%s: err = %v, want one wrapping ErrTooDeep", name, err)
				case !passedBy && !strings.Contains(err.Error(), `"d/d/d/d/…/d/d/d" (2049 directories, 4097 bytes)`):
					t.Errorf("%s: err = %q, want it to name where", name, err)
				}
			}
		})
	}
}

// TestDepthBoundary: 2,047 directories and a file at the bottom (a path
// of 4,095 bytes, git's longest on Linux) are a snapshot like any other;
// one more directory is too deep.
func TestDepthBoundary(t *testing.T) {
	t.Parallel()
	for depth, ok := range map[int]bool{2047: true, 2048: false, 2049: false} {
		root := t.TempDir()
		chain(t, root, depth, "f")
		_, err := NewHasher(root).Snapshot(t.Context())
		if (err == nil) != ok || (!ok && !errors.Is(err, ErrTooDeep)) {
			t.Errorf("a file below %d directories: err = %v", depth, err)
		}
	}
}

// TestWalkMemoryPerDirectory: what a walk holds for a chain of
// directories stays a few KiB per directory it is in, even where the
// chain is as deep as MaxPathBytes lets it be: a walk keeps no buffer per
// directory, and the path each directory's os.Root names is bounded by
// MaxPathBytes (the directories of the walk itself share one array of
// names, or one buffer). For Snapshot and ScanUncarried, every byte they
// allocate is counted; for Scan, which makes a string of each path it
// asks its callbacks about (garbage at once), what is live when it
// reaches the bottom. Bytes are counted, not time; the test runs alone,
// so that no other test allocates meanwhile.
func TestWalkMemoryPerDirectory(t *testing.T) {
	roots := map[int]string{}
	for _, depth := range []int{1000, 2000} {
		roots[depth] = t.TempDir()
		chain(t, roots[depth], depth, "f")
	}
	walks := map[string]func(root string) (uint64, error){
		"Snapshot": func(root string) (uint64, error) {
			return allocated(func() error { _, err := NewHasher(root).Snapshot(t.Context()); return err })
		},
		"ScanUncarried": func(root string) (uint64, error) {
			return allocated(func() error { _, err := ScanUncarried(t.Context(), root); return err })
		},
		"Scan": liveAtBottom,
	}
	for name, walk := range walks {
		bytes := map[int]uint64{}
		for depth, root := range roots {
			least := uint64(0)
			for i := range 3 {
				n, err := walk(root)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 || n < least {
					least = n
				}
			}
			bytes[depth] = least
		}
		t.Logf("%s: %d bytes at depth 1000, %d at 2000", name, bytes[1000], bytes[2000])
		for depth, n := range bytes {
			if per := n / uint64(depth); per > 16<<10 {
				t.Errorf("%s takes %d bytes per directory of a chain %d deep, more than 16 KiB", name, per, depth)
			}
		}
	}
}

// allocated is how many bytes walk allocates.
func allocated(walk func() error) (uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := walk()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, err
}

// liveAtBottom is how much more of the heap is live when a Scan of the
// chain under root reaches the file at its bottom than once it is over:
// what the scan holds for the directories it is in.
func liveAtBottom(root string) (uint64, error) {
	w, err := OpenWriter(root)
	if err != nil {
		return 0, err
	}
	defer w.Close()
	var bottom, after runtime.MemStats
	keep := func(rel string) bool {
		if strings.HasSuffix(rel, "/f") {
			runtime.GC()
			runtime.ReadMemStats(&bottom)
		}
		return false
	}
	_, err = w.Scan(context.Background(), "", everything, keep)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if bottom.HeapAlloc == 0 {
		return 0, fmt.Errorf("the scan never reached the bottom: %v", err)
	}
	return bottom.HeapAlloc - min(after.HeapAlloc, bottom.HeapAlloc), err
}

// TestFileGrownPastLimit: a file that grows past the limit between the
// walk's lstat and its read is refused too, not read.
func TestFileGrownPastLimit(t *testing.T) {
	t.Parallel()
	root := build(t, file("f", "small"))
	_, l := listRoot(t, root)
	s, err := l.lstat("f")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(root, "f"), tib); err != nil {
		t.Skip(err)
	}
	w := &walker{ctx: t.Context(), mode: hashing, cache: new(statCache[cacheEntry]).begin(time.Now()), reads: new(atomic.Int64), k: Checkout{MaxFileSize: 1 << 20}}
	_, err = w.read(l.r, "f", "f", s, nil)
	if !errors.Is(err, ErrFileTooLarge) || !strings.Contains(err.Error(), `"f" is 1 TiB`) {
		t.Errorf("err = %v, want the grown file refused", err)
	}
}
