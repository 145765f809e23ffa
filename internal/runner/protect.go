package runner

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loop-action/loop-action/internal/loop"
)

// guarded says which paths of the loop root no node and no check may
// change: the protected paths (never inside .git or .loop) and the
// executable configuration of the root's repository (see GitGuarded).
type guarded struct {
	root     string
	patterns []string
}

func (r *run) guarded() guarded {
	return guarded{root: r.opts.Root, patterns: protectedPatterns(r.cfg, r.opts.Root)}
}

// protectedPatterns are [protect] paths plus the loop config itself.
func protectedPatterns(cfg *loop.Config, root string) []string {
	pats := slices.Clone(cfg.Protect.Paths)
	if cfg.File == "" {
		return pats
	}
	f := cfg.File
	if filepath.IsAbs(f) {
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			return pats
		}
		f = rel
	}
	return append(pats, filepath.ToSlash(filepath.Clean(f)))
}

// protected reports whether a path (slash-separated, relative to the root)
// matches a protected pattern.
func (g guarded) protected(rel string) bool {
	for _, p := range g.patterns {
		if ok, _ := doublestar.Match(p, rel); ok {
			return true
		}
	}
	return false
}

// descend says which directories a scan of the protected paths enters:
// every one but .git (at any depth) and the root's .loop.
func (g guarded) descend(rel string) bool {
	return rel != ".loop" && path.Base(rel) != ".git"
}

// isGit reports whether rel is the root's .git or lies inside it.
func isGit(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git/")
}
