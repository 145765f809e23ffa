package workspace

import "strings"

// pathPattern is a pattern of an ignore or attributes file as dir.c's
// parse_path_pattern leaves it, matched as match_basename and
// match_pathname do: one matcher for both, as in git. (go-git's gitignore
// matches a path when a pattern matches an ancestor, and "**" greedily.)
type pathPattern struct {
	pattern string // no "!", no trailing "/"
	noDir   bool   // the pattern has no slash: it matches a base name
	mustDir bool   // the pattern ended with "/": it matches directories only
	prefix  int    // the length of its literal prefix (nowildcardlen)
}

// parsePathPattern is parse_path_pattern of p, once a "!" is taken off.
func parsePathPattern(p string) pathPattern {
	var pp pathPattern
	pp.pattern, pp.mustDir = strings.CutSuffix(p, "/")
	pp.noDir = !strings.Contains(pp.pattern, "/")
	pp.prefix = min(simpleLength(p), len(pp.pattern))
	return pp
}

// matches reports whether the pattern, of a file in dir, matches path
// (needed only for a pattern with a slash), whose base name is base.
func (p *pathPattern) matches(path, base, dir string, isDir bool) bool {
	if p.mustDir && !isDir {
		return false
	}
	if p.noDir {
		if p.prefix == len(p.pattern) {
			return p.pattern == base
		}
		return wildmatch(p.pattern, base, false)
	}
	return matchPathname(path, dir, p.pattern, p.prefix)
}

// matchPathname is dir.c's match_pathname, anchored at the directory base.
func matchPathname(path, base, pattern string, prefix int) bool {
	if strings.HasPrefix(pattern, "/") {
		pattern, prefix = pattern[1:], prefix-1
	}
	name := path
	if base != "" {
		if len(path) <= len(base) || path[len(base)] != '/' || path[:len(base)] != base {
			return false
		}
		name = path[len(base)+1:]
	}
	if prefix > 0 {
		if prefix > len(name) || name[:prefix] != pattern[:prefix] {
			return false
		}
		pattern, name = pattern[prefix:], name[prefix:]
		if pattern == "" && name == "" {
			return true
		}
	}
	return wildmatch(pattern, name, true)
}
