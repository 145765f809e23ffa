package delivery

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// withBat is a project with Windows scripts a checkout writes with CRLF
// (and nothing tracked that a snapshot leaves out).
func withBat() files {
	fs := maps.Clone(project)
	delete(fs, "tracked.log")
	delete(fs, ".loop/committed")
	fs[".gitattributes"] = "*.bat text eol=crlf\n"
	fs["run.bat"] = "@echo off\nexit /b 0\n" // committed as git add stores it: LF
	return fs
}

// TestCRLFRepositoryRoundTrips: in a repository whose .gitattributes has
// a checkout write *.bat with CRLF, a checkout's snapshot is the commit's
// tree as git computes it (so the checkout check passes), an agent's CRLF
// edit is certified, the delivered commit's fresh clone holds exactly the
// bytes measured, and Apply and Restore write them back with CRLF.
func TestCRLFRepositoryRoundTrips(t *testing.T) {
	bare, head := origin(t, withBat())
	root := clone(t, "file://"+bare)
	if data, _ := os.ReadFile(filepath.Join(root, "run.bat")); string(data) != "@echo off\r\nexit /b 0\r\n" {
		t.Fatalf("the checkout wrote run.bat as %q", data)
	}
	snap, err := workspace.NewHasher(root).Certify(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	gitfake.Git(t, root, "add", "-A")
	if tree := strings.TrimSpace(gitfake.Git(t, root, "write-tree")); string(snap) != tree {
		t.Errorf("the checkout's snapshot is %s, git add -A && git write-tree says %s", snap, tree)
	}
	if cs, err := CommitSnapshot(root, head); err != nil || cs != string(snap) {
		t.Errorf("CommitSnapshot = %s, %v; the checkout's snapshot is %s", cs, err, snap)
	}

	const measured = "@echo off\r\necho fixed\r\nexit /b 0\r\n"
	edit1("run.bat", measured)(t, root)
	certified, err := workspace.NewHasher(root).Certify(t.Context())
	if err != nil {
		t.Fatalf("Certify of a CRLF edit: %v", err)
	}
	s := spec(root, head)
	s.Snapshot = string(certified)
	d, err := Build(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Snapshot != string(certified) {
		t.Errorf("the delivered commit's snapshot is %s, certified %s", d.Snapshot, certified)
	}
	checkPushed(t, d, bare, head)
	co := filepath.Join(t.TempDir(), "co")
	gitfake.Git(t, "", "clone", "-q", "--branch=pr", "file://"+bare, co)
	if data, _ := os.ReadFile(filepath.Join(co, "run.bat")); string(data) != measured {
		t.Errorf("a fresh clone of the delivered commit has run.bat %q, the checks measured %q", data, measured)
	}
	if out := gitfake.Git(t, co, "status", "--porcelain"); out != "" {
		t.Errorf("git status of the fresh clone: %q", out)
	}

	// The same workspace, stored as a state branch stores it, applied to a
	// person's checkout and restored into an empty directory.
	st := memory.NewStorage()
	stored, err := workspace.NewHasher(root).WriteObjects(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	mine := clone(t, "file://"+bare)
	if _, err := Apply(context.Background(), Local{Root: mine, Base: head, Snapshot: string(stored), Objects: st}); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	if _, err := workspace.Restore(t.Context(), empty, st, stored); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{mine, empty} {
		if data, _ := os.ReadFile(filepath.Join(dir, "run.bat")); string(data) != measured {
			t.Errorf("run.bat written as %q, want %q", data, measured)
		}
	}
}

// TestUnreproducibleDelivery: an agent's .gitattributes that makes a
// checkout write calc.sh with CRLF (the checks ran on LF): a fresh clone
// of the commit built from that root does not hold what was measured, and
// Certify, which the gate's snapshot goes through, says so.
func TestUnreproducibleDelivery(t *testing.T) {
	bare, head := origin(t, project, "tracked.log")
	root := clone(t, "file://"+bare)
	const measured = "echo $(($1 + $2))\n"
	both(edit1("calc.sh", measured), edit1(".gitattributes", "calc.sh text eol=crlf\n"))(t, root)
	_, err := workspace.NewHasher(root).Certify(t.Context())
	var ue *workspace.UnreproducibleError
	if !errors.As(err, &ue) || len(ue.Problems) != 1 || ue.Problems[0].Path != "calc.sh" {
		t.Fatalf("Certify: %v; want calc.sh named", err)
	}
	d, err := Build(context.Background(), spec(root, head)) // partial work: nothing certified
	if err != nil {
		t.Fatal(err)
	}
	checkPushed(t, d, bare, head)
	co := filepath.Join(t.TempDir(), "co")
	gitfake.Git(t, "", "clone", "-q", "--branch=pr", "file://"+bare, co)
	if data, _ := os.ReadFile(filepath.Join(co, "calc.sh")); string(data) == measured {
		t.Errorf("the clone has calc.sh as measured (%q): the case shows nothing", data)
	}
}
