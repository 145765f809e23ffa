package workspace

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIgnored(t *testing.T) {
	type ignoreFile struct {
		dir, content string // dir is slash-separated, "" for the root
	}
	for _, tc := range []struct {
		name  string
		files []ignoreFile
		path  string
		isDir bool
		want  bool
	}{
		{"name pattern at depth", []ignoreFile{{"", "*.log\n"}}, "a/b/c.log", false, true},
		{"negation", []ignoreFile{{"", "*.log\n!keep.log\n"}}, "a/keep.log", false, false},
		{"dir-only pattern on a file", []ignoreFile{{"", "build/\n"}}, "a/build", false, false},
		{"dir-only pattern on a dir", []ignoreFile{{"", "build/\n"}}, "a/build", true, true},
		{"anchored pattern below the root", []ignoreFile{{"", "/x\n"}}, "a/x", false, false},
		{"anchored pattern at the root", []ignoreFile{{"", "/x\n"}}, "x", false, true},
		{"fixed pattern spans the whole path", []ignoreFile{{"", "a/*\n"}}, "a/b/c", false, false},
		{"fixed pattern", []ignoreFile{{"", "a/*\n"}}, "a/b", true, true},
		// go-git's Pattern.Match would say "not ignored": !tmpdir/ matches the parent.
		{"negated dir does not re-include contents", []ignoreFile{{"", "tmp*\n!tmpdir/\n"}}, "tmpdir/tmpx", false, true},
		// go-git's Pattern.Match for /foo alone would say "ignored".
		{"anchored pattern does not match descendants", []ignoreFile{{"", "/foo\n!foo\n"}}, "foo/bar", false, false},
		{"deeper file wins", []ignoreFile{{"", "*.log\n"}, {"a", "!*.log\n"}}, "a/b/c.log", false, false},
		{"deeper file only applies below it", []ignoreFile{{"", "*.log\n"}, {"a", "!*.log\n"}}, "b/c.log", false, true},
		{"pattern relative to its file", []ignoreFile{{"a", "b/c\n"}}, "a/b/c", false, true},
		{"leading double star", []ignoreFile{{"", "**/gen/\n"}}, "x/y/gen", true, true},
		{"leading double star matches zero dirs", []ignoreFile{{"", "**/gen\n"}}, "gen", false, true},
		// go-git's Pattern.Match would say "not ignored": its "**" is greedy.
		{"double star backtracks", []ignoreFile{{"", "**/a/b\n"}}, "a/a/b", false, true},
		{"middle double star", []ignoreFile{{"", "a/**/b\n"}}, "a/x/y/b", false, true},
		{"middle double star matches zero dirs", []ignoreFile{{"", "a/**/b\n"}}, "a/b", false, true},
		// go-git's Pattern.Match would say "ignored".
		{"trailing double star does not match the dir", []ignoreFile{{"", "foo/**\n"}}, "foo", true, false},
		{"trailing double star", []ignoreFile{{"", "foo/**\n"}}, "foo/x/y", false, true},
		{"negated double star", []ignoreFile{{"", "*.md\n!docs/**/*.md\n"}}, "docs/a/b.md", false, false},
		{"double star relative to its file", []ignoreFile{{"a", "**/x\n"}}, "b/x", false, false},
		{"bang bracket expression", []ignoreFile{{"", "[!a]*.c\n"}}, "a.c", false, false},
		{"bang bracket expression matches", []ignoreFile{{"", "[!a]*.c\n"}}, "b.c", false, true},
		{"comment and blank lines", []ignoreFile{{"", "# x\n\n   \n"}}, "# x", false, false},
		{"escaped hash", []ignoreFile{{"", "\\#x\n"}}, "#x", false, true},
		{"trailing spaces and CRLF", []ignoreFile{{"", "x  \r\n"}}, "x", false, true},
		{"escaped trailing space", []ignoreFile{{"", "x\\  \n"}}, "x ", false, true},
		{"escaped trailing space is kept", []ignoreFile{{"", "x\\  \n"}}, "x", false, false},
		{"byte order mark", []ignoreFile{{"", "\xef\xbb\xbfx\n"}}, "x", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rules []rule
			for _, f := range tc.files {
				var domain []string
				if f.dir != "" {
					domain = strings.Split(f.dir, "/")
				}
				rules = append(rules, parseRules([]byte(f.content), domain)...)
			}
			got := ignored(rules, strings.Split(tc.path, "/"), tc.isDir)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ignored(%q) mismatch (-want +got):\n%s", tc.path, diff)
			}
		})
	}
}
