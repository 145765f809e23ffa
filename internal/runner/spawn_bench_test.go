//go:build unix

package runner

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/state"
)

// The spawn floor: what an iteration of 10 real agent processes and 10
// real check processes cannot cost less than, whatever orchestrates them.
// The floor is measured between the loop's iterations, in the same
// process: the same agents (argv, stdin, environment) started at once with
// os/exec and waited for, then the same checks started at once and waited
// for. Nothing else: no guard, no snapshot, no gate, no checkpoint.

// spawnConfig is a loop of nodes builders run by the agent script, each
// advancing one goal whose one command check fails (so the loop never ends
// on its own), all dispatched at once.
func spawnConfig(agent string, nodes, iterations int, run string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"spawn\"\n[stop]\nmax_iterations = %d\nno_progress = 0\n", iterations)
	fmt.Fprintf(&b, "[run]\nconcurrency = 0\n%s\n[providers.agent]\ncommand = [%q]\n", run, agent)
	for i := range nodes {
		fmt.Fprintf(&b, "[[node]]\nname = \"n%d\"\nprovider = \"agent\"\ngoals = [\"g%d\"]\n", i, i)
	}
	for i := range nodes {
		fmt.Fprintf(&b, "[[goal]]\nname = \"g%d\"\n  [[goal.check]]\n  type = \"test\"\n  run = \"test -f never-%d.txt\"\n", i, i)
	}
	return b.String()
}

