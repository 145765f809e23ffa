package hook

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/guard"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The isolated checkout, .loop/hook/checkout, is a repository of its own:
// its .git is a directory holding its HEAD (detached at the commit being
// measured), index, config, info/exclude and refs, and objects/ borrows
// the user's object store through objects/info/alternates, which git only
// reads. So a check's or an agent's git (a commit, a branch, a tag, a
// stash, a staged file) writes the checkout's repository, never the
// user's refs, packed-refs, HEAD, index, stash or config. The hook writes
// that repository afresh before each use (resetGit), keeping only the
// index, whose stat data make the next checkout incremental — and not
// even that after a loop, whose agents could have forged it.

// checkout makes the isolated checkout hold exactly commit: tracked files
// as committed, nothing untracked (ignored files stay, as a build cache),
// as Check verifies after measuring (changed). It is reused between runs,
// so only what changed is written; after a run that left it clean
// (settled), not even that. With fresh ([hook] clean_ignored), ignored
// files go too, every time. No branch is created or moved anywhere.
func (r *Repo) checkout(ctx context.Context, commit string, fresh bool) (string, error) {
	parent, err := r.ownDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(parent, "checkout")
	settled := r.settledAt(parent)
	if fresh {
		settled = ""
	}
	// From here until settle, the checkout is not known to be clean.
	if err := os.Remove(filepath.Join(parent, "settled")); err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("isolated checkout: %w", err)
	}
	if err := r.update(ctx, dir, commit, settled, fresh); err != nil {
		// Not there yet, or broken (.loop removed, .git replaced), or the
		// linked worktree of the layout before: start again.
		if err := r.remake(ctx, dir); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
		if err := r.update(ctx, dir, commit, "", fresh); err != nil {
			return "", fmt.Errorf("isolated checkout: %w", err)
		}
	}
	return dir, nil
}

// settledAt is the commit the settled mark in parent names, "" for none
// (or anything but a small regular file there).
func (r *Repo) settledAt(parent string) string {
	b, _ := readFile(parent, "settled", 256)
	return string(b)
}

// readFile reads the regular file name in dir, of at most limit bytes,
// through no symbolic link (workspace.ReadFile).
func readFile(dir, name string, limit int64) ([]byte, error) {
	root, err := workspace.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return workspace.ReadFile(root, name, limit)
}

// remake makes dir anew, with an empty .git directory. A checkout of the
// layout before, a linked worktree of the user's repository, leaves git's
// list of worktrees first.
func (r *Repo) remake(ctx context.Context, dir string) error {
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && fi.Mode().IsRegular() {
		_, _ = r.git(ctx, "worktree", "remove", "--force", "--force", dir)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
}

// update checks commit out in the checkout dir. settled is the commit a
// clean checkout held after the last run, if any: the same commit needs
// nothing, another only its changes; otherwise whatever the last checks
// left is discarded (ignored files too when fresh).
func (r *Repo) update(ctx context.Context, dir, commit, settled string, fresh bool) error {
	if err := r.resetGit(dir, commit, true); err != nil {
		return err
	}
	if settled == commit {
		return nil
	}
	if _, err := r.coGit(ctx, dir, nil, "checkout", "-q", "-f", "--detach", commit, "--"); err != nil {
		return err
	}
	if settled != "" {
		return nil // clean before: nothing untracked to remove
	}
	args := []string{"clean", "-q", "-f", "-f", "-d"}
	if fresh {
		args = append(args, "-x", "--", ".", ownState)
	}
	_, err := r.coGit(ctx, dir, nil, args...)
	return err
}

// ownState is the pathspec of loop-action's own directory at the top of
// the checkout, which a loop there writes (its state, history and
// export): never part of what is gated or committed, as no snapshot
// holds it. The checkout's info/exclude ignores it too (checkoutExclude);
// git add is never given it, since git 2.39 refuses a pathspec naming an
// ignored path, even to exclude it.
const ownState = ":(top,exclude).loop"

// checkoutExclude is the checkout's info/exclude.
const checkoutExclude = "# loop-action hook: the loop's own state is never committed\n/.loop/\n"

// coGit runs git on the checkout dir's own repository, named explicitly
// (never looked for from dir up, which finds the user's when the
// checkout's .git is gone), with env added to the hook's git environment.
func (r *Repo) coGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return git(ctx, dir, append(slices.Clip(r.env), env...), nil,
		append([]string{"--git-dir=" + filepath.Join(dir, ".git"), "--work-tree=" + dir}, args...)...)
}

