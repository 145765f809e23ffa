//go:build unix

package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCommitBaseNeverBlocksOnAFIFO: the tree the root was checked out
// from is read from the root's repository during a measurement, after
// agents ran; a named pipe an agent put in place of one of its objects
// fails the snapshot at once instead of hanging the run.
func TestCommitBaseNeverBlocksOnAFIFO(t *testing.T) {
	t.Parallel()
	root := build(t, file(".gitattributes", "*.bin filter=lfs -text\n"), file("big.bin", lfsPointer))
	runGit(t, root, "init", "-q")
	runGit(t, root, "add", "-A")
	runGit(t, root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
	tree := strings.TrimSpace(runGit(t, root, "rev-parse", "HEAD^{tree}"))
	obj := filepath.Join(root, ".git", "objects", tree[:2], tree[2:])
	if err := os.Remove(obj); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(obj, 0o644); err != nil {
		t.Fatal(err)
	}
	file("big.bin", "changed by an agent\n")(t, root)
	var err error
	returns(t, func() { _, err = NewHasher(root).Certify(t.Context()) }, obj)
	var ue *UnreproducibleError
	if err == nil || errors.As(err, &ue) {
		t.Errorf("Certify() = %v, want the base's tree to be unreadable", err)
	}
}