// spawnRoot is a git repository with a hundred small committed files and
// .loop ignored, an hour old, as a user's checkout.
func spawnRoot(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("no git")
	}
	root := tb.TempDir()
	for i := range 100 {
		p := filepath.Join(root, fmt.Sprintf("src/d%d/f%02d.txt", i/10, i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".loop/\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	old := time.Now().Add(-time.Hour) // as a checkout made before the run
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

// requests remembers each node's last request to its real provider, so
// that the floor starts exactly the processes the loop started.
type requests struct {
	Provider
	mu   sync.Mutex
	last map[string]provider.Request
}

func (q *requests) Dispatch(ctx context.Context, req provider.Request) provider.Response {
	q.mu.Lock()
	q.last[req.Node] = req
	q.mu.Unlock()
	return q.Provider.Dispatch(ctx, req)
}

// agentProcs are the processes of the last requests: the agent with the
// prompt on stdin and the environment the provider gives it.
func (q *requests) agentProcs(agent string) []*exec.Cmd {
	q.mu.Lock()
	defer q.mu.Unlock()
	var cmds []*exec.Cmd
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range q.last {
			if !yield(k) {
				return
			}
		}
	}) {
		req := q.last[name]
		cmd := exec.Command(agent)
		cmd.Dir, cmd.Stdin = req.Root, strings.NewReader(req.Prompt)
		cmd.Env = append(slices.Clone(req.Env), "LOOP_RUN_ID="+req.RunID, fmt.Sprintf("LOOP_ITERATION=%d", req.Iteration),
			"LOOP_NODE="+req.Node, "LOOP_ROOT="+req.Root, "LOOP_HISTORY_FILE="+req.HistoryFile)
		cmds = append(cmds, cmd)
	}
	return cmds
}

// checkProcs are the config's command checks as the collector starts them.
func checkProcs(cfg *loop.Config, root string, env []string) []*exec.Cmd {
	var cmds []*exec.Cmd
	for _, g := range cfg.Goals {
		for _, ch := range g.Checks {
			if ch.IsCommand() {
				argv := process.ShellArgv(ch.Run) // the shell the collector starts
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = root, env
				cmds = append(cmds, cmd)
			}
		}
	}
	return cmds
}

// parallel starts every command at once, capturing its output, and waits
// for them all; it returns how long that took. With setsid, each starts
// in a session of its own, as loop-action starts its children.
func parallel(tb testing.TB, cmds []*exec.Cmd, wantOK, setsid bool) time.Duration {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(cmds))
	for i, cmd := range cmds {
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if setsid {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	wg.Wait()
	took := time.Since(start)
	for i, err := range errs {
		if (err == nil) != wantOK {
			tb.Fatalf("floor: %v: %v", cmds[i].Args, err)
		}
	}
	return took
}

// spawnMeter measures a run's iterations and, after each, the floor.
type spawnMeter struct {
	tb      testing.TB
	agent   string
	cfg     *loop.Config
	root    string
	env     []string
	reqs    *requests
	last    time.Time
	loop    []time.Duration
	floor   []time.Duration
	setsid  []time.Duration // the floor with each process in a session of its own
	durable func() error    // waits for the store's background work, if it has any
}

// saved is the run's Checkpointed hook: the time since the last one
// returned is an iteration's; the floor is measured before returning, and
// the floor whose processes each start a session of their own (which
// loop-action's containment needs, and which the kernel's scheduler
// autogroups make cost more while processes compete for the CPUs), the
// two in turns.
func (m *spawnMeter) saved(cp *state.Checkpoint) {
	now := time.Now()
	if m.durable != nil {
		// The store's background flush (a dir: store's fsyncs) would slow
		// the floor; in a run it overlaps the next iteration's start
		// instead, which the floor stands in for. It is waited for outside
		// both clocks.
		if err := m.durable(); err != nil {
			m.tb.Fatal(err)
		}
	}
	if cp.Iteration > 0 {
		m.loop = append(m.loop, now.Sub(m.last))
		first := cp.Iteration%2 == 0
		for _, setsid := range []bool{first, !first} {
			agents := parallel(m.tb, m.reqs.agentProcs(m.agent), true, setsid)
			checks := parallel(m.tb, checkProcs(m.cfg, m.root, m.env), false, setsid)
			if setsid {
				m.setsid = append(m.setsid, agents+checks)
				continue
			}
			m.floor = append(m.floor, agents+checks)
		}
	}
	m.last = time.Now()
}

// report prints the iteration's and the floor's mean time and their ratio.
func (m *spawnMeter) report(b *testing.B) {
	var l, f, ss time.Duration
	for i := range m.loop {
		l, f, ss = l+m.loop[i], f+m.floor[i], ss+m.setsid[i]
	}
	n := float64(len(m.loop))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(l.Microseconds())/1e3/n, "loop-ms/op")
	b.ReportMetric(float64(f.Microseconds())/1e3/n, "floor-ms/op")
	b.ReportMetric(float64(l)/float64(f), "ratio")
	b.ReportMetric(float64(ss.Microseconds())/1e3/n, "floor-setsid-ms/op")
	b.ReportMetric(float64(l)/float64(ss), "ratio-setsid")
}

// benchSpawn runs b.N iterations of the spawn workload with the agent
// script, measuring the floor after each. store makes the store in root.
func benchSpawn(b *testing.B, script string, nodes int, run string, store func(root string) Store) *spawnMeter {
	agent, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", script))
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := loop.Parse("loop.toml", []byte(spawnConfig(agent, nodes, b.N, run)))
	if err != nil {
		b.Fatal(err)
	}
	root := spawnRoot(b)
	env := os.Environ()
	m := &spawnMeter{tb: b, agent: agent, cfg: cfg, root: root, env: CheckEnv(env),
		reqs: &requests{Provider: provider.Command{Name: "agent", Spec: cfg.Providers["agent"]}, last: map[string]provider.Request{}}}
	st := store(root)
	if d, ok := st.(interface{ Durable() error }); ok {
		m.durable = d.Durable
	}
	opts := Options{Config: cfg, Root: root, RunID: "bench/spawn", Store: st, Env: env,
		Providers: map[string]Provider{"agent": m.reqs}, Checkpointed: m.saved}
	out, err := Run(context.Background(), opts)
	if err != nil || out.Iteration != b.N {
		b.Fatalf("run: %v, %d iterations of %d (%s)", err, out.Iteration, b.N, out.Detail)
	}
	return m
}

func dirStore(b *testing.B) func(string) Store {
	return func(root string) Store {
		s, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
}

func memoryStore(string) Store { return &memStore{} }

// BenchmarkSpawnFloor is an iteration of 10 builders whose agent is a real
// process (it reads its prompt and exits) and 10 goals of one failing
// command check each, all at once, against the floor measured after each
// iteration: the same processes started at once with os/exec, agents then
// checks. It reports loop-ms/op, floor-ms/op and their ratio, with the
// fsynced dir: store and in memory (what is left is the disk's), and with
// checks run one after another (the default) and all at once.
func BenchmarkSpawnFloor(b *testing.B) {
	for _, c := range []struct{ name, run string }{
		{"checks=serial", ""},
		{"checks=all", "check_concurrency = 0"},
	} {
		b.Run("store=dir/"+c.name, func(b *testing.B) {
			benchSpawn(b, "reader.sh", 10, c.run, dirStore(b)).report(b)
		})
		b.Run("store=memory/"+c.name, func(b *testing.B) {
			benchSpawn(b, "reader.sh", 10, c.run, memoryStore).report(b)
		})
	}
}
