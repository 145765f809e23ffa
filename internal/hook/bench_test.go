package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
)

// BenchmarkCheck compares, on a repository of 2,000 files with one cheap
// check, what `loop-action gate` does (runner.Measure in the working
// tree) with the hook measuring a pushed commit (cache off: update the
// isolated checkout, measure, check it is unchanged) and with a cached
// answer. scripts/bench.sh runs the same comparison with the binary.
func BenchmarkCheck(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	files := map[string]string{"loop.toml": "name = \"bench\"\n[[goal]]\nname = \"tests\"\n  [[goal.check]]\n  type = \"test\"\n  run = \"test -f src/f1.txt\"\n"}
	for i := range 2000 {
		files[fmt.Sprintf("src/f%d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	r, head := gitRepo(b, files)
	ctx := context.Background()
	tree, err := r.git(ctx, "rev-parse", head+"^{tree}")
	if err != nil {
		b.Fatal(err)
	}
	target := Target{Refs: []string{"refs/heads/main"}, Commit: head, Tree: tree[:len(tree)-1]}
	g := &Gate{Repo: r, Env: os.Environ(), Version: "bench", Log: io.Discard}
	if res, err := g.Check(ctx, target); err != nil || !res.Success {
		b.Fatalf("the bench tree does not pass: %v", err)
	}
	b.Run("gate", func(b *testing.B) {
		cfg, err := loop.Parse("loop.toml", []byte(files["loop.toml"]))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, _, err := runner.Measure(ctx, cfg, r.Top, os.Environ()); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name    string
		noCache bool
	}{{"hook-measured", true}, {"hook-cached", false}} {
		b.Run(c.name, func(b *testing.B) {
			g.NoCache = c.noCache
			for b.Loop() {
				res, err := g.Check(ctx, target)
				if err != nil || !res.Success || res.Cached == c.noCache {
					b.Fatalf("Check: %+v, %v", res, err)
				}
			}
		})
	}
}
