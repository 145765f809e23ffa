package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// source builds a tree with ops and returns a root opened on it and the
// lstat result of rel there.
func source(t *testing.T, rel string, ops ...op) (*os.Root, os.FileInfo) {
	t.Helper()
	dir := build(t, ops...)
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	fi, err := r.Lstat(rel)
	if err != nil {
		t.Fatal(err)
	}
	return r, fi
}

// TestCopy: Copy writes what the source holds, with its execute bit, and
// says so (blob id, stat keys). It rewrites in place only a file with no
// other hard link; a link, a file with other hard links or an empty
// directory is replaced, never written through.
func TestCopy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rel     string
		src     op
		dst     []op // the destination root, besides outside/victim
		want    string
		inPlace bool // the file at x keeps its inode
	}{
		{"new file, new parents", "a/b/x", fileMode("a/b/x", "new\n", 0o755), nil, "a/ a/b/ a/b/x -rwxr-xr-x new\n", false},
		{"rewritten in place", "x", file("x", "new\n"), []op{fileMode("x", "an old, longer content\n", 0o755)}, "x -rw-r--r-- new\n", true},
		{"over a link", "x", file("x", "new\n"), []op{link("x", "../outside/victim")}, "x -rw-r--r-- new\n", false},
		{"over an empty directory", "x", file("x", "new\n"), []op{dir("x")}, "x -rw-r--r-- new\n", false},
		{"a link", "x", link("x", "a/b"), []op{file("x", "old\n")}, "x -> a/b", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rel := tt.rel
			src, fi := source(t, rel, tt.src)
			base := build(t, file("outside/victim", "victim\n"), dir("root"))
			root := filepath.Join(base, "root")
			for _, o := range tt.dst {
				o(t, root)
			}
			before, _ := os.Lstat(filepath.Join(root, rel))
			c, err := openWriter(t, root).Copy(t.Context(), rel, src, fi)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, oneLine(tree(t, root))); diff != "" {
				t.Errorf("root (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(base, "outside", "victim")); string(b) != "victim\n" {
				t.Errorf("written through a link: victim = %q", b)
			}
			after, err := os.Lstat(filepath.Join(root, rel))
			if err != nil {
				t.Fatal(err)
			}
			if got := before != nil && os.SameFile(before, after); got != tt.inPlace {
				t.Errorf("rewritten in place = %t, want %t", got, tt.inPlace)
			}
			checkCopied(t, c, src, rel, after)
		})
	}
}

// checkCopied checks that c names the blob at rel in src, and stat keys of
// the source and of the copy (whose lstat result is dst).
func checkCopied(t *testing.T, c Copied, src *os.Root, rel string, dst os.FileInfo) {
	t.Helper()
	fi, err := src.Lstat(rel)
	if err != nil {
		t.Fatal(err)
	}
	want := Copied{Mode: fi.Mode(), Src: KeyOf(fi), Dst: KeyOf(dst)}
	if fi.Mode().IsRegular() {
		want.ID, _, err = HashFile(t.Context(), src, rel, fi)
	} else {
		var target string
		target, err = src.Readlink(rel)
		want.ID = LinkID(target)
	}
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, c, cmp.AllowUnexported(StatKey{})); diff != "" {
		t.Errorf("Copied (-want +got):\n%s", diff)
	}
}

// TestCopyKeepsOtherHardLinks: a file at the destination that has another
// hard link (an agent linked it to a file outside the root, say) is
// replaced, not rewritten: the other link keeps its content.
func TestCopyKeepsOtherHardLinks(t *testing.T) {
	t.Parallel()
	src, fi := source(t, "x", file("x", "new\n"))
	base := build(t, file("outside/victim", "victim\n"), dir("root"))
	if err := os.Link(filepath.Join(base, "outside", "victim"), filepath.Join(base, "root", "x")); err != nil {
		t.Skip(err)
	}
	if _, err := openWriter(t, filepath.Join(base, "root")).Copy(t.Context(), "x", src, fi); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "outside", "victim")); string(b) != "victim\n" {
		t.Errorf("written through a hard link: victim = %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(base, "root", "x")); string(b) != "new\n" {
		t.Errorf("x = %q, want the copy", b)
	}
}

// TestCopyRefusesANonEmptyDirectory: a directory holding something is in
// the way of a copy, and is left as it is.
func TestCopyRefusesANonEmptyDirectory(t *testing.T) {
	t.Parallel()
	src, fi := source(t, "x", file("x", "new\n"))
	root := build(t, file("x/keep", "k\n"))
	if _, err := openWriter(t, root).Copy(t.Context(), "x", src, fi); err == nil {
		t.Error("Copy over a directory holding a file succeeded")
	}
	if diff := cmp.Diff("x/ x/keep -rw-r--r-- k\n", oneLine(tree(t, root))); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
}

// TestCopyNewKeepsTheTime: a copy into a new tree keeps the source's
// modification time, so that a stat cache can trust it at once.
func TestCopyNewKeepsTheTime(t *testing.T) {
	t.Parallel()
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	dir := build(t, file("x", "x\n"))
	chtimes(t, filepath.Join(dir, "x"), old)
	src, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	fi, err := src.Lstat("x")
	if err != nil {
		t.Fatal(err)
	}
	dst, err := OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	c, err := CopyNew(t.Context(), src, dst, "x", fi)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.Lstat("x")
	if err != nil || !got.ModTime().Equal(old) || KeyOf(got) != c.Dst {
		t.Errorf("copy: %v, %v (key %v); want mtime %v and key %v", got.ModTime(), err, KeyOf(got), old, c.Dst)
	}
	if _, err := CopyNew(t.Context(), src, dst, "x", fi); err == nil {
		t.Error("CopyNew over an existing file succeeded")
	}
}

// oneLine joins the lines of a tree listing with spaces.
func oneLine(s string) string {
	out := []byte(s)
	for i, b := range out {
		if b == '\n' && i != len(out)-1 {
			out[i] = ' '
		}
	}
	return string(out)
}
