//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRestoreFileCommandSwappedForAFIFO: an agent swaps a FIFO in at a
// file command's path between Restore's lstat (which saw the recorded
// file) and its read. The read must not block on the FIFO — a run whose
// guard hangs has no budget left that holds — and the file counts as
// changed, so it is replaced. Reading by path (os.ReadFile) blocked here
// until a writer came, which none does.
func TestRestoreFileCommandSwappedForAFIFO(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "set_output_1")
	mustWrite(t, p, "earlier=1\n")
	g, err := GuardFileCommands([]string{"GITHUB_OUTPUT=" + p})
	if err != nil || len(g.files) != 1 {
		t.Fatalf("GuardFileCommands: %v, %d files", err, len(g.files))
	}
	now, err := os.Lstat(p) // what Restore's lstat saw: the recorded file
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.Rename(p, p+".aside"))
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- g.files[0].unchanged(now) }()
	select {
	case same := <-done:
		if same {
			t.Error("a FIFO at the path counted as the recorded file")
		}
	case <-time.After(time.Minute): // a hang, not a timing: the read returns at once or never
		t.Fatal("reading the file command blocked on a FIFO swapped in after the lstat")
	}
}
