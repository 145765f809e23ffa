package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"
)

// certify is Hasher.Certify of root from base, with the problems it names.
func certify(t *testing.T, root string, base Base) (Snapshot, []Problem) {
	t.Helper()
	snap, err := NewHasherWith(root, Checkout{Base: base}).Certify(t.Context())
	var ue *UnreproducibleError
	switch {
	case errors.As(err, &ue):
		if ue.Snapshot != snap || snap == "" {
			t.Fatalf("Certify() = %q with an error holding %q", snap, ue.Snapshot)
		}
		return snap, ue.Problems
	case err != nil:
		t.Fatal(err)
	}
	return snap, nil
}

const lfsPointer = "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\nsize 12345\n"

// TestCertify: what a checkout of the snapshot writes is the workspace's
// bytes, or Certify names the file and the attribute.
func TestCertify(t *testing.T) {
	cases := []struct {
		name   string
		base   []op // committed first, when not nil: the tree the root was checked out from
		ops    []op // then written
		want   []string
		notGit bool // the snapshot is knowingly not git's: what git would convert is not converted
	}{
		{name: "eol=crlf added to an LF file", ops: []op{
			file(".gitattributes", "calc.sh text eol=crlf\n"), file("calc.sh", "echo 1\necho 2\n")},
			want: []string{"calc.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF"}},
		{name: "eol=crlf on a CRLF file, as a checkout wrote it", ops: []op{
			file(".gitattributes", "*.bat text eol=crlf\n"), file("run.bat", "@echo off\r\nexit /b 0\r\n")}},
		{name: "text on a CRLF file", ops: []op{
			file(".gitattributes", "*.txt text\n"), file("a.txt", "a\r\nb\r\n")},
			want: []string{"a.txt: .gitattributes:1 sets text; a checkout writes LF line endings where the workspace has CRLF"}},
		{name: "text=auto leaves a binary file alone", ops: []op{
			file(".gitattributes", "* text=auto\n"), file("b.bin", "a\x00\r\n"), file("c.txt", "x\n")}},
		{name: "binary macro", ops: []op{
			file(".gitattributes", "*.dat binary\n"), file("x.dat", "a\r\nb\n")}},
		{name: "ident on a literal $Id$", ops: []op{
			file(".gitattributes", "*.c ident\n"), file("m.c", "/* $Id$ */\n")},
			want: []string{`m.c: .gitattributes:1 sets ident; a checkout writes "$Id: a0749a0c2c0c92aeb7c5f5fa6ace589ef08aceeb $" where the workspace has "$Id$"`}},
		{name: "ident as a checkout expands it", ops: []op{
			file(".gitattributes", "*.c ident\n"), file("m.c", "/* $Id: a0749a0c2c0c92aeb7c5f5fa6ace589ef08aceeb $ */\n")}},
		{name: "export-subst is no conversion", ops: []op{
			file(".gitattributes", "version.txt export-subst\n"), file("version.txt", "$Format:%H$\n")}},
		{name: "an untouched LFS pointer", base: []op{
			file(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n"), file("big.bin", lfsPointer)}},
		{name: "a changed file under a filter", base: []op{
			file(".gitattributes", "*.bin filter=lfs diff=lfs merge=lfs -text\n"), file("big.bin", lfsPointer)},
			ops: []op{file("big.bin", "the real content\n"), file("new.bin", "new\n")},
			want: []string{
				"big.bin: .gitattributes:1 sets filter=lfs; loop-action runs no filter driver, and the file is not what the tree the run started from holds there: a checkout may write other bytes",
				"new.bin: .gitattributes:1 sets filter=lfs; loop-action runs no filter driver, and the file is not what the tree the run started from holds there: a checkout may write other bytes",
			}},
		{name: "working-tree-encoding", ops: []op{
			file(".gitattributes", "*.u16 working-tree-encoding=UTF-16LE\n*.u8 working-tree-encoding=utf-8\n"),
			file("a.u16", "a\x00"), file("a.u8", "a\n")},
			want:   []string{"a.u16: .gitattributes:1 sets working-tree-encoding=UTF-16LE; loop-action converts no encoding, and the file is not what the tree the run started from holds there: a checkout may write other bytes"},
			notGit: true},
		{name: "a deeper file wins", ops: []op{
			file(".gitattributes", "*.sh text eol=crlf\n"), file("sub/.gitattributes", "*.sh -text\n"),
			file("sub/x.sh", "a\n"), file("y.sh", "a\r\n")}},
		{name: "a link named .gitattributes is read as its target", ops: []op{
			link(".gitattributes", "*.sh text eol=crlf"), file("x.sh", "a\n")},
			want: []string{"x.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF"}},
		{name: "a byte order mark: the first line applies to git add, not to a checkout", ops: []op{
			file(".gitattributes", "\xef\xbb\xbf*.sh text eol=crlf\n"), file("x.sh", "a\r\n")},
			want: []string{"x.sh: .gitattributes:1 sets eol=crlf (text) for git add, which a checkout does not apply (the file is ignored, or git reads its first line otherwise); " +
				"a checkout writes LF line endings where the workspace has CRLF"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := build(t, tc.base...)
			base := NoBase
			if tc.base != nil {
				repo, _ := commitAll(t, root)
				base = headBase(t, repo)
			}
			for _, o := range tc.ops {
				o(t, root)
			}
			snap, problems := certify(t, root, base)
			var got []string
			for _, p := range problems {
				got = append(got, p.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if tc.base == nil && !tc.notGit {
				if want, _ := oracle(t, root); Snapshot(want) != snap {
					t.Errorf("Certify() = %s, git add -A records %s", snap, want)
				}
			}
		})
	}
}

// TestCertifyError: the error says which files, and why that matters.
func TestCertifyError(t *testing.T) {
	root := build(t, file(".gitattributes", "*.sh text eol=crlf\n"))
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		file(n+".sh", "x\n")(t, root)
	}
	_, err := NewHasherWith(root, Checkout{Base: NoBase}).Certify(t.Context())
	want := "a.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF; " +
		"b.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF; " +
		"c.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF; " +
		"d.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF; " +
		"e.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF; " +
		"and 2 more files: the checks measured bytes no checkout reproduces"
	if err == nil || err.Error() != want {
		t.Errorf("Certify() error:\n%v\nwant:\n%s", err, want)
	}
}

// TestAttributesInvalidateCache: a file whose stat is unchanged is read
// again when the attributes that convert it change, and only then.
func TestAttributesInvalidateCache(t *testing.T) {
	root := build(t, file("a.txt", "a\r\n"), file("b.md", "b\r\n"))
	old := time.Now().Add(-time.Hour)
	for _, n := range []string{"a.txt", "b.md"} {
		if err := os.Chtimes(filepath.Join(root, n), old, old); err != nil {
			t.Fatal(err)
		}
	}
	h := NewHasherWith(root, Checkout{Base: NoBase})
	snapshotEquals := func(what string) {
		t.Helper()
		got, err := h.Snapshot(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := oracle(t, root); Snapshot(want) != got {
			t.Fatalf("%s: Snapshot() = %s, git add -A records %s", what, got, want)
		}
	}
	snapshotEquals("no attributes")
	file(".gitattributes", "*.txt text\n")(t, root)
	before := h.reads.Load()
	snapshotEquals("*.txt text")
	if n := h.reads.Load() - before; n != 2 { // .gitattributes and a.txt, not b.md
		t.Errorf("%d files read after *.txt became text, want 2", n)
	}
}

// TestRestoreSmudges: Restore writes what a checkout writes — CRLF under
// eol=crlf, $Id$ expanded under ident — and leaves such files alone once
// they hold it.
func TestRestoreSmudges(t *testing.T) {
	src := build(t, file(".gitattributes", "*.bat text eol=crlf\n*.c ident\n"),
		file("run.bat", "@echo off\r\nexit /b 0\r\n"), file("m.c", "/* $Id$ */\n"), file("plain.txt", "a\r\n"))
	store := memory.NewStorage()
	snap, err := NewHasherWith(src, Checkout{Base: NoBase}).WriteObjects(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if _, err := Restore(t.Context(), dst, store, snap); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"run.bat":   "@echo off\r\nexit /b 0\r\n",
		"m.c":       "/* $Id: a0749a0c2c0c92aeb7c5f5fa6ace589ef08aceeb $ */\n",
		"plain.txt": "a\r\n",
	}
	got := map[string]string{}
	for name := range want {
		data, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		got[name] = string(data)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("restored files (-want +got):\n%s", diff)
	}
	if again, _ := certify(t, dst, NoBase); again != snap {
		t.Errorf("the restored root's snapshot is %s, want %s", again, snap)
	}
	if n, err := Restore(t.Context(), dst, store, snap); err != nil || n != 0 {
		t.Errorf("Restore(t.Context(), ) again = %d, %v; want 0, nil", n, err)
	}
}

// TestIgnoredAttributesAreNotACheckouts: an ignored .gitattributes is
// read by git add, but no commit of the snapshot carries it, so a
// checkout does not apply it: a CRLF file it cleans to LF (and would
// check out with CRLF) is checked out with LF.
func TestIgnoredAttributesAreNotACheckouts(t *testing.T) {
	t.Parallel()
	root := build(t, file(".gitignore", ".gitattributes\n"), file(".gitattributes", "*.txt text eol=crlf\n"), file("a.txt", "a\r\n"))
	snap, problems := certify(t, root, NoBase)
	if want, _ := oracle(t, root); Snapshot(want) != snap {
		t.Errorf("Certify() = %s, git add -A records %s", snap, want)
	}
	want := "a.txt: .gitattributes:1 sets eol=crlf (text) for git add, which a checkout does not apply (the file is ignored, or git reads its first line otherwise); " +
		"a checkout writes LF line endings where the workspace has CRLF"
	if len(problems) != 1 || problems[0].String() != want {
		t.Errorf("problems = %v, want %q", problems, want)
	}
}
