package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/runner/provider"
)

const isolated = `name = "iso"
[stop]
max_iterations = 1
max_tokens = 1000
[run]
concurrency = 2
[protect]
paths = ["checks/**"]
[providers.a]
command = ["a"]
[[node]]
name = "left"
provider = "a"
goals = ["g"]
isolate = true
[[node]]
name = "right"
provider = "a"
goals = ["g"]
isolate = true
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

// writes makes each node write files into its own working directory.
func writes(files map[string]map[string]string) fake {
	return func(_ context.Context, req provider.Request) provider.Response {
		for name, body := range files[req.Node] {
			p := filepath.Join(req.Root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return provider.Response{Err: err}
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return provider.Response{Err: err}
			}
		}
		return provider.Response{}
	}
}

func TestIsolatedNodesPublishFirstWriterWins(t *testing.T) {
	t.Parallel()
	h := newHarness(t, isolated, nil)
	if err := os.MkdirAll(filepath.Join(h.root, "checks"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.root, "checks", "run.sh"), []byte("exit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.opts.Providers = map[string]Provider{"a": writes(map[string]map[string]string{
		"left":  {"shared.txt": "from left\n", "left.txt": "l\n", "checks/run.sh": "exit 1\n"},
		"right": {"shared.txt": "from right\n", "right.txt": "r\n", ".git/hooks/pre-commit": "evil\n"},
	})}
	out := h.run(context.Background())
	if out.Iteration != 1 {
		t.Fatalf("run: %s at %d", out.Status, out.Iteration)
	}
	for name, want := range map[string]string{"shared.txt": "from left\n", "left.txt": "l\n", "right.txt": "r\n", "checks/run.sh": "exit 0\n"} {
		b, err := os.ReadFile(filepath.Join(h.root, name))
		if err != nil || string(b) != want {
			t.Errorf("%s in the loop root = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(h.root, ".git")); err == nil {
		t.Error("a write into a worktree's .git reached the loop root")
	}
	var lines []string
	for _, e := range h.events() {
		switch e.Type {
		case ledger.PublishConflict, ledger.PublishRefused:
			lines = append(lines, e.Line())
		}
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{
		"node right's change to shared.txt not published: left wrote it first",
		"node left's change to checks/run.sh refused: protected path",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ledger lacks %q; it has:\n%s", want, got)
		}
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil || cp.NodeFailures != 1 {
		t.Errorf("node failures = %d (%v), want 1 for the refused protected change", cp.NodeFailures, err)
	}
	if _, err := os.Stat(filepath.Join(h.root, ".loop", "worktrees")); err == nil {
		t.Error("the worktrees outlived the run's end")
	}
}

// TestIsolatedAgentEnv: an isolated node's agent runs with git's ceiling
// at its worktree's parent, set once whatever the job's environment held,
// so that git there never finds the loop root's repository.
func TestIsolatedAgentEnv(t *testing.T) {
	t.Parallel()
	h := newHarness(t, isolated, nil)
	h.opts.Env = []string{"PATH=/bin", "GIT_CEILING_DIRECTORIES=/job"}
	var mu sync.Mutex
	got := map[string][]string{}
	h.opts.Providers = map[string]Provider{"a": fake(func(_ context.Context, req provider.Request) provider.Response {
		mu.Lock()
		defer mu.Unlock()
		for _, kv := range req.Env {
			if v, ok := strings.CutPrefix(kv, "GIT_CEILING_DIRECTORIES="); ok {
				got[req.Node] = append(got[req.Node], v)
			}
		}
		if req.Root == h.root {
			t.Errorf("node %s ran in the loop root", req.Node)
		}
		got[req.Node] = append(got[req.Node], "root "+filepath.Dir(req.Root))
		return provider.Response{}
	})}
	h.run(context.Background())
	for _, node := range []string{"left", "right"} {
		if v := got[node]; len(v) != 2 || "root "+v[0] != v[1] {
			t.Errorf("%s: GIT_CEILING_DIRECTORIES values, then the worktree's parent: %q", node, v)
		}
	}
}
