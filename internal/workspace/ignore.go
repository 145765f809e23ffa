package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// rule is one pattern of an ignore file in directory domain.
type rule struct {
	pathPattern
	domain []string // the directory holding the ignore file, as components
	dir    string   // the same, slash-separated
	negate bool     // the pattern started with "!": it re-includes
}

var utf8BOM = []byte("\xef\xbb\xbf")

// parseRules is dir.c's add_patterns_from_buffer.
func parseRules(data []byte, domain []string) []rule {
	data = bytes.TrimPrefix(data, utf8BOM)
	domain = slices.Clone(domain)
	dir := strings.Join(domain, "/")
	var rules []rule
	for line := range strings.SplitSeq(string(data), "\n") {
		line = trimTrailingSpaces(strings.TrimSuffix(line, "\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		body, negate := strings.CutPrefix(line, "!")
		rules = append(rules, rule{pathPattern: parsePathPattern(body), domain: domain, dir: dir, negate: negate})
	}
	return rules
}

// trimTrailingSpaces is dir.c's trim_trailing_spaces.
func trimTrailingSpaces(line string) string {
	last := -1 // where the trailing spaces start
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if last < 0 {
				last = i
			}
			continue
		case '\\':
			if i++; i == len(line) {
				return line
			}
		}
		last = -1
	}
	if last >= 0 {
		return line[:last]
	}
	return line
}

// ignored reports whether rules exclude path (components from the root):
// the last that matches decides (last_matching_pattern_from_list).
func ignored(rules []rule, path []string, isDir bool) bool {
	var full string // path, slash-separated, once a rule needs it
	for i := len(rules) - 1; i >= 0; i-- {
		r := &rules[i]
		if len(path) <= len(r.domain) || !slices.Equal(path[:len(r.domain)], r.domain) {
			continue
		}
		if !r.noDir && full == "" {
			full = strings.Join(path, "/")
		}
		if r.matches(full, path[len(path)-1], r.dir, isDir) {
			return !r.negate
		}
	}
	return false
}

// maxIgnoreFile is the largest ignore file read; a larger one is an error.
const maxIgnoreFile = 16 << 20

// readRules appends the rules of the ignore file name of r (at domain).
// One that is not a regular file adds nothing: git follows no link
// named .gitignore either.
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
