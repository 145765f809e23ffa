package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// TestDirListLstat: the key of a dirList's lstat, and of its listing, is
// the one KeyOf makes of os.Lstat, for every kind of entry and mode bit; a
// symbolic link is the link itself, never followed; a path out of the
// directory is refused.
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
			if !os.SameFile(s.fi, fi) {
				t.Error("SameFile(lstat, os.Lstat) = false")
			}
		})
	}
	entries, err := l.entries()
	if err != nil || len(entries) != len(mk) {
		t.Fatalf("entries: %d, %v; want %d", len(entries), err, len(mk))
	}
	for _, e := range entries {
		fi, err := os.Lstat(filepath.Join(dir, e.name))
		if err != nil {
			t.Fatal(err)
		}
		if e.st.key != KeyOf(fi) || e.typ != fi.Mode().Type() {
			t.Errorf("listing of %s: key %+v type %v, want %+v %v", e.name, e.st.key, e.typ, KeyOf(fi), fi.Mode().Type())
		}
	}
	for _, bad := range []string{"..", "dirlink/secret", "../x"} {
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

// TestDirListSub: a subdirectory is opened from its parent's root, and
// only the real directory its listing found is: a link to one (inside the
// root or out), a file and a FIFO are refused at once, never followed nor
// waited on, and so is a name the listing did not find.
func TestDirListSub(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	root := build(t, file("d/f", "x"), file("f", "x"), fifo("p"), link("in", "d"), link("out", outside))
	_, l := listRoot(t, root)
	d, err := l.lstat("d")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"f", "p", "in", "out", "gone", ".."} {
		t.Run(name, func(t *testing.T) {
			s, err := l.lstat(name)
			if err != nil {
				s = d // the directory's lstat, for a name that is another
			}
			returns(t, func() {
				if sub, err := l.subSame(name, s); err == nil {
					sub.close()
					t.Errorf("subSame(%q) opened it", name)
				}
			}, filepath.Join(root, "p"))
		})
	}
	sub, err := l.subSame("d", d)
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
// openSame and dirList.subSame after the lstat, and a dirList reads its
// files through its own root, so nothing is entered or read from another
// directory than the one the walk found.
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
			sub, err := l.subSame("d", s)
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
			if d, err := openSame(r, "d", s.fi); err == nil {
				d.Close()
				t.Error("openSame entered the directory swapped in")
			}
			if d, err := l.subSame("d", s); err == nil {
				d.close()
				t.Error("subSame entered the directory swapped in")
			}
			want, err := os.Lstat(filepath.Join(p+".old", "f"))
			if err != nil {
				t.Fatal(err)
			}
			if got, err := sub.lstat("f"); err != nil || !os.SameFile(got.fi, want) {
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
	return r, openListing(r)
}
