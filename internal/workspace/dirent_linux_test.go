package workspace

import (
	"encoding/binary"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// dirent is one getdents64 record: inode, offset, length, type, name.
func dirent(name string, typ byte) []byte {
	n := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b, 1)
	binary.LittleEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[19:], name)
	return b
}

// TestAppendDirents: a listing's types are taken as the kernel gives them;
// an entry of unknown type (a file system without d_type) is looked at
// with lstat, one gone meanwhile is left out, and . and .. are skipped.
func TestAppendDirents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf []byte
	for _, d := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"f", unix.DT_REG}, {"sub", unix.DT_UNKNOWN},
		{"link", unix.DT_UNKNOWN}, {"gone", unix.DT_UNKNOWN}, {"d", unix.DT_DIR}, {"p", unix.DT_FIFO}} {
		buf = append(buf, dirent(d.name, d.typ)...)
	}
	got, err := appendDirents(nil, r, buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirEntry{{"f", 0}, {"sub", fs.ModeDir}, {"link", fs.ModeSymlink}, {"d", fs.ModeDir}, {"p", fs.ModeNamedPipe}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(dirEntry{})); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if _, err := appendDirents(nil, r, dirent("x", unix.DT_REG)[:12]); err != nil {
		t.Errorf("a buffer shorter than a record: %v, want nothing read", err)
	}
	bad := dirent("x", unix.DT_REG)
	bad[16] = 200
	if _, err := appendDirents(nil, r, bad); err == nil {
		t.Error("a record longer than the buffer was read")
	}
}
