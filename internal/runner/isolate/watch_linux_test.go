package isolate

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// busyNode changes a worktree in every way a node can.
func busyNode(t *testing.T, e *env, dir string) {
	e.write("coder", "a", "edited")
	e.write("coder", "new/1/2/f", "nested")
	e.write("coder", "new/1/g", "nested")
	e.write("coder", ".git/config", "x")
	rm(t, dir, "d")
	chmod(t, dir, "x.sh", 0o755)
	mkLink(t, dir, "/etc", "etc")
	if err := os.Rename(filepath.Join(dir, "m"), filepath.Join(dir, "new/m2")); err != nil {
		t.Fatal(err)
	}
}

var busySeed = map[string]string{"a": "1", "d/c": "1", "d/e/f": "1", "x.sh": "1", "m/1": "1", "m/2/3": "1"}

func TestOverflowFallsBackToTheSameResult(t *testing.T) {
	t.Parallel()
	run := func(overflow bool) Report {
		e := newEnv(t, busySeed, false)
		dir := e.prepare("coder")
		w, ok := e.m.feed.(*inotify)
		if !ok {
			t.Fatalf("feed is %T, want inotify", e.m.feed)
		}
		busyNode(t, e, dir)
		if overflow {
			w.mu.Lock()
			w.handle(-1, syscall.IN_Q_OVERFLOW, "")
			w.mu.Unlock()
		}
		rep := e.publish("coder")
		// Watches are re-armed after the walk: a new directory is seen again.
		e.prepare("coder")
		e.write("coder", "later/x/y", "after")
		if got := w.drain(e.m.trees["coder"]); got.full {
			t.Errorf("drain after the fallback: still full")
		} else if _, ok := got.paths["later/x/y"]; !ok {
			t.Errorf("drain after the fallback = %v, want later/x/y", got.paths)
		}
		return rep
	}
	want, got := run(false), run(true)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Publish after an overflow (-inotify +fallback):\n%s", diff)
	}
	if len(want.Published) != 6 || len(want.Refused) != 2 || len(want.Deletions) != 4 {
		t.Errorf("Publish = %+v, want 6 published, 2 refused, 4 deletions", want)
	}
}

func TestWatchesRunningOutFallBackToTheSameResult(t *testing.T) {
	t.Parallel()
	run := func(limit int) Report {
		e := newEnv(t, busySeed, false)
		dir := e.prepare("coder")
		w := e.m.feed.(*inotify)
		w.mu.Lock()
		w.limit = limit
		w.mu.Unlock()
		busyNode(t, e, dir)
		if limit > 0 {
			w.sync()
			w.mu.Lock()
			full := w.marks[e.m.trees["coder"]].full
			w.mu.Unlock()
			if !full {
				t.Fatalf("no watch failed: the test does not test the fallback")
			}
		}
		return e.publish("coder")
	}
	want, got := run(0), run(len(busySeed))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Publish without watches left (-inotify +fallback):\n%s", diff)
	}
}

func TestWatcherSeesEverythingBeforeDrain(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1"}, false)
	e.prepare("coder")
	for i := range 50 {
		// directories created and filled at once, faster than watches are added
		e.write("coder", filepath.Join("burst", string(rune('a'+i%26)), "x", "y", "f"+string(rune('a'+i/26))), "z")
	}
	rep := e.publish("coder")
	if len(rep.Published) != 50 {
		t.Errorf("published %d files, want 50: %+v", len(rep.Published), rep)
	}
}

func TestStaleSyncFileIsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1"}, false)
	writeFile(t, e.root, ".loop/worktrees/.sync/seq", "99999")
	e.prepare("coder")
	w := e.m.feed.(*inotify)
	for range 3 {
		if !w.sync() {
			t.Fatal("sync failed")
		}
		w.mu.Lock()
		seq, seen := w.seq, w.seen
		w.mu.Unlock()
		if seen != seq {
			t.Fatalf("after sync %d the watcher saw %d: a stale number ends the wait early", seq, seen)
		}
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1"}, false)
	var wg sync.WaitGroup
	for _, node := range []string{"coder", "tester"} {
		wg.Go(func() {
			if _, err := e.m.Prepare(t.Context(), node); err != nil {
				t.Errorf("Prepare(%q): %v", node, err)
			}
		})
	}
	wg.Wait()
	w := e.m.feed.(*inotify)
	if err := e.m.Remove(); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.root, ".loop", "worktrees")); !os.IsNotExist(err) {
		t.Errorf(".loop/worktrees after Remove: %v, want it gone", err)
	}
	select {
	case <-w.done:
	case <-time.After(5 * time.Second):
		t.Fatal("the watcher goroutine is still running after Remove")
	}
	if e.inRoot("a") != "1" {
		t.Errorf("Remove touched the root")
	}
	dir := e.prepare("coder") // usable again
	if got := e.inTree("coder", "a"); got != "1" || dir == "" {
		t.Errorf("worktree after Remove and Prepare: a = %q", got)
	}
}
