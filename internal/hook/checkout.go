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
// nothing untracked (ignored files stay, as a build cache), as Check
// verifies after measuring (changed). It is reused between runs, so only
// what changed is written; after a run that left it clean (settled), not
// even that. With fresh ([hook] clean_ignored), ignored files go too,
// every time. The worktree's HEAD is detached: no branch is created or
// moved.
func (r *Repo) checkout(ctx context.Context, commit string, fresh bool) (string, error) {
	parent, err := r.ownDir()
	if err != nil {
		return "", err
	}
	dir, mark := filepath.Join(parent, "checkout"), filepath.Join(parent, "settled")
	settled, _ := os.ReadFile(mark)
	if fresh {
		settled = nil
	}
	// From here until settle, the checkout is not known to be clean.
	if err := os.Remove(mark); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("isolated checkout: %w", err)
	}
	if err := r.update(ctx, dir, commit, string(settled), fresh); err != nil {
		// Not there yet, or broken (.loop removed, the worktree pruned):
		// start again.
		if err := os.RemoveAll(dir); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
		if _, err := r.git(ctx, "worktree", "add", "-f", "--detach", "--no-checkout", dir, commit); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
		if err := r.update(ctx, dir, commit, "", fresh); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
	}
	return dir, nil
}

// update checks commit out in the worktree dir. settled is the commit a
// clean checkout held after the last run, if any: the same commit needs
// nothing, another only its changes; otherwise whatever the last checks
// left is discarded (ignored files too when fresh).
func (r *Repo) update(ctx context.Context, dir, commit, settled string, fresh bool) error {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err != nil {
		return err
	}
	if settled == commit {
		return nil
	}
	if _, err := git(ctx, dir, r.env, nil, "checkout", "-q", "-f", "--detach", commit, "--"); err != nil {
		return err
	}
	if settled != "" {
		return nil // clean before: nothing untracked to remove
	}
	args := []string{"clean", "-q", "-f", "-f", "-d"}
	if fresh {
		args = append(args, "-x", "--", ".", ownState)
	}
	_, err := git(ctx, dir, r.env, nil, args...)
	return err
}

// ownState is the pathspec of loop-action's own directory at the top of
// the checkout, which a loop there writes (its state, history and
// export): never part of what is gated or committed, as no snapshot
// holds it.
const ownState = ":(top,exclude).loop"

// settle lists what differs in the checkout dir from its HEAD, commit:
// tracked changes and untracked files that are not ignored. When nothing
// does, it records that the checkout is clean at commit.
func (r *Repo) settle(ctx context.Context, dir, commit string) ([]string, error) {
	out, err := git(ctx, dir, r.env, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".", ownState)
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range strings.Split(out, "\x00") {
		if len(e) > 3 {
			paths = append(paths, e[3:])
		}
	}
	if len(paths) == 0 {
		if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "settled"), []byte(commit), 0o644); err != nil {
			return nil, err
		}
	}
	return paths, nil
}
