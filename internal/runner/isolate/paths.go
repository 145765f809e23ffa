package isolate

import (
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

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
