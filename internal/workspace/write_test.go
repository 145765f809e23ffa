package workspace

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tree lists what is under root, without following links: "path kind"
// lines, with a file's content and a link's target.
func tree(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			lines = append(lines, rel+" -> "+target)
		case d.IsDir():
			lines = append(lines, rel+"/")
		default:
			b, _ := os.ReadFile(p)
			lines = append(lines, rel+" "+info.Mode().String()+" "+string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

func openWriter(t *testing.T, root string) *Writer {
	t.Helper()
	w, err := OpenWriter(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// TestWriterNeverGoesThroughALink: a parent that is a symbolic link
// (outside the root or inside it) or a file is an error naming it, and
// nothing is written anywhere.
func TestWriterNeverGoesThroughALink(t *testing.T) {
	t.Parallel()
	ops := map[string]func(t *testing.T, w *Writer, rel string) error{
		"WriteFile": func(_ *testing.T, w *Writer, rel string) error { return w.WriteFile(rel, []byte("forged\n"), 0o644) },
		"Symlink":   func(_ *testing.T, w *Writer, rel string) error { return w.Symlink(rel, "/etc/passwd") },
		"Remove":    func(_ *testing.T, w *Writer, rel string) error { return w.Remove(rel) },
		"Copy": func(t *testing.T, w *Writer, rel string) error {
			src, fi := source(t, rel, file(rel, "forged\n"))
			_, err := w.Copy(t.Context(), rel, src, fi)
			return err
		},
	}
	parents := map[string]func(t *testing.T, root, outside string){
		"link outside": func(t *testing.T, root, outside string) { link("pkg", outside)(t, root) },
		"link inside":  func(t *testing.T, root, _ string) { link("pkg", "real")(t, root) },
		"file":         func(t *testing.T, root, _ string) { file("pkg", "a file\n")(t, root) },
	}
	for opName, op := range ops {
		for parentName, mk := range parents {
			t.Run(opName+"/"+parentName, func(t *testing.T) {
				t.Parallel()
				outside := build(t, file("a_test.go", "outside\n"))
				root := build(t, file("real/a_test.go", "inside\n"))
				mk(t, root, outside)
				before, beforeOut := tree(t, root), tree(t, outside)
				err := op(t, openWriter(t, root), "pkg/a_test.go")
				if !errors.Is(err, ErrParent) || !strings.Contains(err.Error(), `"pkg"`) {
					t.Errorf("err = %v, want ErrParent naming \"pkg\"", err)
				}
				if diff := cmp.Diff(before, tree(t, root)); diff != "" {
					t.Errorf("the root changed (-before +after):\n%s", diff)
				}
				if diff := cmp.Diff(beforeOut, tree(t, outside)); diff != "" {
					t.Errorf("the outside directory changed (-before +after):\n%s", diff)
				}
			})
		}
	}
}

// TestPutReplacesALinkedParent: putting back a recorded file below a
// parent an agent replaced with a link to an outside directory makes the
// parent a real directory again, says so, and writes nothing outside.
func TestPutReplacesALinkedParent(t *testing.T) {
	t.Parallel()
	outside := build(t, file("a_test.go", "outside\n"))
	root := build(t, file("keep.txt", "k\n"))
	link("pkg", outside)(t, root)
	beforeOut := tree(t, outside)
	w := openWriter(t, root)
	rep, err := w.Put("pkg/sub/a_test.go", Entry{Mode: 0o755, Data: []byte("recorded\n")})
	if err != nil {
		t.Fatal(err)
	}
	want := []Replaced{{Path: "pkg", Mode: rep[0].Mode, Target: outside}}
	if diff := cmp.Diff(want, rep); diff != "" || rep[0].Mode&fs.ModeSymlink == 0 {
		t.Errorf("replaced (-want +got):\n%s", diff)
	}
	wantTree := "keep.txt -rw-r--r-- k\n\npkg/\npkg/sub/\npkg/sub/a_test.go -rwxr-xr-x recorded\n"
	if diff := cmp.Diff(wantTree, tree(t, root)); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(beforeOut, tree(t, outside)); diff != "" {
		t.Errorf("the outside directory changed (-before +after):\n%s", diff)
	}
}

// TestWriteReplacesTheLinkItself: a link at the path is replaced, never
// written through; a directory there is replaced by Put only.
func TestWriteReplacesTheLinkItself(t *testing.T) {
	t.Parallel()
	outside := build(t, file("victim", "outside\n"))
	root := build(t, dir("d/x"))
	link("f", filepath.Join(outside, "victim"))(t, root)
	w := openWriter(t, root)
	if err := w.WriteFile("f", []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile("d", []byte("mine\n"), 0o644); err == nil {
		t.Error("WriteFile replaced a directory")
	}
	if _, err := w.Put("d", Entry{Mode: 0o644, Data: []byte("put\n")}); err != nil {
		t.Fatal(err)
	}
	want := "d -rw-r--r-- put\n\nf -rw------- mine\n"
	if diff := cmp.Diff(want, tree(t, root)); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "outside\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

func TestWriterRefusesPathsOutsideTheRoot(t *testing.T) {
	t.Parallel()
	w := openWriter(t, t.TempDir())
	for _, rel := range []string{"", "/etc/x", "../x", "a/../../x", "a//b", "./a", "a/.", "x\x00"} {
		if err := w.WriteFile(rel, nil, 0o644); err == nil {
			t.Errorf("WriteFile(%q) succeeded", rel)
		}
		if _, _, err := w.Lookup(rel); err == nil {
			t.Errorf("Lookup(%q) succeeded", rel)
		}
	}
}

// TestWriterTakesABackslashAsPartOfAName: a backslash separates nothing;
// a file an agent named `..\x` or `a\b` is written and read under that
// very name, in its own directory.
func TestWriterTakesABackslashAsPartOfAName(t *testing.T) {
	t.Parallel()
	root := build(t, dir("d"))
	w := openWriter(t, root)
	for _, rel := range []string{`d/a\b`, `d/..\x`} {
		if err := w.WriteFile(rel, []byte(rel), 0o644); err != nil {
			t.Fatal(err)
		}
		if e, ok, err := w.Lookup(rel); err != nil || !ok || string(e.Data) != rel {
			t.Errorf("Lookup(%q) = %q, %t, %v", rel, e.Data, ok, err)
		}
	}
	want := "d/\nd/..\\x -rw-r--r-- d/..\\x\nd/a\\b -rw-r--r-- d/a\\b"
	if diff := cmp.Diff(want, tree(t, root)); diff != "" {
		t.Errorf("root (-want +got):\n%s", diff)
	}
}

// TestLookupNeitherFollowsNorBlocks: a link is recorded as a link, a path
// below one is not in the tree, and a named pipe is recorded by its mode
// without being opened for reading (which would block).
func TestLookupNeitherFollowsNorBlocks(t *testing.T) {
	t.Parallel()
	root := build(t, file("real/f", "content\n"), link("ln", "real"), fifo("pipe"))
	w := openWriter(t, root)
	done := make(chan struct{})
	var got []string
	go func() {
		defer close(done)
		for _, rel := range []string{"real/f", "ln", "ln/f", "pipe", "missing", "real/f/below"} {
			e, ok, err := w.Lookup(rel)
			got = append(got, rel+": "+describe(e, ok, err))
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a guard against a hang, not a timing check
		t.Fatal("Lookup blocked")
	}
	want := []string{
		"real/f: a file 8 bytes content\n",
		"ln: a symbolic link 4 bytes real",
		"ln/f: absent",
		"pipe: a named pipe 0 bytes ",
		"missing: absent",
		"real/f/below: absent",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func describe(e Entry, ok bool, err error) string {
	switch {
	case err != nil:
		return "error " + err.Error()
	case !ok:
		return "absent"
	}
	n := int64(len(e.Data))
	if e.Mode.IsRegular() {
		n = e.Size
	}
	return fmt.Sprintf("%s %d bytes %s%s", e.Kind(), n, e.Data, e.Err)
}

func sumOf(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// TestScanRecordsWithoutFollowing: Scan enters only real directories that
// descend selects and records links as links.
func TestScanRecordsWithoutFollowing(t *testing.T) {
	t.Parallel()
	outside := build(t, file("secret", "s\n"))
	root := build(t, file("a/x.go", "x\n"), file("a/b/y.go", "y\n"), file("skip/z.go", "z\n"), link("a/out", outside))
	w := openWriter(t, root)
	got, err := w.Scan(t.Context(), "", func(rel string) bool { return rel != "skip" }, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for rel, e := range got {
		names = append(names, rel+" "+e.Kind())
	}
	want := []string{"a a directory", "a/b a directory", "a/b/y.go a file", "a/out a symbolic link", "a/x.go a file", "skip a directory"}
	slices.Sort(names)
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if sub, err := w.Scan(t.Context(), "a/out", func(string) bool { return true }, func(string) bool { return true }); err != nil || len(sub) != 0 {
		t.Errorf("Scan below a link = %v, %v; want nothing", sub, err)
	}
}

func TestEntryEqual(t *testing.T) {
	t.Parallel()
	f := func(mode fs.FileMode, data string) Entry {
		return Entry{Mode: mode, Data: []byte(data), Size: int64(len(data)), Sum: sumOf(data)}
	}
	tests := []struct {
		name string
		a, b Entry
		want bool
	}{
		{"same file", f(0o644, "x"), f(0o644, "x"), true},
		{"content", f(0o644, "x"), f(0o644, "y"), false},
		{"mode", f(0o644, "x"), f(0o755, "x"), false},
		{"setuid", f(0o755, "x"), f(0o755|fs.ModeSetuid, "x"), false},
		{"kind", f(0o644, "x"), f(fs.ModeSymlink|0o777, "x"), false},
		{"link perms ignored", f(fs.ModeSymlink|0o777, "t"), f(fs.ModeSymlink|0o755, "t"), true},
		{"link target", f(fs.ModeSymlink, "t"), f(fs.ModeSymlink, "u"), false},
		{"pipe", Entry{Mode: fs.ModeNamedPipe | 0o644}, f(0o644, ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.a.Equal(tt.b); got != tt.want {
				t.Errorf("Equal = %t, want %t", got, tt.want)
			}
		})
	}
}

// TestScanSkipsUnreadableDirectories: a directory Scan may not read (a
// container's data directory owned by another user) holds nothing, and is
// no error.
func TestScanSkipsUnreadableDirectories(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads every directory")
	}
	root := build(t, file("a/x", "x\n"), file("locked/y", "y\n"))
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(root, "locked"), 0o755) })
	got, err := openWriter(t, root).Scan(t.Context(), "", func(string) bool { return true }, func(rel string) bool { return !strings.HasSuffix(rel, "locked") && rel != "a" })
	if err != nil || len(got) != 1 {
		t.Errorf("Scan = %v, %v; want a/x alone", got, err)
	}
}
