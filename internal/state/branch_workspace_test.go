package state_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// TestBranchWorkspace: another clone reads a run's checkpointed workspace
// without restoring it: its snapshot, and a store holding its objects.
func TestBranchWorkspace(t *testing.T) {
	t.Parallel()
	origin := projectOrigin(t)
	a := cloneDepth1(t, origin)
	storeA, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: a, Branch: "loop-state"})
	if err != nil {
		t.Fatal(err)
	}
	defer storeA.Close()
	writeFile(t, filepath.Join(a, "notes", "fix.txt"), "the agents' work\n")
	cp := newCheckpoint("project/main")
	cp.Iteration = 1
	if err := storeA.Save(t.Context(), cp, commitFor(1)); err != nil {
		t.Fatal(err)
	}
	want, err := workspace.NewHasher(a).Snapshot(t.Context())
	if err != nil {
		t.Fatal(err)
	}

	b := cloneDepth1(t, origin)
	storeB, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: b, Branch: "loop-state"})
	if err != nil {
		t.Fatal(err)
	}
	defer storeB.Close()
	got, objs, err := storeB.Workspace(t.Context(), cp.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Workspace = %s, want clone A's %s", got, want)
	}
	if _, err := object.GetTree(objs, plumbing.NewHash(string(got))); err != nil {
		t.Errorf("the store lacks the workspace's tree: %v", err)
	}
	if now, err := workspace.NewHasher(b).Snapshot(t.Context()); err != nil || now == want {
		t.Errorf("Workspace changed clone B (%s, %v)", now, err)
	}
	if _, _, err := storeB.Workspace(t.Context(), "project/none"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Workspace of a run without a checkpoint: %v, want ErrNotFound", err)
	}
}
