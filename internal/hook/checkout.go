package hook

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkout makes the isolated checkout, a detached git worktree at
// .loop/hook/checkout, hold exactly commit: tracked files as committed,
// nothing untracked (ignored files stay, as a build cache). It is reused
// between runs, so only what changed is written. The worktree's HEAD is
// detached: no branch is created or moved.
func (r *Repo) checkout(ctx context.Context, commit string) (string, error) {
	parent, err := r.ownDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, "checkout")
	if err := r.update(ctx, dir, commit); err != nil {
		// Not there yet, or broken (.loop removed, the worktree pruned):
		// start again.
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
		if _, err := r.git(ctx, "worktree", "add", "-f", "--detach", "--no-checkout", dir, commit); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
		if err := r.update(ctx, dir, commit); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
	}
	if dirty, err := r.changed(ctx, dir); err != nil || len(dirty) > 0 {
		return "", fmt.Errorf("isolated checkout %s is not clean after checking out %s (%s): %v", dir, short(commit), strings.Join(dirty, ", "), err)
	}
	return dir, nil
}

// update checks commit out in the worktree dir, discarding whatever
// the last checks left there.
func (r *Repo) update(ctx context.Context, dir, commit string) error {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return err
	}
	if _, err := git(ctx, dir, r.env, nil, "checkout", "-q", "-f", "--detach", commit, "--"); err != nil {
		return err
	}
	_, err := git(ctx, dir, r.env, nil, "clean", "-q", "-f", "-f", "-d")
	return err
}

// changed lists what differs in the worktree dir from its HEAD: tracked
// changes and untracked files that are not ignored.
func (r *Repo) changed(ctx context.Context, dir string) ([]string, error) {
	out, err := git(ctx, dir, r.env, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range strings.Split(out, "\x00") {
		if len(e) > 3 {
			paths = append(paths, e[3:])
		}
	}
	return paths, nil
}
