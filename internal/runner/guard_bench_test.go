//go:build unix

package runner

import (
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/workspace"
)

// BenchmarkGuardScan is one scan of the guarded paths of the spawn-floor
// checkout (the loop config and the git configuration), with the caches
// warm: what every wave costs twice and every measurement once.
func BenchmarkGuardScan(b *testing.B) {
	root := spawnRoot(b)
	cfg, err := loop.Parse("loop.toml", []byte(spawnConfig("agent", 10, 1, "")))
	if err != nil {
		b.Fatal(err)
	}
	g := guarded{root: root, patterns: protectedPatterns(cfg, root),
		cache: guardCache{files: workspace.NewScanCache(), git: workspace.NewScanCache()}}
	if s := g.scan(); s.err != nil {
		b.Fatal(s.err)
	}
	for b.Loop() {
		if s := g.scan(); s.err != nil {
			b.Fatal(s.err)
		}
	}
}
