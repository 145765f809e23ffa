package runner

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/workspace"
)

// guarded says which paths of the loop root no node and no check may
// change: the protected paths (never inside .git or .loop) and the
// executable configuration of the root's repository (see guard.GitGuarded).
type guarded struct {
	ctx      context.Context // what the scans run under (run.guards)
	root     string
	patterns []string
	cache    guardCache
}

// guardCache keeps what the scans of the guarded paths read, so that the
// next scan reads only the files whose stat changed (workspace.ScanCache);
// nil caches read everything.
type guardCache struct {
	files, git *workspace.ScanCache // the protected paths; .git's configuration
}

func (r *run) guarded() guarded {
	return guarded{ctx: r.guards, root: r.opts.Root, patterns: protectedPatterns(r.cfg, r.opts.Root), cache: r.guardCache}
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
func (g guarded) protected(rel string) bool { return matchesAny(g.patterns, rel) }

// matchesAny reports whether name matches any of the doublestar patterns.
func matchesAny(pats []string, name string) bool {
	return slices.ContainsFunc(pats, func(p string) bool {
		ok, _ := doublestar.Match(p, name)
		return ok
	})
}

// descend says which directories a scan of the protected paths enters:
// every one but .git (at any depth) and the root's .loop, below which a
// protected pattern could match something. A root's other directories are
// not read at all (with [protect] paths = [".github/**"], only .github).
func (g guarded) descend(rel string) bool {
	return rel != ".loop" && path.Base(rel) != ".git" &&
		slices.ContainsFunc(g.patterns, func(p string) bool { return mayMatchBelow(p, rel) })
}

// mayMatchBelow reports whether pattern could match a path below the
// directory dir: dir's segments match the pattern's first ones, with at
// least one segment of the pattern left, or a ** among them. Segments are
// matched as the whole pattern is (doublestar). A pattern with braces
// (whose alternatives may hold a slash) or escapes is assumed to match
// anywhere.
func mayMatchBelow(pattern, dir string) bool {
	if strings.ContainsAny(pattern, "{\\") {
		return true
	}
	ps, ds := strings.Split(pattern, "/"), strings.Split(dir, "/")
	for i, d := range ds {
		if i == len(ps) {
			return false
		}
		if ps[i] == "**" {
			return true
		}
		if ok, err := doublestar.Match(ps[i], d); err != nil || !ok {
			return err != nil
		}
	}
	return len(ps) > len(ds)
}

// isGit reports whether rel is the root's .git or lies inside it.
func isGit(rel string) bool {
	return rel == ".git" || strings.HasPrefix(rel, ".git/")
}
