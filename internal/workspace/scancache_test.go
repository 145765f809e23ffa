package workspace

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestScanCache: a file whose stat did not change since a scan read it is
// not read again (its record is the same one); a changed file is, and so
// is a file modified too recently to vouch for; what the last scan did not
// find leaves the cache.
func TestScanCache(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for name, content := range map[string]string{"old.txt": "old\n", "edited.txt": "before\n", "fresh.txt": "fresh\n", "gone.txt": "x\n"} {
		p := filepath.Join(root, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "fresh.txt" {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	w, err := OpenWriter(root)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	all := func(string) bool { return true }
	c := NewScanCache()
	first, err := w.ScanCached(t.Context(), "", all, all, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "edited.txt"), []byte("after!\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "gone.txt")); err != nil {
		t.Fatal(err)
	}
	second, err := w.ScanCached(t.Context(), "", all, all, c)
	if err != nil {
		t.Fatal(err)
	}
	same := func(name string) bool { return &first[name].Data[0] == &second[name].Data[0] }
	if !same("old.txt") {
		t.Error("old.txt, unchanged and an hour old, was read again")
	}
	if same("fresh.txt") {
		t.Error("fresh.txt, modified just now, was taken from the cache: a same-size rewrite in the same tick would go unseen")
	}
	if got := string(second["edited.txt"].Data); got != "after!\n" {
		t.Errorf("edited.txt = %q, want what it holds now", got)
	}
	if _, ok := c.c.last["gone.txt"]; ok || len(c.c.last) != 3 {
		t.Errorf("the cache holds %d files (gone.txt: %v); want the 3 the last scan found", len(c.c.last), ok)
	}
}
