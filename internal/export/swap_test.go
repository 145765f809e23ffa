package export

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
)

// TestTempSwappedForLinkWritesNothingThrough: a process watching the
// parent swaps the temporary directory Write builds in for a symlink,
// between its creation and the first write: to a directory outside the
// parent, or to another loop's export beside it. Nothing is written
// through the link, and no link ends up as the export.
func TestTempSwappedForLinkWritesNothingThrough(t *testing.T) {
	for _, target := range []string{"victim", "parent/other-success"} {
		t.Run(target, func(t *testing.T) {
			base := t.TempDir()
			victim, parent := filepath.Join(base, target), filepath.Join(base, "parent")
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			swapped := false
			testHookTemp = func(tmp string) {
				if err := os.Rename(tmp, tmp+"-moved"); err != nil {
					t.Fatal(err)
				}
				rel, err := filepath.Rel(filepath.Dir(tmp), victim) // relative: os.Root refuses any absolute link
				if err != nil {
					t.Fatal(err)
				}
				symlink(t, rel, tmp)
				swapped = true
			}
			t.Cleanup(func() { testHookTemp = nil })
			dir, _, err := Write(parent, Input{Config: &loop.Config{Name: "v", Source: []byte("name = \"v\"\n")}})
			if !swapped {
				t.Fatal("the hook never ran")
			}
			if entries, _ := os.ReadDir(victim); len(entries) != 0 {
				t.Errorf("Write wrote %d entries through the swapped link (err %v)", len(entries), err)
			}
			if fi, lerr := os.Lstat(filepath.Join(parent, "v-success")); lerr == nil && !fi.IsDir() {
				t.Errorf("the export %s is a %v, not a directory (err %v)", dir, fi.Mode().Type(), err)
			}
		})
	}
}
