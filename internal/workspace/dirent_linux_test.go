package workspace

import (
	"encoding/binary"
	"errors"
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
	_, l := listRoot(t, dir)
	var buf []byte
	for _, d := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"f", unix.DT_REG}, {"sub", unix.DT_UNKNOWN},
		{"link", unix.DT_UNKNOWN}, {"gone", unix.DT_UNKNOWN}, {"d", unix.DT_DIR}, {"p", unix.DT_FIFO}} {
		buf = append(buf, dirent(d.name, d.typ)...)
	}
	got, err := l.appendDirents(nil, buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []dirEntry{{"f", 0}, {"sub", fs.ModeDir}, {"link", fs.ModeSymlink}, {"d", fs.ModeDir}, {"p", fs.ModeNamedPipe}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(dirEntry{})); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if _, err := l.appendDirents(nil, dirent("x", unix.DT_REG)[:12]); err != nil {
		t.Errorf("a buffer shorter than a record: %v, want nothing read", err)
	}
	bad := dirent("x", unix.DT_REG)
	bad[16] = 200
	if _, err := l.appendDirents(nil, bad); err == nil {
		t.Error("a record longer than the buffer was read")
	}
}

// TestDirListLstat: the key a dirList's lstat computes from fstatat on the
// directory's descriptor is the one KeyOf makes of os.Lstat, for every
// kind of entry and mode bit; a symbolic link is the link itself, never
// followed; a name that is not a single component is refused.
func TestDirListLstat(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	mk := map[string]func(p string) error{
		"file":    func(p string) error { return os.WriteFile(p, []byte("x"), 0o644) },
		"exec":    func(p string) error { return os.WriteFile(p, []byte("#!"), 0o755) },
		"special": func(p string) error { return mkChmod(p, 0o644|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) },
		"dir":     func(p string) error { return os.Mkdir(p, 0o750) },
		"sticky":  func(p string) error { return mkdirChmod(p, 0o777|fs.ModeSticky) },
		"link":    func(p string) error { return os.Symlink(outside, p) },
		"dirlink": func(p string) error { return os.Symlink(filepath.Dir(outside), p) },
		"fifo":    func(p string) error { return unix.Mkfifo(p, 0o600) },
	}
	for name, f := range mk {
		if err := f(filepath.Join(dir, name)); err != nil {
			t.Fatalf("make %s: %v", name, err)
		}
	}
	_, l := listRoot(t, dir)
	for name := range mk {
		t.Run(name, func(t *testing.T) {
			fi, err := os.Lstat(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			s, err := l.lstat(name)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(KeyOf(fi), s.key, cmp.AllowUnexported(StatKey{})); diff != "" {
				t.Errorf("key (-KeyOf(os.Lstat) +lstat):\n%s", diff)
			}
			if !s.same(fi) {
				t.Error("same(os.Lstat) = false")
			}
		})
	}
	for _, bad := range []string{"", ".", "..", "dirlink/secret", "../x"} {
		if _, err := l.lstat(bad); err == nil {
			t.Errorf("lstat(%q) succeeded, want refused", bad)
		}
	}
	if _, err := l.lstat("gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("lstat(gone) = %v, want fs.ErrNotExist", err)
	}
}

func mkChmod(p string, mode fs.FileMode) error {
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

func mkdirChmod(p string, mode fs.FileMode) error {
	if err := os.Mkdir(p, 0o700); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// TestDirListSub: a subdirectory is opened from its parent's descriptor,
// and only a real directory is: a link to one (inside the root or out), a
// file and a FIFO are refused at once, never followed nor waited on.
func TestDirListSub(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	root := build(t, file("d/f", "x"), file("f", "x"), fifo("p"), link("in", "d"), link("out", outside))
	_, l := listRoot(t, root)
	for _, name := range []string{"f", "p", "in", "out", "gone", "..", "d/.."} {
		t.Run(name, func(t *testing.T) {
			returns(t, func() {
				if sub, err := l.sub(name); err == nil {
					sub.close()
					t.Errorf("sub(%q) opened it", name)
				}
			}, filepath.Join(root, "p"))
		})
	}
	sub, err := l.sub("d")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.close()
	if _, err := sub.lstat("f"); err != nil {
		t.Errorf("lstat of d/f in d: %v", err)
	}
}

// TestSwappedDirectoryRefused: a directory replaced (by another
// directory, or by a link to one outside the root) after its lstat, or
// after a dirList opened it, is refused where it is opened next: by
// openSameStat and dirList.subSame after the lstat, and a dirList reads
// its files through its own descriptor, so nothing is entered or read
// from another directory than the one the walk found.
func TestSwappedDirectoryRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	for name, swap := range map[string]func(p string) error{
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"link":      func(p string) error { return os.Symlink(outside, p) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := build(t, file("d/f", "x"))
			r, l := listRoot(t, dir)
			s, err := l.lstat("d")
			if err != nil {
				t.Fatal(err)
			}
			sub, err := l.sub("d")
			if err != nil {
				t.Fatal(err)
			}
			defer sub.close()
			p := filepath.Join(dir, "d")
			if err := os.Rename(p, p+".old"); err != nil {
				t.Fatal(err)
			}
			if err := swap(p); err != nil {
				t.Fatal(err)
			}
			if d, err := openSameStat(r, "d", s); err == nil {
				d.Close()
				t.Error("openSameStat entered the directory swapped in")
			}
			if d, err := l.subSame("d", s); err == nil {
				d.close()
				t.Error("subSame entered the directory swapped in")
			}
			want, err := os.Lstat(filepath.Join(p+".old", "f"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := sub.Lstat("f"); err != nil || !sameFile(got, want) {
				t.Errorf("the dirList read d/f elsewhere than in the directory it listed: %v", err)
			}
		})
	}
}

// listRoot opens dir as a root and a dirList of it, closed when t ends.
func listRoot(t *testing.T, dir string) (*os.Root, *dirList) {
	t.Helper()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	l, err := openListing(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.close)
	return r, l
}
