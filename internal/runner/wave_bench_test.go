//go:build unix

package runner

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
)

// napConfig is a loop of nodes builders that each sleep one second in a
// real process (testdata/agents/nap.sh), all at once, each advancing a
// goal of one file check that never passes.
func napConfig(b *testing.B, nodes, iterations int) *loop.Config {
	agent, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", "nap.sh"))
	if err != nil {
		b.Fatal(err)
	}
	var s strings.Builder
	fmt.Fprintf(&s, "name = \"wave\"\n[stop]\nmax_iterations = %d\nno_progress = 0\n", iterations)
	fmt.Fprintf(&s, "[run]\nconcurrency = 8\n[providers.agent]\ncommand = [%q]\n", agent)
	for i := range nodes {
		fmt.Fprintf(&s, "[[node]]\nname = \"n%d\"\nprovider = \"agent\"\ngoals = [\"g%d\"]\n", i, i)
		fmt.Fprintf(&s, "[[goal]]\nname = \"g%d\"\n  [[goal.check]]\n  type = \"file_exists\"\n  path = \"never-%d.txt\"\n", i, i)
	}
	cfg, err := loop.Parse("loop.toml", []byte(s.String()))
	if err != nil {
		b.Fatal(err)
	}
	return cfg
}

// turns makes two runs take turns: each, after saving a checkpoint,
// hands the turn to the other and waits for it back, so that their
// iterations interleave one for one and are timed alone.
type turns struct {
	mine, theirs chan struct{}
	last         time.Time
	times        []time.Duration
	floor        func() // measured after each iteration, if set
}

// saved is the run's Checkpointed hook: it times the iteration that ended
// since the run last had the turn, then hands the turn over; a run that
// is over does not wait for it back.
func (t *turns) saved(cp *state.Checkpoint) {
	if cp.Iteration > 0 {
		t.times = append(t.times, time.Since(t.last))
		if t.floor != nil {
			t.floor()
		}
	}
	t.theirs <- struct{}{}
	if !cp.Status.Terminal() {
		<-t.mine
	}
	t.last = time.Now()
}

func (t *turns) mean() time.Duration {
	var sum time.Duration
	for _, d := range t.times {
		sum += d
	}
	return sum / time.Duration(len(t.times))
}

// napFloor starts the nodes' agent n times at once with os/exec, the
// prompt on stdin, and waits for them: what n such nodes cost at least.
func napFloor(b *testing.B, n int) time.Duration {
	agent, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", "nap.sh"))
	if err != nil {
		b.Fatal(err)
	}
	cmds := make([]*exec.Cmd, n)
	for i := range cmds {
		cmds[i] = exec.Command(agent)
		cmds[i].Stdin = strings.NewReader("the prompt")
	}
	return parallel(b, cmds, true, false)
}

// BenchmarkWave is the wave efficiency: an iteration of 8 nodes that each
// sleep 1 s, at concurrency 8, against an iteration of one such node,
// interleaved one for one, with the fsynced dir: store. It reports both
// iteration times and their ratio (the goal is <= 1.05), and the same
// ratio for the agents alone started with os/exec (floor-efficiency):
// what eight processes cost more than one whatever runs them.
func BenchmarkWave(b *testing.B) {
	toOne, toEight := make(chan struct{}, 1), make(chan struct{}, 1)
	one := &turns{mine: toOne, theirs: toEight}
	eight := &turns{mine: toEight, theirs: toOne}
	var floorOne, floorEight time.Duration
	eight.floor = func() { floorOne, floorEight = floorOne+napFloor(b, 1), floorEight+napFloor(b, 8) }
	run := func(nodes int, t *turns) error {
		cfg := napConfig(b, nodes, b.N)
		root := spawnRoot(b)
		out, err := Run(context.Background(), Options{Config: cfg, Root: root, RunID: "bench/wave", Store: dirStore(b)(root),
			Checkpointed: t.saved})
		if err == nil && out.Iteration != b.N {
			err = fmt.Errorf("%d iterations of %d (%s)", out.Iteration, b.N, out.Detail)
		}
		return err
	}
	errs := make(chan error, 1)
	go func() {
		<-toEight // the one-node run saves first
		errs <- run(8, eight)
	}()
	if err := run(1, one); err != nil {
		b.Fatal(err)
	}
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(one.mean().Microseconds())/1e3, "one-ms/op")
	b.ReportMetric(float64(eight.mean().Microseconds())/1e3, "eight-ms/op")
	b.ReportMetric(float64(eight.mean())/float64(one.mean()), "efficiency")
	b.ReportMetric(float64(floorEight)/float64(floorOne), "floor-efficiency")
}
