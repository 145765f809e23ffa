package isolate

import (
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// feed tells which paths of the worktrees may have changed.
type feed interface {
	// watch starts (or, after events were lost, restarts) watching every
	// directory of t's worktree.
	watch(t *tree) error
	// drain returns what was touched in t's worktree since the last drain,
	// including anything done just before the call.
	drain(t *tree) touched
	// close stops watching, and returns when nothing runs any more.
	close() error
}

// touched is what a feed saw of one worktree.
type touched struct {
	paths map[string]struct{} // files, links and directories touched
	gone  []string            // directories deleted or moved away
	full  bool                // events were lost: compare everything
}

// walkFeed watches nothing: every look compares the whole worktree.
type walkFeed struct{}

func (walkFeed) watch(*tree) error   { return nil }
func (walkFeed) drain(*tree) touched { return touched{full: true} }
func (walkFeed) close() error        { return nil }

// excludedTop returns the part of p that a snapshot never includes, and
// why: an entry named .git at any depth, or .loop at the top in any
// spelling a case-folding disk takes for it (workspace.IsLoop); "" if
// none.
func excludedTop(p string) (top, reason string) {
	if first, _, _ := strings.Cut(p, "/"); workspace.IsLoop(first) {
		return first, ReasonLoop
	}
	for i := 0; i < len(p); {
		j := strings.IndexByte(p[i:], '/')
		if j < 0 {
			j = len(p) - i
		}
		if p[i:i+j] == ".git" {
			return p[:i+j], ReasonGit
		}
		i += j + 1
	}
	return "", ""
}

// join joins a directory (possibly "") and a name with a slash.
func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}
