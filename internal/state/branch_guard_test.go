package state_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// refs lists a bare repository's refs and where they point.
func refs(t *testing.T, bare string) string {
	t.Helper()
	return gitfake.Git(t, "", "--git-dir="+bare, "for-each-ref", "--format=%(refname) %(objectname)")
}

// TestBranchRefusesOtherBranches: a branch: store named after a branch
// that is not a state branch — the default branch with its code, or one a
// checkpoint was once pushed onto — refuses to load or save, and leaves
// the remote as it was. A state branch, and a name not yet taken, work.
func TestBranchRefusesOtherBranches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		branch string
		seed   func(t *testing.T, work string) // commits on main in a clone of the remote
		refuse string                          // a substring of the error; "" when the store works
	}{
		{name: "the default branch", branch: "main", seed: func(t *testing.T, work string) {
			writeFile(t, filepath.Join(work, "README.md"), "# project\n")
			gitfake.Git(t, work, "add", "-A")
			gitfake.Git(t, work, "commit", "-q", "-m", "initial commit")
		}, refuse: `branch "main" refused as a state branch: its tip`},
		{name: "a checkpoint pushed onto code", branch: "main", seed: func(t *testing.T, work string) {
			writeFile(t, filepath.Join(work, "main.go"), "package main\n")
			writeFile(t, filepath.Join(work, "runs", "a", "b", "checkpoint.json"), "{}\n")
			gitfake.Git(t, work, "add", "-A")
			gitfake.Git(t, work, "commit", "-q", "-m", "checkpoint a/b iteration 1 (running)")
		}, refuse: `holds main.go, runs, not only runs/`},
		{name: "a fresh name", branch: "loop-state"},
		{name: "an orphan holding runs only", branch: "main", seed: func(t *testing.T, work string) {
			writeFile(t, filepath.Join(work, "runs", "other", "checkpoint.json"), "{}\n")
			gitfake.Git(t, work, "add", "-A")
			gitfake.Git(t, work, "commit", "-q", "-m", "made by hand")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bare := newBare(t, t.TempDir(), "origin.git")
			if tt.seed != nil {
				work := filepath.Join(t.TempDir(), "work")
				gitfake.Git(t, "", "init", "-q", "-b", "main", work)
				tt.seed(t, work)
				gitfake.Git(t, work, "push", "-q", bare, "main")
			}
			before := refs(t, bare)
			b, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: t.TempDir(), Branch: tt.branch, Remote: bare})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			_, loadErr := b.Load(t.Context(), "a/b")
			saveErr := b.Save(t.Context(), newCheckpoint("a/b"), commitFor(1))
			if tt.refuse == "" {
				if !errors.Is(loadErr, state.ErrNotFound) || saveErr != nil {
					t.Fatalf("Load = %v, Save = %v; want no checkpoint yet, then a save", loadErr, saveErr)
				}
				return
			}
			for _, err := range []error{loadErr, saveErr} {
				if !errors.Is(err, state.ErrRefusedBranch) || !strings.Contains(err.Error(), tt.refuse) {
					t.Errorf("error %v; want one wrapping ErrRefusedBranch saying %q", err, tt.refuse)
				}
			}
			if after := refs(t, bare); after != before {
				t.Errorf("the remote changed:\nbefore: %s\nafter:  %s", before, after)
			}
		})
	}
}

// TestBranchReopensItsOwnBranch: a state branch this store wrote is taken
// again by a store with a fresh cache, as in the next CI job.
func TestBranchReopensItsOwnBranch(t *testing.T) {
	t.Parallel()
	bare := newBare(t, t.TempDir(), "state.git")
	first := openBranch(t, bare, t.TempDir(), t.TempDir())
	if err := first.Save(t.Context(), newCheckpoint("a/b"), commitFor(1)); err != nil {
		t.Fatal(err)
	}
	next := openBranch(t, bare, t.TempDir(), t.TempDir())
	cp, err := next.Load(t.Context(), "a/b")
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Save(t.Context(), cp, commitFor(2)); err != nil {
		t.Fatal(err)
	}
}

func TestBranchRefusesNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"HEAD", "refs/heads/main", "refs/x", "-x", "a..b", "a b", "x.lock", "@", "a/", "a\x7fb"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: t.TempDir(), Branch: name, Remote: "file:///nowhere.git"})
			if !errors.Is(err, state.ErrRefusedBranch) {
				t.Errorf("OpenBranch(%q) = %v, want an error wrapping ErrRefusedBranch", name, err)
			}
		})
	}
}
