package hook

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/workspace"
)

// BenchmarkCheck compares, on a repository of 2,000 files with one cheap
// check, what `loop-action gate` does (runner.Measure in the working
// tree) with the hook measuring a pushed commit (cache off: update the
// isolated checkout, measure, check it is unchanged) — the same commit
// again (hook-measured: the checkout is settled there) and, in turn, two
// commits one file apart (hook-switch: the checkout moves between them) —
// and with a cached answer. scripts/bench.sh runs the same comparison
// with the binary.
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
			if _, _, err := runner.Measure(ctx, cfg, r.Top, os.Environ(), workspace.Checkout{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	if err := os.WriteFile(filepath.Join(r.Top, "src", "f2.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := r.git(ctx, "commit", "-q", "-am", "two"); err != nil {
		b.Fatal(err)
	}
	second, err := r.git(ctx, "rev-parse", "HEAD", "HEAD^{tree}")
	if err != nil {
		b.Fatal(err)
	}
	ids := strings.Fields(second)
	targets := []Target{target, {Refs: target.Refs, Commit: ids[0], Tree: ids[1]}}
	b.Run("hook-switch", func(b *testing.B) {
		g.NoCache = true
		i := 0
		for b.Loop() {
			i++
			if res, err := g.Check(ctx, targets[i%2]); err != nil || !res.Success {
				b.Fatalf("Check: %+v, %v", res, err)
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
