package runner

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// The root's repository can make git run commands: core.fsmonitor, hooks,
// core.hooksPath, diff.external, filter drivers, credential helpers,
// core.sshCommand, aliases, includes... all of it read from a handful of
// files in .git. The runner guards those files around every wave and
// every measurement, so nothing an agent plants there is ever read by the
// git of a check, and gives checks GitEnv besides.

// gitSkip are directories of a git directory that hold no configuration:
// a scan of .git never enters them.
var gitSkip = map[string]bool{"objects": true, "refs": true, "logs": true, "lfs": true, "rr-cache": true}

// GitDescend says which directories of a git directory a scan for
// GitGuarded paths enters: all but those that only hold objects, refs and
// logs. Submodules' and linked worktrees' git directories (modules/...,
// worktrees/...) are entered, so their configuration is guarded too. rel
// is relative to the git directory, or to a root holding it as .git.
func GitDescend(rel string) bool {
	return !gitSkip[path.Base(rel)]
}

// GitGuarded says which paths of a git directory (rel, relative to it)
// can make git run commands: in any git directory, config,
// config.worktree and commondir (which redirects where config is read),
// and hooks/ and info/ (exclude, attributes, sparse-checkout) with
// everything in them. The runner guards them in the root's .git, and the
// hook in the repository around its checkout.
func GitGuarded(rel string) bool {
	switch path.Base(rel) {
	case "config", "config.worktree", "commondir":
		return true
	}
	for _, dir := range strings.Split(rel, "/") {
		if dir == "hooks" || dir == "info" {
			return true
		}
	}
	return false
}

// gitKeep is GitGuarded for a path of the root (.git/...).
func gitKeep(rel string) bool {
	inner, ok := strings.CutPrefix(rel, ".git/")
	return ok && GitGuarded(inner)
}

// scanGit records the root's .git itself (a directory, or a file holding
// a gitdir: pointer, or a link) and, when it is a real directory, the
// guarded files in it, reading again only those c does not vouch for. A
// root without .git records nothing, so a .git that appears later is seen
// as created.
func scanGit(w *workspace.Writer, out map[string]workspace.Entry, c *workspace.ScanCache) error {
	e, ok, err := w.Lookup(".git")
	if err != nil || !ok {
		return err
	}
	out[".git"] = e
	if !e.Mode.IsDir() {
		return nil
	}
	files, err := w.ScanCached(".git", GitDescend, gitKeep, c)
	maps.Copy(out, files)
	return err
}

// refsKeep says which paths of the root's .git a wave of isolated nodes
// may not change either: HEAD, the index, packed-refs, the shallow list
// and refs/. Isolated nodes have repositories of their own; one that
// reaches the root's (a worktree's .git turned into a link to it, say)
// could otherwise leave a branch, move HEAD or stage files there (which
// a check's git diff would then not show).
func refsKeep(rel string) bool {
	switch rel {
	case ".git/HEAD", ".git/index", ".git/packed-refs", ".git/shallow":
		return true
	}
	return refsDescend(rel)
}

func refsDescend(rel string) bool { return rel == ".git/refs" || strings.HasPrefix(rel, ".git/refs/") }

// scanRefs records the paths refsKeep selects.
func scanRefs(root string) guardState {
	w, err := workspace.OpenWriter(root)
	if err != nil {
		return guardState{err: err}
	}
	defer w.Close()
	files, err := w.Scan(".git", refsDescend, refsKeep)
	return guardState{files: files, err: err}
}

// scanObjects lists the entries of the root's object directory and of
// its subdirectories (fan-out, pack, info) by lstat, never reading a
// file (packs are large) nor following a link nor blocking on a named
// pipe. A directory's own stat is left out (it changes with its entries);
// an objects that is not a directory is recorded as what it is. A root
// whose .git is not a directory has none.
func scanObjects(root string) (map[string]workspace.StatKey, error) {
	out := map[string]workspace.StatKey{}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		return out, nil
	}
	base := filepath.Join(root, ".git", "objects")
	fi, err := os.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out, nil
	case err != nil:
		return nil, err
	case !fi.IsDir():
		out[".git/objects"] = workspace.KeyOf(fi)
		return out, nil
	}
	out[".git/objects"] = workspace.StatKey{}
	top, err := workspace.ListDir(base)
	if err != nil {
		return nil, err
	}
	for _, e := range top {
		rel := ".git/objects/" + e.Name()
		if err := addObject(out, rel, e); err != nil || !e.IsDir() {
			if err != nil {
				return nil, err
			}
			continue
		}
		sub, err := workspace.ListDir(filepath.Join(base, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			delete(out, rel) // removed since it was listed
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, f := range sub {
			if err := addObject(out, rel+"/"+f.Name(), f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func addObject(out map[string]workspace.StatKey, rel string, e fs.DirEntry) error {
	if e.IsDir() {
		out[rel] = workspace.StatKey{}
		return nil
	}
	fi, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out[rel] = workspace.KeyOf(fi)
	return err
}
