package isolate

import "github.com/loop-action/loop-action/internal/workspace"

// included returns which of paths (files or symbolic links of t's worktree)
// a snapshot would include under the ignore rules of the loop root and
// under those of the worktree, which may have new .gitignore files: a path
// either ignores is not published. The root's .git/info/exclude applies to
// both. workspace decides; the cost follows len(paths) and the
// directories above them.
func (m *Manager) included(t *tree, paths []string) (map[string]bool, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	inRoot, err := workspace.NewMatcher(m.index.r)
	if err != nil {
		return nil, err
	}
	inTree := inRoot.Over(t.r)
	out := make(map[string]bool, len(paths))
	for _, p := range paths {
		ok, err := inRoot.Included(p)
		if ok && err == nil {
			ok, err = inTree.Included(p)
		}
		if err != nil {
			return nil, err
		}
		out[p] = ok
	}
	return out, nil
}
