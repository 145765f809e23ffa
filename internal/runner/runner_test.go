package runner

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/state"
)

// fake is a provider implemented by a function.
type fake func(ctx context.Context, req provider.Request) provider.Response

func (f fake) Dispatch(ctx context.Context, req provider.Request) provider.Response {
	return f(ctx, req)
}

// touch is a builder that creates a file in the loop root.
func touch(name string, tokens int64) fake {
	return func(_ context.Context, req provider.Request) provider.Response {
		err := os.WriteFile(filepath.Join(req.Root, name), []byte("x\n"), 0o644)
		return provider.Response{Err: err, Usage: provider.Usage{Total: tokens}}
	}
}

// idle is a builder that does nothing.
func idle(tokens int64) fake {
	return func(context.Context, provider.Request) provider.Response {
		return provider.Response{Usage: provider.Usage{Total: tokens}}
	}
}

// answer is a judge that always gives the same answer, counting calls.
func answer(text string, calls *atomic.Int32) fake {
	return func(context.Context, provider.Request) provider.Response {
		calls.Add(1)
		return provider.Response{Answer: text}
	}
}

type harness struct {
	t     *testing.T
	root  string
	store *state.Dir
	cfg   *loop.Config
	opts  Options
}

func newHarness(t *testing.T, src string, providers map[string]Provider) *harness {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(src))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	root := t.TempDir()
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, root: root, store: store, cfg: cfg}
	h.opts = Options{Config: cfg, Root: root, RunID: "test/run", Store: store, Providers: providers}
	return h
}

func (h *harness) run(ctx context.Context) Outcome {
	h.t.Helper()
	out, err := Run(ctx, h.opts)
	if err != nil {
		h.t.Fatalf("Run: %v", err)
	}
	return out
}

func (h *harness) events() []ledger.Event {
	h.t.Helper()
	evs := ledgerOf(h.t, h.store, h.opts.RunID)
	for i, e := range evs {
		if e.Seq != i+1 {
			h.t.Fatalf("event %d has seq %d", i+1, e.Seq)
		}
	}
	return evs
}

func count(evs []ledger.Event, typ ledger.Type, node string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ && (node == "" || e.Node == node) {
			n++
		}
	}
	return n
}

const judged = `name = "judged"
[stop]
max_iterations = 2
no_progress = 0
max_tokens = 1_000_000
[providers.a]
command = ["a"]
[providers.b]
command = ["b"]
[[node]]
name = "fixer"
provider = "a"
goals = ["done"]
[[node]]
name = "review"
role = "judge"
provider = "b"
after = ["fixer"]
[[goal]]
name = "done"
  [[goal.check]]
  type = "file_exists"
  path = "done.txt"
  [[goal.check]]
  type = "judge"
  node = "review"
`

func TestJudgeOnTheBuildersProviderNeverSatisfies(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := newHarness(t, judged, nil)
	good := answer(`{"verdict":"pass","evidence":"done.txt exists","score":10}`, &calls)
	h.opts.Providers = map[string]Provider{"a": touch("done.txt", 1), "b": good}
	h.cfg.Nodes[1].Provider = "a" // what validate forbids, the runner and the gate still refuse
	out := h.run(context.Background())
	if out.Success || calls.Load() != 0 {
		t.Fatalf("outcome %s, judge called %d times; want no success and no call", out.Status, calls.Load())
	}
	evs := h.events()
	if n := count(evs, ledger.NodeSkipped, "review"); n != 2 {
		t.Errorf("judge skipped %d times, want 2 (one per iteration)", n)
	}
	if ev := out.Verdicts[0].Checks[1].Evidence; !strings.Contains(ev, "gave no verdict") {
		t.Errorf("judge check evidence = %q", ev)
	}
}

func TestIndependentJudgeSatisfies(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := newHarness(t, judged, nil)
	h.opts.Providers = map[string]Provider{"a": touch("done.txt", 1), "b": answer(`{"verdict":"pass","evidence":"done.txt exists","score":10}`, &calls)}
	out := h.run(context.Background())
	if !out.Success || out.Iteration != 1 || calls.Load() != 1 {
		t.Fatalf("outcome %s at %d, judge called %d times; want success at 1 after 1 call", out.Status, out.Iteration, calls.Load())
	}
}

func TestUnparseableVerdictIsRetriedExactlyOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	h := newHarness(t, judged, nil)
	h.opts.Providers = map[string]Provider{"a": touch("done.txt", 1), "b": answer("looks good to me!", &calls)}
	out := h.run(context.Background())
	if out.Success {
		t.Fatal("an unparseable verdict satisfied the goal")
	}
	if calls.Load() != 4 {
		t.Errorf("judge called %d times over 2 iterations, want 4 (one retry each)", calls.Load())
	}
	evs := h.events()
	if n := count(evs, ledger.JudgeRetried, "review"); n != 2 {
		t.Errorf("%d judge_retried events, want 2", n)
	}
	if ev := out.Verdicts[0].Checks[1].Evidence; !strings.Contains(ev, "no parseable verdict in 2 attempts") {
		t.Errorf("evidence = %q", ev)
	}
}

