package isolate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/workspace"
)

// sparse makes rel, in dir, a sparse file of size bytes.
func sparse(t *testing.T, dir, rel string, size int64) {
	t.Helper()
	writeFile(t, dir, rel, "")
	if err := os.Truncate(filepath.Join(dir, filepath.FromSlash(rel)), size); err != nil {
		t.Skipf("no sparse file of %d bytes here: %v", size, err)
	}
}

// TestLargeFilesNotCopied: a file larger than Options.MaxFileSize is
// never read nor copied: a node's is refused at publish (and the root's
// version put back in its worktree), and one in the root fails Prepare,
// naming it. A sparse terabyte costs nothing to refuse; copying it would
// write a terabyte.
func TestLargeFilesNotCopied(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "base"})
	e.m.opts.MaxFileSize = 1 << 20
	dir := e.prepare("coder")
	sparse(t, dir, "big.bin", 1<<40)
	e.write("coder", "a", "changed")
	want := Report{
		Published: []Change{{Node: "coder", Path: "a", Kind: Modified}},
		Refused:   []Refusal{{Node: "coder", Path: "big.bin", Reason: ReasonTooLarge}},
	}
	if diff := cmp.Diff(want, e.publish("coder")); diff != "" {
		t.Errorf("Publish (-want +got):\n%s", diff)
	}
	if got := e.inRoot("big.bin"); got != "<none>" {
		t.Errorf("the root holds big.bin: %d bytes", len(got))
	}
	if _, err := os.Stat(filepath.Join(dir, "big.bin")); !os.IsNotExist(err) {
		t.Errorf("the worktree keeps big.bin after its refusal: %v", err)
	}

	sparse(t, e.root, "huge.bin", 1<<40)
	for _, node := range []string{"coder", "newcomer"} { // reseeded, and created
		_, err := e.m.Prepare(context.Background(), node)
		if !errors.Is(err, workspace.ErrFileTooLarge) {
			t.Errorf("Prepare(%q) with a terabyte in the root: %v, want an error wrapping ErrFileTooLarge", node, err)
		}
	}
}
