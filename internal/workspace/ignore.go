package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// rule is one gitignore pattern from an ignore file in directory domain.
//
// Patterns are parsed and matched by go-git's gitignore package, with two
// corrections. First, go-git's Pattern.Match also reports a match when the
// pattern matches an ancestor of the path (for a pattern without a slash,
// any path component), while git matches the path itself and handles
// ancestors by not descending into excluded directories, as our walk does.
// So a pattern without a slash is matched against the base name alone, and
// a pattern with a slash must span exactly the whole path. Second, go-git
// matches "**" greedily (so "**/a/b" misses "a/a/b") and lets "foo/**"
// match foo itself; patterns with a "**" segment are matched by matchSegs.
type rule struct {
	pat     gitignore.Pattern // for kindName (domain-less) and kindFixed
	domain  []string          // directory holding the ignore file, as components
	kind    ruleKind
	depth   int      // kindFixed: number of path components the pattern spans
	segs    []string // kindDeep: the pattern's non-empty slash-separated segments
	negate  bool     // kindDeep: pattern starts with "!"
	dirOnly bool     // kindDeep: pattern ends with "/"
}

type ruleKind int

const (
	kindName  ruleKind = iota // no slash: matches a base name at any depth
	kindFixed                 // slash, no "**" segment: matches depth components
	kindDeep                  // has a "**" segment
)

var utf8BOM = []byte("\xef\xbb\xbf")

// parseRules parses the content of an ignore file found in directory domain.
func parseRules(data []byte, domain []string) []rule {
	data = bytes.TrimPrefix(data, utf8BOM)
	var rules []rule
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "#") || strings.Trim(line, " ") == "" {
			continue
		}
		rules = append(rules, newRule(negatedClasses(line), domain))
	}
	return rules
}

// newRule classifies line, trimming it the way gitignore.ParsePattern does.
func newRule(line string, domain []string) rule {
	r := rule{domain: slices.Clone(domain)}
	body, negate := strings.CutPrefix(line, "!")
	if !strings.HasSuffix(body, `\ `) {
		body = strings.TrimRight(body, " ")
	}
	body, dirOnly := strings.CutSuffix(body, "/")
	segs := slices.DeleteFunc(strings.Split(body, "/"), func(s string) bool { return s == "" })
	switch {
	case !strings.Contains(body, "/"):
		r.kind, r.pat = kindName, gitignore.ParsePattern(line, nil)
	case slices.Contains(segs, "**"):
		r.kind, r.segs, r.negate, r.dirOnly = kindDeep, segs, negate, dirOnly
	default:
		r.kind, r.depth = kindFixed, len(segs)
		r.pat = gitignore.ParsePattern(line, r.domain)
	}
	return r
}

// negatedClasses rewrites git's "[!...]" bracket expressions to the
// "[^...]" spelling understood by path.Match, which go-git relies on.
func negatedClasses(line string) string {
	var b strings.Builder
	escaped := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		b.WriteByte(c)
		if c == '[' && !escaped && i+1 < len(line) && line[i+1] == '!' {
			b.WriteByte('^')
			i++
		}
		escaped = c == '\\' && !escaped
	}
	return b.String()
}

// match reports whether the rule excludes or re-includes path, given as
// components relative to the root.
func (r rule) match(path []string, isDir bool) gitignore.MatchResult {
	if len(path) <= len(r.domain) || !slices.Equal(path[:len(r.domain)], r.domain) {
		return gitignore.NoMatch
	}
	switch r.kind {
	case kindName:
		return r.pat.Match(path[len(path)-1:], isDir)
	case kindFixed:
		if len(path)-len(r.domain) != r.depth {
			return gitignore.NoMatch
		}
		return r.pat.Match(path, isDir)
	}
	if (r.dirOnly && !isDir) || !matchSegs(r.segs, path[len(r.domain):]) {
		return gitignore.NoMatch
	}
	if r.negate {
		return gitignore.Include
	}
	return gitignore.Exclude
}

// matchSegs reports whether the pattern segments match all of path: "**"
// matches any number of components, or at least one when it is the last
// segment ("foo/**" matches what is inside foo, not foo itself).
func matchSegs(segs, names []string) bool {
	if len(segs) == 0 {
		return len(names) == 0
	}
	if segs[0] == "**" {
		if len(segs) == 1 {
			return len(names) > 0
		}
		for i := range len(names) + 1 {
			if matchSegs(segs[1:], names[i:]) {
				return true
			}
		}
		return false
	}
	if len(names) == 0 {
		return false
	}
	ok, err := path.Match(segs[0], names[0])
	return err == nil && ok && matchSegs(segs[1:], names[1:])
}

// ignored reports whether path is excluded by rules, which are in
// increasing order of precedence: the last rule that matches decides.
func ignored(rules []rule, path []string, isDir bool) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if m := rules[i].match(path, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// maxIgnoreFile is the largest ignore file read; a larger one is an error.
const maxIgnoreFile = 16 << 20

// readRules appends the rules of the ignore file name in directory r (at
// domain) to rules. A missing file, or one that is not a regular file, adds
// nothing: git does not follow a symbolic link named .gitignore either.
func readRules(r *os.Root, name string, domain []string, rules []rule) ([]rule, error) {
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.Mode().IsRegular()) {
		return rules, nil
	}
	if err != nil {
		return nil, err
	}
	data, err := ReadFile(r, name, maxIgnoreFile)
	if errors.Is(err, ErrNotRegular) {
		return rules, nil // replaced since lstat
	}
	if err != nil {
		return nil, err
	}
	return append(slices.Clip(rules), parseRules(data, domain)...), nil
}
