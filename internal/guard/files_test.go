package guard

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, dir, rel, content string, perm os.FileMode) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir, rel string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	switch {
	case os.IsNotExist(err):
		return "<none>"
	case err != nil:
		t.Fatal(err)
	case fi.Mode()&os.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		return "-> " + target
	case fi.IsDir():
		return "<dir>"
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRestore changes guarded files in every way and checks that Restore
// names each change and puts everything back, and leaves what it does not
// keep alone.
func TestRestore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "config", "base", 0o644)
	write(t, dir, "mode", "same", 0o644)
	write(t, dir, "gone", "was here", 0o644)
	write(t, dir, "linked", "a file", 0o644)
	write(t, dir, "hooks/pre-commit", "#!/bin/sh\n", 0o755)
	write(t, dir, "other", "not kept", 0o644)
	f := Files{Root: dir, Descend: func(string) bool { return true }, Keep: func(rel string) bool { return rel != "other" }}
	before, err := f.Scan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "config", "changed", 0o644)
	write(t, dir, "mode", "same", 0o755)
	write(t, dir, "new", "planted", 0o644)
	write(t, dir, "other", "changed, not kept", 0o644)
	for _, p := range []string{"gone", "linked", "hooks/pre-commit"} {
		if err := os.Remove(filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "hooks", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	changes, err := f.Restore(t.Context(), before)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Path+" "+c.What)
	}
	want := []string{"config modified", "gone deleted", "hooks/fifo created", "hooks/pre-commit deleted",
		"linked replaced by a symbolic link", "mode mode changed", "new created"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	for rel, want := range map[string]string{"config": "base", "mode": "same", "gone": "was here", "linked": "a file",
		"hooks/pre-commit": "#!/bin/sh\n", "new": "<none>", "hooks/fifo": "<none>", "other": "changed, not kept"} {
		if got := read(t, dir, rel); got != want {
			t.Errorf("%s after Restore = %q, want %q", rel, got, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "mode")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode after Restore: %v, %v; want 0644", fi.Mode(), err)
	}
	if again, err := f.Restore(t.Context(), before); err != nil || len(again) != 0 {
		t.Errorf("Restore again = %v, %v; want nothing to put back", again, err)
	}
}

// TestPutBackNotesParents puts back a file whose parent an agent replaced
// with a link: the link goes (never what it points to) and the note says so.
func TestPutBackNotesParents(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	write(t, dir, "hooks/pre-push", "mine", 0o755)
	f := Files{Root: dir, Descend: func(string) bool { return true }, Keep: func(rel string) bool { return rel != "hooks" }}
	before, err := f.Scan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "hooks")); err != nil {
		t.Fatal(err)
	}
	write(t, outside, "pre-push", "theirs", 0o755)
	if err := os.Symlink(outside, filepath.Join(dir, "hooks")); err != nil {
		t.Fatal(err)
	}
	now, err := f.Scan(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	changes := Diff(before, now)
	w, err := openWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var notes []string
	for _, c := range changes {
		note, err := PutBack(w, c)
		if err != nil {
			t.Fatalf("PutBack(%s): %v", c.Path, err)
		}
		notes = append(notes, c.Path+" "+c.What+note)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "hooks/pre-push deleted; hooks was a symbolic link to "+outside+" and is a directory again") {
		t.Errorf("notes = %q, want hooks/pre-push put back below a directory again", joined)
	}
	if got := read(t, dir, "hooks/pre-push"); got != "mine" {
		t.Errorf("hooks/pre-push = %q, want mine", got)
	}
	if got := read(t, outside, "pre-push"); got != "theirs" {
		t.Errorf("the link's target was written: %q", got)
	}
}
