package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// benchConfig has 10 builder nodes and 10 goals of trivial checks (a file
// that never appears), so every iteration dispatches every node and the
// loop never ends on its own.
func benchConfig(iterations int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"bench\"\n[stop]\nmax_iterations = %d\nno_progress = 0\nmax_tokens = 1_000_000_000\n", iterations)
	b.WriteString("[run]\nconcurrency = 0\n[providers.noop]\ncommand = [\"noop\"]\n")
	for i := range 10 {
		fmt.Fprintf(&b, "[[node]]\nname = \"n%d\"\nprovider = \"noop\"\ngoals = [\"g%d\"]\n", i, i)
	}
	for i := range 10 {
		fmt.Fprintf(&b, "[[goal]]\nname = \"g%d\"\n  [[goal.check]]\n  type = \"file_exists\"\n  path = \"never-%d.txt\"\n", i, i)
	}
	return b.String()
}

// BenchmarkIteration measures whole iterations with no-op providers: the
// runner's own work (dispatching 10 nodes, collecting evidence for 10
// trivial checks, the gate, summary, history and an fsynced checkpoint).
// Each op is one iteration of one long run.
func BenchmarkIteration(b *testing.B) {
	cfg, err := loop.Parse("loop.toml", []byte(benchConfig(b.N)))
	if err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Config: cfg, Root: root, RunID: "bench/run", Store: store,
		Providers: map[string]Provider{"noop": idle(1)}}
	b.ReportAllocs()
	b.ResetTimer()
	out, err := Run(context.Background(), opts)
	b.StopTimer()
	if err != nil || out.Iteration != b.N {
		b.Fatalf("run: %v, %d iterations of %d", err, out.Iteration, b.N)
	}
}

// memStore keeps checkpoints in memory, to tell the runner's own time from
// the disk's.
type memStore struct{ cp *state.Checkpoint }

func (m *memStore) Load(context.Context, string) (*state.Checkpoint, error) {
	if m.cp == nil {
		return nil, state.ErrNotFound
	}
	c := *m.cp
	return &c, nil
}

func (m *memStore) Lock(string) (func() error, error) { return func() error { return nil }, nil }

func (m *memStore) Save(_ context.Context, cp *state.Checkpoint, c state.Commit) error {
	cp.LedgerEvents += c.Events
	m.cp = cp
	return nil
}

// BenchmarkIterationInMemory is BenchmarkIteration without the disk: the
// orchestration alone.
func BenchmarkIterationInMemory(b *testing.B) {
	cfg, err := loop.Parse("loop.toml", []byte(benchConfig(b.N)))
	if err != nil {
		b.Fatal(err)
	}
	opts := Options{Config: cfg, Root: b.TempDir(), RunID: "bench/run", Store: &memStore{},
		Providers: map[string]Provider{"noop": idle(1)}}
	b.ReportAllocs()
	b.ResetTimer()
	out, err := Run(context.Background(), opts)
	b.StopTimer()
	if err != nil || out.Iteration != b.N {
		b.Fatalf("run: %v, %d iterations of %d", err, out.Iteration, b.N)
	}
}