const three = `name = "budget"
[stop]
max_iterations = 5
max_tokens = 1000
[run]
concurrency = 1
[providers.a]
command = ["a"]
[[node]]
name = "one"
provider = "a"
goals = ["g"]
[[node]]
name = "two"
provider = "a"
goals = ["g"]
[[node]]
name = "three"
provider = "a"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

func TestNoNodeStartsOnceTheTokenBudgetIsSpent(t *testing.T) {
	t.Parallel()
	var started atomic.Int32
	spend := fake(func(context.Context, provider.Request) provider.Response {
		started.Add(1)
		return provider.Response{Usage: provider.Usage{Total: 600}}
	})
	h := newHarness(t, three, map[string]Provider{"a": spend})
	out := h.run(context.Background())
	if out.Status != state.TokenBudget || started.Load() != 2 || out.Spend.Tokens != 1200 {
		t.Fatalf("status %s, %d nodes started, %d tokens; want token-budget, 2, 1200", out.Status, started.Load(), out.Spend.Tokens)
	}
	evs := h.events()
	var skipped []string
	for _, e := range evs {
		if e.Type == ledger.NodeSkipped {
			skipped = append(skipped, e.Node+": "+e.Reason)
		}
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "three: the token budget is spent") {
		t.Errorf("skips = %q", skipped)
	}
}

const never = `name = "never"
[stop]
max_iterations = 2
no_progress = 0
max_revisions_per_node = 0
max_cost_usd = 100
[providers.a]
command = ["a"]
[[node]]
name = "b"
provider = "a"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

func TestResumeRestoresCountersAndHonoursTheCap(t *testing.T) {
	t.Parallel()
	h := newHarness(t, never, map[string]Provider{"a": idle(10)})
	out := h.run(context.Background())
	if out.Status != state.IterationCap || out.Iteration != 2 || out.Spend.Tokens != 20 {
		t.Fatalf("first run: %s at %d with %d tokens", out.Status, out.Iteration, out.Spend.Tokens)
	}
	again := h.run(context.Background())
	if again.Ran || again.Iteration != 2 {
		t.Fatalf("a run stopped by its cap ran again without a raise: %+v", again)
	}
	h.opts.MaxIterations = 4
	raised := h.run(context.Background())
	if raised.Status != state.IterationCap || raised.Iteration != 4 || raised.Spend.Tokens != 40 {
		t.Fatalf("raised run: %s at %d with %d tokens; want iteration-cap at 4 with 40", raised.Status, raised.Iteration, raised.Spend.Tokens)
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if cp.Revisions["b"] != 4 || cp.Stale != 4 {
		t.Errorf("revisions %d, stale %d; want 4 and 4 across resumes", cp.Revisions["b"], cp.Stale)
	}
	evs := h.events()
	if n := count(evs, ledger.IterationStarted, ""); n != 4 {
		t.Errorf("%d iterations started, want 4", n)
	}
	if n := count(evs, ledger.BudgetRaised, ""); n != 1 {
		t.Errorf("%d budget_raised events, want 1", n)
	}
}

func TestCancelSavesTheCheckpointQuietly(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	block := fake(func(ctx context.Context, _ provider.Request) provider.Response {
		cancel()
		<-ctx.Done()
		return provider.Response{Usage: provider.Usage{Total: 7}, Err: ctx.Err()}
	})
	h := newHarness(t, never, map[string]Provider{"a": block})
	out := h.run(ctx)
	if out.Status != state.Cancelled || out.Iteration != 0 || out.Spend.Tokens != 7 {
		t.Fatalf("cancelled run: %s at %d with %d tokens; want cancelled at 0 with the 7 tokens spent", out.Status, out.Iteration, out.Spend.Tokens)
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil || cp.Status != state.Cancelled || cp.NodeFailures != 0 {
		t.Fatalf("checkpoint %+v, %v", cp, err)
	}
	h.opts.Providers = map[string]Provider{"a": idle(1)}
	resumed := h.run(context.Background())
	if resumed.Status != state.IterationCap || resumed.Iteration != 2 {
		t.Fatalf("resumed: %s at %d", resumed.Status, resumed.Iteration)
	}
}

func TestWallClockStopsAHangingProvider(t *testing.T) {
	t.Parallel()
	src := strings.Replace(never, "max_cost_usd = 100", `max_wall_clock = "300ms"`, 1)
	hang := fake(func(ctx context.Context, _ provider.Request) provider.Response {
		<-ctx.Done()
		return provider.Response{Err: errors.New("killed")}
	})
	h := newHarness(t, src, map[string]Provider{"a": hang})
	start := time.Now()
	out := h.run(context.Background())
	if out.Status != state.WallClock {
		t.Fatalf("status %s, want wall-clock", out.Status)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Fatalf("the run took %v to notice its wall clock was spent", took)
	}
}

const staged = `name = "staged"
[stop]
max_iterations = 3
max_tokens = 1000
[providers.a]
command = ["a"]
[[stage]]
name = "impl"
[[stage]]
name = "docs"
after = ["impl"]
[[node]]
name = "coder"
provider = "a"
goals = ["code"]
stage = "impl"
[[node]]
name = "writer"
provider = "a"
goals = ["docs"]
stage = "docs"
[[goal]]
name = "code"
  [[goal.check]]
  type = "file_exists"
  path = "code.txt"
[[goal]]
name = "docs"
  [[goal.check]]
  type = "file_exists"
  path = "docs.txt"
`

func TestStagesOpenInOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t, staged, nil)
	h.opts.Providers = map[string]Provider{"a": fake(func(ctx context.Context, req provider.Request) provider.Response {
		return touch(req.Node+".txt", 1)(ctx, req)
	})}
	h.cfg.Nodes[0].Name, h.cfg.Nodes[1].Name = "code", "docs" // file names follow node names
	h.cfg.Nodes[1].After = nil
	out := h.run(context.Background())
	if !out.Success || out.Iteration != 2 {
		t.Fatalf("staged run: %s at %d, want success at 2", out.Status, out.Iteration)
	}
	var order []string
	for _, e := range h.events() {
		switch e.Type {
		case ledger.StageOpened, ledger.StageClosed:
			order = append(order, string(e.Type)+" "+e.Stage)
		case ledger.NodeSkipped, ledger.NodeDispatched:
			order = append(order, string(e.Type)+" "+e.Node)
		}
	}
	want := "stage_opened impl,node_dispatched code,node_skipped docs,stage_closed impl,stage_opened docs,node_skipped code,node_dispatched docs,stage_closed docs"
	if got := strings.Join(order, ","); got != want {
		t.Errorf("order:\n got %s\nwant %s", got, want)
	}
}

