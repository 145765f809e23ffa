package isolate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckObjectsFanOutGoneMeanwhile: a fan-out directory of the root's
// objects that is gone by the time it is read (git gc, run in the
// background by the user's git after a commit, packs loose objects and
// removes their directories) holds nothing to refuse; Prepare failed
// with "readdirent ... no such file or directory" on it. What is still
// there is checked as before.
func TestCheckObjectsFanOutGoneMeanwhile(t *testing.T) {
	t.Parallel()
	objects := t.TempDir()
	if err := checkDirFiles(filepath.Join(objects, "02")); err != nil {
		t.Errorf("a fan-out directory removed since its listing: %v, want nil", err)
	}
	pipe := filepath.Join(objects, "03")
	if err := os.MkdirAll(pipe, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", filepath.Join(pipe, "abcd")); err != nil {
		t.Fatal(err)
	}
	if err := checkDirFiles(pipe); !errors.Is(err, errNotPlain) {
		t.Errorf("a fan-out directory holding a link: %v, want errNotPlain", err)
	}
}
