//go:build unix

package workspace

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

// fifo creates a named pipe that nobody writes to.
func fifo(path string) op {
	return func(t *testing.T, root string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		mkdirAll(t, filepath.Dir(p))
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// returns runs f and fails the test if f is still blocked after a long
// while (a FIFO opened for reading blocks until a writer comes); it then
// opens the FIFOs at unblock for writing, which releases f.
func returns(t *testing.T, f func(), unblock ...string) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return
	case <-time.After(10 * time.Second):
		t.Errorf("still blocked after 10s on a FIFO of %s", unblock)
	}
	for {
		for _, p := range unblock {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
		select {
		case <-done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	root := build(t, file("small", "hello\n"), file("big", "0123456789"), dir("dir"), fifo("fifo"),
		link("escape", filepath.Join(outside, "secret")), file("exactly", "12345678"))
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock, err := net.Listen("unix", filepath.Join(root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct {
		name    string
		want    string
		wantErr error
	}{
		{"small", "hello\n", nil},
		{"exactly", "12345678", nil},
		{"big", "", ErrTooLarge},
		{"dir", "", ErrNotRegular},
		{"fifo", "", ErrNotRegular},
		{"sock", "", ErrNotRegular},
		{"missing", "", fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []byte
			var err error
			returns(t, func() { got, err = ReadFile(r, tt.name, 8) }, filepath.Join(root, tt.name))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadFile(%q) error = %v, want %v", tt.name, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("ReadFile(%q) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	if _, err := ReadFile(r, "escape", 100); err == nil {
		t.Errorf("ReadFile followed a symbolic link out of the root")
	}
}

// TestReadersNeverBlockOnFIFO: every reader of the package opens what it
// found through OpenFile, OpenDir or OpenRoot, so a FIFO put where a file
// or a directory was (after the reader's lstat) makes it fail or skip the
// path at once, never wait for a writer.
func TestReadersNeverBlockOnFIFO(t *testing.T) {
	t.Parallel()
	root := build(t, fifo("fifo"))
	fifoPath := filepath.Join(root, "fifo")
	r, err := OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := &walker{ctx: t.Context(), mode: hashing, cache: new(statCache[cacheEntry]).begin(time.Now()), reads: new(atomic.Int64)}
	o := &walker{ctx: t.Context(), mode: storing, cache: new(statCache[cacheEntry]).begin(time.Now()), s: memory.NewStorage(), root: r, reads: new(atomic.Int64)}
	mem := memory.NewStorage()
	x := &restorer{ctx: t.Context(), s: mem}
	emptyBlob := storeObject(t, mem, plumbing.BlobObject, nil)
	dirInfo, err := os.Lstat(root)
	if err != nil {
		t.Fatal(err)
	}
	fifoInfo, err := os.Lstat(fifoPath)
	if err != nil {
		t.Fatal(err)
	}
	fileInfo := regularInfo(t)
	ignores := build(t, fifo(".gitignore"), fifo("d/.gitignore"), fifo(".git/info/exclude"))
	dst, err := OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	tests := map[string]func() error{
		"HashFile": func() error { _, _, err := HashFile(t.Context(), r, "fifo", fileInfo); return err },
		"walker.subdir": func() error {
			_, _, err := w.subdir(openListing(r), []string{"fifo"}, statOf(dirInfo), nil)
			return err
		},
		"walker.readBlob": func() error { _, _, _, err := o.readBlob(r, "fifo", fileInfo, "fifo", nil); return err },
		"CopyNew":         func() error { _, err := CopyNew(t.Context(), r, dst, "fifo", fileInfo); return err },
		"Writer.Copy": func() error {
			_, err := openWriter(t, t.TempDir()).Copy(t.Context(), "fifo", r, fileInfo)
			return err
		},
		"Matcher.Included": func() error {
			r, err := OpenRoot(ignores)
			if err != nil {
				return err
			}
			defer r.Close()
			m, err := NewMatcher(r)
			if err == nil {
				_, err = m.Included("d/x")
			}
			return err
		},
		"openSame": func() error { _, err := openSame(r, "fifo", dirInfo); return err },
		"walker.cached": func() error {
			_, err := o.cached(&entry{obj: &toStore{rel: "fifo", unverified: true}})
			return err
		},
		"restorer.keep": func() error {
			_, err := x.keep(r, "fifo", emptyBlob, -1, fifoInfo, 0o644)
			return err
		},
		"restorer.subdir": func() error { // replaces the FIFO: in a root of its own
			r, err := OpenRoot(build(t, fifo("fifo")))
			if err != nil {
				return err
			}
			defer r.Close()
			return x.subdir(r, []string{"fifo"}, nil, object.TreeEntry{Name: "fifo", Hash: plumbing.ZeroHash})
		},
		"restorer.remove": func() error { return x.remove(r, []string{"fifo"}, nil, dirInfo) },
		"OpenRoot":        func() error { _, err := OpenRoot(fifoPath); return err },
	}
	for name, f := range tests {
		t.Run(name, func(t *testing.T) {
			returns(t, func() { _ = f() }, fifoPath, at(ignores, ".gitignore"), at(ignores, "d/.gitignore"), at(ignores, ".git/info/exclude"))
		})
	}
}

// regularInfo returns the lstat result of a regular file: a reader given
// it for a path that is now a FIFO stands for one that found a file there
// just before an agent swapped the FIFO in.
func regularInfo(t *testing.T) fs.FileInfo {
	t.Helper()
	p := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestListDirNeverBlocksOnFIFO: a FIFO where a directory was fails the
// listing at once; a directory is listed.
func TestListDirNeverBlocksOnFIFO(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ListDir(filepath.Join(dir, "pipe"))
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("ListDir listed a FIFO")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ListDir blocked on a FIFO")
	}
	entries, err := ListDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "pipe" {
		t.Errorf("ListDir(dir) = %v, %v; want the one entry pipe", entries, err)
	}
}
