package state

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage"

	"github.com/loop-action/loop-action/internal/gitremote"
)

// remote is the state branch of one remote repository: a fetch is one
// upload-pack exchange for the branch head at depth 1, a push one
// receive-pack exchange carrying exactly the objects a save created (see
// package gitremote, which delivery shares).
type remote struct {
	*gitremote.Remote
	ref plumbing.ReferenceName
}

// errRace reports that the branch was not where a push expected it, or
// that the remote refused to move it: either way, fetch and try again.
// errRefused, which wraps it, reports that the remote refused the update
// (moved meanwhile, locked by another push, or declined by a hook).
var (
	errRace    = gitremote.ErrRace
	errRefused = gitremote.ErrRefused
)

func newRemote(o BranchOptions) (*remote, error) {
	raw, err := resolveRemote(o.Remote, o.Root)
	if err != nil {
		return nil, err
	}
	r, err := gitremote.Open(raw, o.Token)
	if err != nil {
		return nil, err
	}
	return &remote{Remote: r, ref: plumbing.NewBranchReferenceName(o.Branch)}, nil
}

// resolveRemote returns the URL remote names: remote itself when it is a
// URL or a path, else the first URL of the remote of that name ("" is
// "origin") in the configuration of the repository holding root.
func resolveRemote(remote, root string) (string, error) {
	switch {
	case remote == "":
		remote = "origin"
	case strings.Contains(remote, "://") || filepath.IsAbs(remote):
		return remote, nil
	case strings.HasPrefix(remote, "./") || strings.HasPrefix(remote, "../"):
		return filepath.Join(root, remote), nil
	case strings.Contains(remote, ":"): // scp-like: git@host:owner/repo
		return remote, nil
	}
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("remote %q: the loop root %q is not in a git repository: %w", remote, root, err)
	}
	r, err := repo.Remote(remote)
	if err != nil {
		return "", fmt.Errorf("remote %q of the repository at %q: %w", remote, root, err)
	}
	urls := r.Config().URLs
	if len(urls) == 0 {
		return "", fmt.Errorf("remote %q of the repository at %q has no URL", remote, root)
	}
	u := urls[0]
	if !strings.Contains(u, ":") && !filepath.IsAbs(u) { // a relative path: git resolves it in the worktree
		if wt, err := repo.Worktree(); err == nil {
			u = filepath.Join(wt.Filesystem.Root(), u)
		}
	}
	return u, nil
}

// fetch brings the branch head and the objects the store lacks (see
// gitremote.Remote.Fetch) and returns it, zero when the branch does not
// exist.
func (r *remote) fetch(ctx context.Context, s storage.Storer, haves []plumbing.Hash) (plumbing.Hash, error) {
	return r.Fetch(ctx, s, r.ref, haves)
}

// push moves the branch from old (zero: the branch does not exist) to
// next if it is still at old, sending objs; an error wraps errRace when
// the branch was elsewhere or the remote refused the update.
func (r *remote) push(ctx context.Context, s storage.Storer, old, next plumbing.Hash, objs []plumbing.Hash) error {
	return r.Push(ctx, s, r.ref, old, next, objs)
}
