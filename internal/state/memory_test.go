package state_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
)

// ended is cp ended for good at iteration it with its memory entry.
func ended(cp *state.Checkpoint, it int, at time.Time) state.Commit {
	cp.Iteration, cp.Status = it, state.NoProgress
	return state.Commit{Memory: &state.Memory{RunID: cp.RunID, Generation: state.GenerationName(cp.StartedAt), Loop: cp.Loop,
		At: at, Outcome: state.NoProgress, Iterations: it, Goals: []state.GoalMemory{{Goal: "tests", SatisfiedAt: -1}}}}
}

func memoryIDs(t *testing.T, s state.Store) []string {
	t.Helper()
	ms, err := s.Memory(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID())
	}
	return ids
}

// TestMemoryEntries: an entry is committed with its run's terminal
// checkpoint, read back latest first from another machine, kept across a
// new generation of the run, dropped by forget, and capped per run.
func TestMemoryEntries(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		start := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
		a := newCheckpoint("loop/a")
		a.StartedAt = start
		if err := s.Save(t.Context(), a, ended(a, 2, start.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
		b := newCheckpoint("loop/b")
		b.StartedAt = start.Add(time.Minute)
		if err := s.Save(t.Context(), b, ended(b, 3, start.Add(2*time.Hour))); err != nil {
			t.Fatal(err)
		}
		genA, genB := state.GenerationName(a.StartedAt), state.GenerationName(b.StartedAt)
		want := "loop/b@" + genB + " loop/a@" + genA
		if got := strings.Join(memoryIDs(t, f.elsewhere(t)), " "); got != want {
			t.Fatalf("entries %q, want %q", got, want)
		}

		// A new generation of run a: its first checkpoint keeps the old entry.
		a2 := newCheckpoint("loop/a")
		a2.StartedAt = start.Add(24 * time.Hour)
		if err := s.Save(t.Context(), a2, state.Commit{}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(memoryIDs(t, s), " "); got != want {
			t.Fatalf("after a new generation: %q, want %q", got, want)
		}

		// Forget drops the entry named, nothing else.
		if err := s.Save(t.Context(), a2, state.Commit{KeepWorkspace: true, Forget: []string{genA}}); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(memoryIDs(t, f.elsewhere(t)), " "); got != "loop/b@"+genB {
			t.Fatalf("after forget: %q", got)
		}

		// At most MaxMemoryPerRun entries a run: the oldest go.
		for i := range state.MaxMemoryPerRun + 2 {
			c := newCheckpoint("loop/c")
			c.StartedAt = start.Add(time.Duration(i) * time.Hour)
			if err := s.Save(t.Context(), c, ended(c, 1, c.StartedAt)); err != nil {
				t.Fatal(err)
			}
		}
		var ofC []string
		for _, id := range memoryIDs(t, s) {
			if strings.HasPrefix(id, "loop/c@") {
				ofC = append(ofC, id)
			}
		}
		if len(ofC) != state.MaxMemoryPerRun || ofC[len(ofC)-1] != "loop/c@"+state.GenerationName(start.Add(2*time.Hour)) {
			t.Fatalf("run c keeps %d entries, the oldest %v; want %d from the third", len(ofC), ofC[len(ofC)-1:], state.MaxMemoryPerRun)
		}
	})
}

// TestMemoryRefusesBadEntries: a save whose entry belongs to another run,
// names no generation or is too large fails, and stores nothing.
func TestMemoryRefusesBadEntries(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, f *fixture) {
		s := f.open(t)
		bad := map[string]func(c *state.Commit){
			"another run":   func(c *state.Commit) { c.Memory.RunID = "loop/other" },
			"no generation": func(c *state.Commit) { c.Memory.Generation = "../../escape" },
			"too large":     func(c *state.Commit) { c.Memory.Detail = strings.Repeat("x", state.MaxMemoryBytes) },
			"bad forget":    func(c *state.Commit) { c.Memory, c.Forget = nil, []string{"../checkpoint"} },
		}
		for name, spoil := range bad {
			cp := newCheckpoint("loop/bad")
			c := ended(cp, 1, time.Now())
			spoil(&c)
			if err := s.Save(t.Context(), cp, c); err == nil {
				t.Errorf("%s: saved", name)
			}
		}
		if _, err := s.Load(t.Context(), "loop/bad"); err == nil {
			t.Error("a refused save committed a checkpoint")
		}
		if ids := memoryIDs(t, s); len(ids) != 0 {
			t.Errorf("refused saves left entries %v", ids)
		}
	})
}