func TestPerturbationIsSeededByRunAndIteration(t *testing.T) {
	t.Parallel()
	// Pinned: a run resumed by another version must replay the same choices.
	if got := perturbationSeed("a/b", 3); got != 11471840039381389216 {
		t.Fatalf("perturbationSeed(a/b, 3) = %d; the derivation changed, and old runs would not replay", got)
	}
	if perturbationSeed("a/b", 3) == perturbationSeed("a/b", 4) || perturbationSeed("a/b", 3) == perturbationSeed("a/c", 3) {
		t.Fatal("different iterations or runs gave the same seed")
	}
}

func TestSecretsAreMaskedInTheLedger(t *testing.T) {
	t.Parallel()
	src := strings.Replace(never, `command = ["a"]`, "command = [\"a\"]\nenv = [\"AGENT_TOKEN\"]", 1)
	leak := fake(func(context.Context, provider.Request) provider.Response {
		return provider.Response{Err: errors.New(`agent "a" exited 1: auth failed for token s3cr3t-t0ken`)}
	})
	h := newHarness(t, src, map[string]Provider{"a": leak})
	h.opts.Env = []string{"AGENT_TOKEN=s3cr3t-t0ken", "HOME=/root"}
	h.run(context.Background())
	b, err := h.store.Ledger(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	log, err := h.store.Log(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"ledger": b, "log": log} {
		if bytes.Contains(text, []byte("s3cr3t-t0ken")) {
			t.Errorf("the %s carries the secret", name)
		}
		if !bytes.Contains(text, []byte("token ***")) {
			t.Errorf("the %s lost the masked failure", name)
		}
	}
}

func TestANewGenerationStartsAfresh(t *testing.T) {
	t.Parallel()
	h := newHarness(t, never, map[string]Provider{"a": idle(10)})
	if out := h.run(context.Background()); out.Iteration != 2 {
		t.Fatalf("first generation: %s at %d", out.Status, out.Iteration)
	}
	out := h.session(context.Background(), func(s *Session) { s.NewGeneration("the head moved from 1111111 to 2222222") })
	if !out.Ran || out.Iteration != 2 || out.Spend.Tokens != 20 {
		t.Fatalf("new generation: ran %v, %s at %d with %d tokens; want a fresh run of 2 iterations and 20 tokens", out.Ran, out.Status, out.Iteration, out.Spend.Tokens)
	}
	evs := h.events()
	if evs[0].Type != ledger.RunStarted || !strings.Contains(evs[0].Line(), "the head moved") {
		t.Errorf("the new generation's ledger starts with %q", evs[0].Line())
	}
	if n := count(evs, ledger.IterationStarted, ""); n != 2 {
		t.Errorf("the new generation's ledger holds %d iterations, want only its own 2", n)
	}
}
