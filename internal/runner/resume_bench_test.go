package runner

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// firstIteration cancels the run as soon as an iteration starts and
// records when.
type firstIteration struct {
	cancel context.CancelFunc
	at     time.Time
}

func (f *firstIteration) Event(e ledger.Event) {
	if e.Type == ledger.IterationStarted && f.at.IsZero() {
		f.at = time.Now()
		f.cancel()
	}
}

// benchResume measures the time from Run to the start of the first new
// iteration of a run that has already done 1,000 iterations.
func benchResume(b *testing.B, store Store, root string) {
	cfg, err := loop.Parse("loop.toml", []byte(benchConfig(1000)))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Config: cfg, Root: root, RunID: "bench/resume", Store: store,
		Providers: map[string]Provider{"noop": idle(1)}}
	if out, err := Run(context.Background(), opts); err != nil || out.Iteration != 1000 {
		b.Fatalf("building the 1,000-iteration run: %v, %d iterations", err, out.Iteration)
	}
	opts.MaxIterations = 2000
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		ctx, cancel := context.WithCancel(context.Background())
		f := &firstIteration{cancel: cancel}
		opts.Progress = f
		start := time.Now()
		if _, err := Run(ctx, opts); err != nil {
			b.Fatal(err)
		}
		total += f.at.Sub(start)
		cancel()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms-to-first-iteration")
}

// BenchmarkResume1000 is the resume of a 1,000-iteration run from the dir:
// store: load the checkpoint and start the next iteration.
func BenchmarkResume1000(b *testing.B) {
	root := b.TempDir()
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		b.Fatal(err)
	}
	benchResume(b, store, root)
}

// BenchmarkResume1000Branch is the same from the branch: store, with the
// remote a bare repository on this machine (no network): fetch, load and
// restore the workspace, then start the next iteration.
func BenchmarkResume1000Branch(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("no git")
	}
	remote := filepath.Join(b.TempDir(), "remote.git")
	if out, err := exec.Command("git", "init", "-q", "--bare", remote).CombinedOutput(); err != nil {
		b.Fatalf("git init: %v\n%s", err, out)
	}
	root := b.TempDir()
	store, err := state.OpenBranch(context.Background(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: remote})
	if err != nil {
		b.Fatal(err)
	}
	benchResume(b, store, root)
}