// TestMemoryOfAnUncommittedEndIsInvisible: an entry file of the
// checkpoint's own generation that no terminal checkpoint covers — what a
// dir: save killed before its commit leaves — is not listed; the
// checkpoint's end at that iteration makes it so.
func TestMemoryOfAnUncommittedEndIsInvisible(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := openStore(t, dir)
	cp := newCheckpoint("loop/a")
	if err := s.Save(t.Context(), cp, state.Commit{}); err != nil { // running, iteration 0
		t.Fatal(err)
	}
	gen := state.GenerationName(cp.StartedAt)
	entry := fmt.Sprintf(`{"run_id":"loop/a","generation":%q,"loop":"green-build","outcome":"no-progress","iterations":2,"goals":[]}`, gen)
	mem := filepath.Join(dir, "runs", "loop", "a", "memory")
	if err := os.MkdirAll(mem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, gen+".json"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	if ids := memoryIDs(t, s); len(ids) != 0 {
		t.Fatalf("an entry no checkpoint committed is listed: %v", ids)
	}
	cp.Iteration, cp.Status = 2, state.NoProgress
	if err := s.Save(t.Context(), cp, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	if ids := memoryIDs(t, s); len(ids) != 1 {
		t.Fatalf("the committed end does not show its entry: %v", ids)
	}
	// A killed save's entry of a generation that never ended is dropped
	// when the run starts afresh, not shown as the old generation's.
	next := newCheckpoint("loop/b")
	if err := s.Save(t.Context(), next, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	bmem := filepath.Join(dir, "runs", "loop", "b", "memory")
	if err := os.MkdirAll(bmem, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bmem, gen+".json"), []byte(strings.ReplaceAll(entry, "loop/a", "loop/b")), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := newCheckpoint("loop/b")
	fresh.StartedAt = next.StartedAt.Add(time.Hour)
	if err := s.Save(t.Context(), fresh, state.Commit{}); err != nil {
		t.Fatal(err)
	}
	if ids := memoryIDs(t, s); len(ids) != 1 || ids[0] != "loop/a@"+gen {
		t.Fatalf("after a new generation the uncommitted end shows: %v", ids)
	}
	if err := os.WriteFile(filepath.Join(mem, gen+".json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Memory(t.Context()); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("a corrupt entry: %v", err)
	}
}

// TestBranchMemoryConcurrentRuns: runs ending at the same time on one
// state branch each commit their entry; the compare-and-swap rebuilds a
// lost push on the new head, so no entry is lost.
func TestBranchMemoryConcurrentRuns(t *testing.T) {
	t.Parallel()
	const runs = 6
	srv := gitfake.Start(t, gitfake.Options{Tokens: []string{"s3cret"}})
	url, bare := srv.Repo(t, "state.git")
	var opened, wg sync.WaitGroup
	opened.Add(runs)
	errs := make([]error, runs)
	for i := range runs {
		wg.Go(func() {
			b, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: t.TempDir(), Branch: "loop-state", Remote: url, Token: "s3cret"})
			opened.Done()
			if err != nil {
				errs[i] = err
				return
			}
			defer b.Close()
			opened.Wait() // every writer has seen the same head
			cp := newCheckpoint(fmt.Sprintf("loop/run-%d", i))
			errs[i] = b.Save(t.Context(), cp, ended(cp, 1, time.Now()))
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if ids := memoryIDs(t, openBranchHTTP(t, url, "s3cret", t.TempDir())); len(ids) != runs {
		t.Fatalf("%d entries on the branch, want %d: %v", len(ids), runs, ids)
	}
	gitfake.Fsck(t, bare)
}
