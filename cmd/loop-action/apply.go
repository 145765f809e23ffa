package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/delivery"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

type applyCmd struct {
	runFlags `embed:""`
}

func (applyCmd) Help() string {
	return `Brings a run's workspace from a branch: store into the loop root as
uncommitted changes: the certified workspace of a run that succeeded, the
latest checkpoint's of one that did not (the output says which). Only the
paths the run changed against the commit it started from are written; when
one of them holds a local edit (anything but that commit's version), apply
lists them, writes nothing and exits 2. The commit must be in the local
repository. .git, .loop and ignored files are never written.

Example:
  loop-action apply --state branch:loop-state
  git diff`
}

// workspaces are the stores that keep a run's workspace (branch:).
type workspaces interface {
	Workspace(ctx context.Context, runID string) (workspace.Snapshot, storer.EncodedObjectStorer, error)
}

func (c *applyCmd) Run(cl *cli, d *deps) error {
	store, cp, err := c.openRun(cl, d)
	if err != nil {
		return err
	}
	defer store.Close()
	ws, ok := store.(workspaces)
	if !ok {
		return &usageError{fmt.Errorf("apply run %q: the %s store keeps no workspace (the run's workspace is the loop root it ran in); apply runs from a branch: store, with --state branch:NAME", cp.RunID, c.State)}
	}
	snap, objs, err := ws.Workspace(d.ctx, cp.RunID)
	if errors.Is(err, state.ErrNotFound) {
		return &usageError{fmt.Errorf("apply run %q: its checkpoint holds no workspace", cp.RunID)}
	}
	if err != nil {
		return err
	}
	root := cl.root(d)
	if err := checkBase(root, cp); err != nil {
		return err
	}
	k, err := cl.checkout(d)
	if err != nil {
		return err
	}
	changes, err := delivery.Apply(d.ctx, delivery.Local{Root: root, Base: cp.Commit, Snapshot: string(snap), Objects: objs, Checkout: k})
	var edits *delivery.LocalEditsError
	if errors.As(err, &edits) {
		return &usageError{fmt.Errorf("apply run %q: %s local edits, so nothing was written:\n  %s\ncommit or stash them, then apply again",
			cp.RunID, phrase.Plural(len(edits.Paths), "path the run changed has", "paths the run changed have"), strings.Join(edits.Paths, "\n  "))}
	}
	if err != nil {
		return err
	}
	return writeApplied(d, cp, snap, changes)
}

// checkBase refuses a run whose starting commit the loop root's
// repository lacks: the paths the run changed are only known against it
// (measured against HEAD instead, apply would undo whatever HEAD changed
// since).
func checkBase(root string, cp *state.Checkpoint) error {
	if cp.Commit == "" {
		return &usageError{fmt.Errorf("apply run %q: it does not record the commit it started from", cp.RunID)}
	}
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return &usageError{fmt.Errorf("apply run %q: the loop root %q is not a git checkout: %w", cp.RunID, root, err)}
	}
	if _, err := repo.CommitObject(plumbing.NewHash(cp.Commit)); err != nil {
		return &usageError{fmt.Errorf("apply run %q: it started from commit %s, which this repository does not have; fetch it (git fetch origin %s) and apply again",
			cp.RunID, phrase.Short(cp.Commit), cp.Commit)}
	}
	return nil
}

// writeApplied says which workspace was applied, and what changed.
func writeApplied(d *deps, cp *state.Checkpoint, snap workspace.Snapshot, changes []delivery.Change) error {
	p := &printer{w: d.stdout}
	which := fmt.Sprintf("the latest workspace of run %s (snapshot %s, iteration %d, %s: not certified)", cp.RunID, snap.Short(), cp.Iteration, cp.Status)
	if cp.Status == state.Success && string(snap) == cp.Snapshot {
		which = fmt.Sprintf("the certified workspace of run %s (snapshot %s, success at iteration %d)", cp.RunID, snap.Short(), cp.Iteration)
	}
	if len(changes) == 0 {
		p.f("nothing to apply: the loop root already holds %s\n", which)
		return p.err
	}
	p.f("applied %s onto commit %s:\n", which, phrase.Short(cp.Commit))
	for _, c := range changes {
		p.f("  %-8s %s\n", c.Kind, c.Path)
	}
	p.f("%s changed, uncommitted: review them with git diff\n", phrase.Plural(len(changes), "path", "paths"))
	return p.err
}
