package guard

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/workspace"
)

func openWriter(dir string) (*workspace.Writer, error) { return workspace.OpenWriter(dir) }

func apply(t *testing.T, dir string, l Layout) {
	t.Helper()
	r, err := workspace.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() { done <- l.Apply(r) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Apply blocked")
	}
}

func TestLayoutApply(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	write(t, outside, "config", "outside", 0o644)
	write(t, dir, "HEAD", "old\n", 0o644)
	write(t, dir, "refs/heads/agents-branch", "x", 0o644)
	write(t, dir, "objects/ab/cdef", "an object", 0o444)
	write(t, dir, "objects/info/alternates", "/elsewhere\n", 0o644)
	write(t, dir, "objects/info/grafts", "planted", 0o644)
	write(t, dir, "index", "kept", 0o644)
	write(t, dir, "hooks/pre-commit", "#!/bin/sh\n", 0o755)
	if err := os.Symlink(filepath.Join(outside, "config"), filepath.Join(dir, "config")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "shallow"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "info"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := Layout{
		Files: map[string][]byte{"HEAD": []byte("new\n"), "config": []byte("[core]\n"), "shallow": []byte("abc\n"),
			"objects/info/alternates": []byte("/objects\n"), "info/exclude": []byte("/.loop/\n")},
		Dirs: []string{"objects/info", "refs/heads", "refs/tags"},
		Keep: func(rel string, e fs.DirEntry) bool {
			return rel == "index" || strings.HasPrefix(rel, "objects/") && !strings.HasPrefix(rel, "objects/info")
		},
	}
	apply(t, dir, l)
	for rel, want := range map[string]string{
		"HEAD": "new\n", "config": "[core]\n", "shallow": "abc\n", "info/exclude": "/.loop/\n",
		"objects/info/alternates": "/objects\n", "objects/info/grafts": "<none>", "objects/ab/cdef": "an object",
		"index": "kept", "hooks": "<none>", "refs/heads": "<dir>", "refs/heads/agents-branch": "<none>", "refs/tags": "<dir>",
	} {
		if got := read(t, dir, rel); got != want {
			t.Errorf("%s = %q, want %q", rel, got, want)
		}
	}
	if got := read(t, outside, "config"); got != "outside" {
		t.Errorf("written through a link: %q", got)
	}
	// A directory already as the layout says is left as it is.
	fi, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil {
		t.Fatal(err)
	}
	apply(t, dir, l)
	if again, err := os.Stat(filepath.Join(dir, "HEAD")); err != nil || !os.SameFile(fi, again) || !again.ModTime().Equal(fi.ModTime()) {
		t.Errorf("HEAD was written again: %v", err)
	}
}
