package hook

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/guard"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The agents of --mode loop work in the isolated checkout, a repository
// of its own, so their git writes it and not the user's. But it lies in
// the user's working tree, and an agent can walk up to it: a runner
// guards its loop root, not what is around it. guardOutside records,
// before the loop, the user's working tree (as a snapshot: not .git,
// .loop or ignored files); in the user's git directory, the files that
// make git run commands (config, hooks, info: as the runner's own guard
// of a root's .git) and those that say where the user's work stands (HEAD
// and the other *_HEAD files, the index, refs loose and packed, the stash,
// the reflogs, the shallow list: repoGuarded); the hook's own files under
// .loop/hook (the verdict cache above all); and the hooks directory when
// core.hooksPath puts it elsewhere. The check it returns puts back
// whatever changed and fails, naming it. The working tree is read with
// its git settings (core.autocrlf, core.eol: runner.ReadCheckout under
// env), and every walk stops when ctx is done.
func (r *Repo) guardOutside(ctx context.Context, env []string) (check func() error, err error) {
	k, err := runner.ReadCheckout(ctx, r.Top, env)
	if err != nil {
		return nil, fmt.Errorf("record the working tree before the loop: %w", err)
	}
	mem := memory.NewStorage()
	tree, err := workspace.NewHasherWith(r.Top, k).WriteObjects(ctx, mem)
	if err != nil {
		return nil, fmt.Errorf("store the working tree before the loop: %w", err)
	}
	all := func(string) bool { return true }
	sets := []guard.Files{
		{Root: r.common, Descend: repoDescend, Keep: repoGuarded},
		// The hook's own files: a forged cache entry would pass a tree
		// later without measuring it. The checkout is the agents', the
		// loop's state the runner's.
		{Root: r.loopDir(), Descend: notTheLoops, Keep: notTheLoops},
	}
	if !within(r.GitDir, r.common) {
		sets = append(sets, guard.Files{Root: r.GitDir, Descend: repoDescend, Keep: repoGuarded})
	}
	if !within(r.hooks, r.common) && !within(r.hooks, r.Top) {
		sets = append(sets, guard.Files{Root: r.hooks, Descend: all, Keep: all})
	}
	before := make([]map[string]workspace.Entry, len(sets))
	for i, set := range sets {
		if before[i], err = set.Scan(ctx); err != nil {
			return nil, fmt.Errorf("record %s before the loop: %w", set.Root, err)
		}
	}
	return func() error {
		var changed []string
		for i, set := range sets {
			changes, err := set.Restore(ctx, before[i])
			if err != nil {
				return fmt.Errorf("an agent of the loop changed %s, and putting it back failed: %w", set.Root, err)
			}
			for _, c := range changes {
				changed = append(changed, r.shown(filepath.Join(set.Root, filepath.FromSlash(c.Path))))
			}
		}
		if after, err := workspace.NewHasherWith(r.Top, k).Snapshot(ctx); err != nil || after != tree {
			n, err := workspace.RestoreWith(ctx, r.Top, mem, tree, k)
			if err != nil {
				return fmt.Errorf("an agent of the loop changed your working tree, and putting it back failed: %w", err)
			}
			changed = append(changed, phrase.Plural(n, "path", "paths")+" of your working tree")
		}
		if len(changed) == 0 {
			return nil
		}
		return fmt.Errorf("an agent of the loop wrote outside its checkout (%s): put back; its work is refused", strings.Join(changed, ", "))
	}, nil
}

// repoGuarded says which paths of a git directory (rel, relative to it)
// guardOutside keeps: those guard.GitGuarded keeps, which make git run
// commands, and those that say where the user's work stands — HEAD and
// the other *_HEAD files, the index (a split index's shared part too),
// packed-refs, the shallow list, everything under refs/ and logs/ (the
// stash is refs/stash, its entries the reflog logs/refs/stash) and under
// reftable/ (where git 2.45 and later can keep refs instead), and the
// .lock files beside them that would stop the user's next git. A linked
// worktree's own (worktrees/<name>/HEAD, index, logs/HEAD) count too.
func repoGuarded(rel string) bool {
	if guard.GitGuarded(rel) || inRefs(rel) {
		return true
	}
	base := strings.TrimSuffix(path.Base(rel), ".lock")
	return base == "index" || base == "packed-refs" || base == "shallow" ||
		strings.HasSuffix(base, "HEAD") || strings.HasPrefix(base, "sharedindex.")
}

// repoDescend says which directories of a git directory guardOutside
// enters: those guard.GitDescend enters (not objects), and refs/, logs/
// and reftable/ with everything below.
func repoDescend(rel string) bool { return guard.GitDescend(rel) || inRefs(rel) }

// inRefs says whether rel is a refs, logs or reftable directory, or below
// one.
func inRefs(rel string) bool {
	for _, dir := range strings.Split(rel, "/") {
		if dir == "refs" || dir == "logs" || dir == "reftable" {
			return true
		}
	}
	return false
}

// shown is how a message names the path p: relative to the working tree
// when it lies in it (.git/refs/heads/main), else as it is.
func (r *Repo) shown(p string) string {
	if rel, err := filepath.Rel(r.Top, p); err == nil && within(p, r.Top) {
		return filepath.ToSlash(rel)
	}
	return p
}

// notTheLoops says which paths of .loop/hook are the hook's own: not the
// checkout (the agents') nor the loop's state (the runner's).
func notTheLoops(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	return top != "checkout" && top != "state"
}

func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
