package runner

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMayMatchBelow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, dir string
		want         bool
	}{
		{"loop.toml", "src", false},
		{".github/**", ".github", true},
		{".github/**", ".github/workflows", true},
		{".github/**", "src", false},
		{"**/*_test.go", "any/where", true},
		{"agents/*.sh", "agents", true},
		{"agents/*.sh", "agents/sub", false},
		{"scripts/checks/**", "scripts", true},
		{"scripts/checks/**", "scripts/other", false},
		{"src/*/gen/**", "src/a/gen/deep", true},
		{"src/*/gen/**", "src/a/other", false},
		{"s?c/x.go", "src", true},
		{"[!t]est/x", "test", false},
		{"[!t]est/x", "best", true},
		{"{a,b/c}/x", "b", true}, // braces: assumed anywhere
		{"a\\*b/x", "zzz", true}, // escapes: assumed anywhere
		{"[/x", "a", true},       // a bad pattern: assumed anywhere
		{"dir", "dir", false},    // the directory itself, not below it
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" in "+tt.dir, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mayMatchBelow(tt.pattern, tt.dir)); diff != "" {
				t.Errorf("mayMatchBelow(%q, %q) (-want +got):\n%s", tt.pattern, tt.dir, diff)
			}
		})
	}
}

// TestMayMatchBelowNeverHidesAMatch: whatever a pattern matches, the scan
// of the protected paths enters every directory above it.
func TestMayMatchBelowNeverHidesAMatch(t *testing.T) {
	t.Parallel()
	patterns := []string{"loop.toml", ".github/**", "**/*_test.go", "agents/*.sh", "src/*/gen/**", "s?c/**/x.go",
		"[!t]est/*", "a/**/b/*.txt", "*/*/*", "**", "x/**/y/**/z", "{a,b/c}/x", "dir/"}
	paths := []string{"loop.toml", ".github/workflows/ci.yml", "pkg/a_test.go", "a/b/c/d_test.go", "agents/x.sh",
		"src/a/gen/deep/f.go", "src/x.go", "src/q/r/x.go", "best/f", "test/f", "a/b/x.txt", "a/q/b/x.txt",
		"a/q/r/b/x.txt", "p/q/r", "x/y/z", "x/1/y/2/z", "b/c/x", "a/x", "dir/f"}
	for _, pat := range patterns {
		g := guarded{patterns: []string{pat}}
		for _, p := range paths {
			if !g.protected(p) {
				continue
			}
			segs := strings.Split(p, "/")
			for i := 1; i < len(segs); i++ {
				if dir := strings.Join(segs[:i], "/"); !g.descend(dir) {
					t.Errorf("%s is protected by %s but the scan does not enter %s", p, pat, dir)
				}
			}
		}
	}
}