// resetGit makes the checkout's repository, dir/.git, hold only what the
// hook writes there: HEAD detached at commit, a config that runs nothing,
// info/exclude, the alternates naming the user's object store, the user's
// shallow list, empty refs/heads and refs/tags, no objects of its own (the
// hook writes its objects into the user's store) — and the index, when
// keepIndex. Everything else there goes: an agent's or a check's commits,
// branches, tags, stash, reflogs, config, hooks, grafts. Only what differs
// is written (guard.Layout), so a repository left as the hook wrote it
// costs a few reads.
func (r *Repo) resetGit(dir, commit string, keepIndex bool) error {
	gitDir, err := r.checkoutGitDir(dir)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"HEAD":                    []byte(commit + "\n"),
		"config":                  []byte(r.checkoutConfig()),
		"info/exclude":            []byte(checkoutExclude),
		"objects/info/alternates": []byte(filepath.Join(r.common, "objects") + "\n"),
	}
	if shallow, err := r.shallow(); err != nil {
		return err
	} else if shallow != nil {
		files["shallow"] = shallow
	}
	l := guard.Layout{Files: files, Dirs: []string{"refs/heads", "refs/tags"}}
	if keepIndex {
		l.Keep = func(rel string, e fs.DirEntry) bool { return rel == "index" && e.Type().IsRegular() }
	}
	root, err := workspace.OpenRoot(gitDir)
	if err != nil {
		return err
	}
	defer root.Close()
	return l.Apply(root)
}

// checkoutGitDir returns the checkout's git directory, dir/.git, once
// sure that it is a real directory, reached through no symbolic link, and
// not the user's: resetGit removes what is in it.
func (r *Repo) checkoutGitDir(dir string) (string, error) {
	gitDir := filepath.Join(dir, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%q is not a directory", gitDir)
	}
	rel, err := filepath.Rel(r.Top, gitDir)
	if err != nil {
		return "", err
	}
	top, err := filepath.EvalSymlinks(r.Top)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(gitDir); err != nil || real != filepath.Join(top, rel) {
		return "", fmt.Errorf("%q is reached through a symbolic link (%v)", gitDir, err)
	}
	for _, yours := range []string{r.common, r.GitDir} {
		if other, err := os.Stat(yours); err == nil && os.SameFile(fi, other) {
			return "", fmt.Errorf("%q is your repository's git directory", gitDir)
		}
	}
	return gitDir, nil
}

// checkoutConfig is the checkout repository's config: the object format
// of the user's repository, the settings git init would give a repository
// on this system, and nothing that runs anything. The user's global
// config still applies (their identity, excludes file), as in any
// repository.
func (r *Repo) checkoutConfig() string {
	var b strings.Builder
	version := 0
	if r.format != "" && r.format != "sha1" {
		version = 1
	}
	fmt.Fprintf(&b, "[core]\n\trepositoryformatversion = %d\n\tbare = false\n\tlogallrefupdates = true\n", version)
	switch runtime.GOOS {
	case "windows":
		b.WriteString("\tfilemode = false\n\tsymlinks = false\n\tignorecase = true\n")
	case "darwin":
		b.WriteString("\tfilemode = true\n\tignorecase = true\n\tprecomposeunicode = true\n")
	default:
		b.WriteString("\tfilemode = true\n")
	}
	if version == 1 {
		fmt.Fprintf(&b, "[extensions]\n\tobjectformat = %s\n", r.format)
	}
	return b.String()
}

// shallow is the user's shallow list (nil when the repository is not
// shallow), which the checkout's history must end at too.
func (r *Repo) shallow() ([]byte, error) {
	b, err := readFile(r.common, "shallow", 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// settle lists what differs in the checkout dir from its HEAD, commit:
// tracked changes and untracked files that are not ignored. When nothing
// does, it records that the checkout is clean at commit.
func (r *Repo) settle(ctx context.Context, dir, commit string) ([]string, error) {
	out, err := r.coGit(ctx, dir, nil, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--", ".", ownState)
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

// errBusy says another hook holds the isolated checkout.
var errBusy = errors.New("another loop-action hook is using the isolated checkout")

// lock holds the isolated checkout for this process, without waiting: two
// hooks at once (a commit while a push is being gated) would check out
// over each other's measurement.
func (r *Repo) lock() (release func(), err error) {
	dir, err := r.ownDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "lock")
	release, err = lockFile(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w; try again when it is done", path, err)
	}
	return release, nil
}
