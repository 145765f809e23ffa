package guard

import (
	"path"
	"strings"
)

// A repository can make git run commands: core.fsmonitor, hooks,
// core.hooksPath, diff.external, filter drivers, credential helpers,
// core.sshCommand, aliases, includes... all of it read from a handful of
// files of its git directory. GitGuarded names them, for the runner's
// guard of the root's .git and the hook's of the repository around its
// checkout.

// gitSkip are directories of a git directory that hold no configuration:
// a scan of one never enters them.
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
// everything in them.
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
