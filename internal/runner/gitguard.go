package runner

import (
	"maps"
	"path"
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

// gitDescend says which directories under .git a scan enters: all but
// those that only hold objects, refs and logs. Submodules' and linked
// worktrees' git directories (.git/modules/..., .git/worktrees/...) are
// entered, so their configuration is guarded too.
func gitDescend(rel string) bool {
	return !gitSkip[path.Base(rel)]
}

// gitKeep says which paths under .git are guarded: in any git directory,
// config, config.worktree and commondir (which redirects where config is
// read), and hooks/ and info/ (exclude, attributes, sparse-checkout) with
// everything in them.
func gitKeep(rel string) bool {
	switch path.Base(rel) {
	case "config", "config.worktree", "commondir":
		return true
	}
	for _, dir := range strings.Split(rel, "/")[1:] {
		if dir == "hooks" || dir == "info" {
			return true
		}
	}
	return false
}

// scanGit records the root's .git itself (a directory, or a file holding
// a gitdir: pointer, or a link) and, when it is a real directory, the
// guarded files in it. A root without .git records nothing, so a .git
// that appears later is seen as created.
func scanGit(w *workspace.Writer, out map[string]workspace.Entry) error {
	e, ok, err := w.Lookup(".git")
	if err != nil || !ok {
		return err
	}
	out[".git"] = e
	if !e.Mode.IsDir() {
		return nil
	}
	files, err := w.Scan(".git", gitDescend, gitKeep)
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
