//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAtomic: a write replaces the file whole with exactly its mode
// (whatever the umask), replaces a symlink at the path instead of writing
// through it, and fails at once, leaving nothing, on a FIFO put at its
// fixed temporary name (an open that blocked would hang the run).
func TestAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(outside, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, ".fifo.tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file string
		a          Atomic
		wantErr    error
	}{
		{"new, exact mode", "new", Atomic{Perm: 0o751, Sync: DirSynced}, nil},
		{"over a symlink", "link", Atomic{Perm: 0o600, Sync: FileSynced}, nil},
		{"a FIFO at the fixed temporary name", "fifo", Atomic{Perm: 0o644, Temp: ".fifo.tmp"}, ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.a.WriteFile(filepath.Join(dir, tt.file), []byte("new\n"))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("WriteFile = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if _, err := os.Lstat(filepath.Join(dir, tt.file)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the failed write left %q: %v", tt.file, err)
				}
				return
			}
			fi, err := os.Lstat(filepath.Join(dir, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(filepath.Join(dir, tt.file))
			if diff := cmp.Diff([]any{"new\n", tt.a.Perm}, []any{string(data), fi.Mode()}); diff != "" {
				t.Errorf("the file (-want +got):\n%s", diff)
			}
		})
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep\n" {
		t.Errorf("the write went through the symlink: %q", data)
	}
}

// TestEscapes: Escapes knows os.Root's refusal of a path out of it, and
// only that.
func TestEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Symlink("..", filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for name, want := range map[string]bool{"up/x": true, "../x": true, "missing": false} {
		_, err := r.Stat(name)
		if got := Escapes(err); got != want {
			t.Errorf("Escapes(Stat(%q) = %v) = %v, want %v", name, err, got, want)
		}
	}
}
