package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// boundsLoop measures one check, with run.max_file_size raised so that a
// terabyte is hashed rather than refused: only the run's context can stop
// that walk.
const boundsLoop = `name = "bounds"
[stop]
max_iterations = 3
no_progress = 0
max_wall_clock = "%s"
[run]
max_file_size = "2TiB"
[providers.a]
command = ["agent"]
[[node]]
name = "builder"
provider = "a"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

// bigFile is a sparse terabyte: reading it would take many minutes.
const bigFile = "big.bin"

func makeBig(t *testing.T, root string) {
	t.Helper()
	p := filepath.Join(root, bigFile)
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 1<<40); err != nil {
		t.Skipf("no sparse terabyte here: %v", err)
	}
}

// branchRoot is a loop root cloned from a new origin, with a branch: store
// on it.
func branchRoot(t *testing.T) (root, origin string, store *state.Branch) {
	t.Helper()
	base := t.TempDir()
	origin = filepath.Join(base, "origin.git")
	gitIn(t, base, "init", "-q", "--bare", "-b", "main", origin)
	seed := filepath.Join(base, "seed")
	gitIn(t, base, "init", "-q", "-b", "main", seed)
	mustWrite(t, filepath.Join(seed, "README"), "project\n")
	mustWrite(t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-q", "-m", "project")
	gitIn(t, seed, "push", "-q", origin, "main")
	root = filepath.Join(base, "job")
	gitIn(t, base, "clone", "-q", "file://"+origin, root)
	store, err := state.OpenBranch(t.Context(), state.BranchOptions{Root: root, Branch: "loop-state", Remote: origin,
		Checkout: workspace.Checkout{MaxFileSize: 2 << 40}}) // as the config says, as the composition root passes it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return root, origin, store
}

// cancelWhenReading returns a context cancelled, with cause, once this
// process holds name (in dir) open: the walk has begun reading it.
func cancelWhenReading(t *testing.T, dir, name string, cause error) context.Context {
	ctx, cancel := context.WithCancelCause(t.Context())
	want := filepath.Join(dir, name)
	go func() {
		for ctx.Err() == nil {
			fds, _ := os.ReadDir("/proc/self/fd")
			for _, fd := range fds {
				if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == want {
					cancel(cause)
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return ctx
}

// TestStoppedRunSavesWithoutWalking: a run stopped while its measurement
// hashes a terabyte — by its wall-clock budget, or by a signal (its
// context) — ends promptly, and its last save reads nothing of the loop
// root: it keeps the workspace its last checkpoint stored (the iteration
// it was in is dropped), or, stopped before its first checkpoint (no
// agent had run), stores none, and a resume then restores nothing. Every
// run here is bounded by the test's deadline only so that it cannot hang;
// without the defence the save would hash the terabyte again.
func TestStoppedRunSavesWithoutWalking(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to tell when the walk reads the file")
	}
	writeBig := func(root string) fake {
		return func(context.Context, provider.Request) provider.Response {
			if err := os.WriteFile(filepath.Join(root, bigFile), nil, 0o644); err == nil {
				_ = os.Truncate(filepath.Join(root, bigFile), 1<<40)
			}
			return provider.Response{Usage: provider.Usage{Total: 1}}
		}
	}
	cause := errors.New("SIGTERM")
	tests := []struct {
		name     string
		wall     string
		first    bool // the terabyte is there before the run starts
		signal   bool // the run's context is cancelled once the walk reads it
		want     state.Status
		keepsOne bool // the branch keeps a workspace for the run
	}{
		{"deadline before the first checkpoint", "1s", true, false, state.WallClock, false},
		{"signal before the first checkpoint", "1h", true, true, state.Cancelled, false},
		{"signal after a checkpoint", "1h", false, true, state.Cancelled, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root, origin, store := branchRoot(t)
			if tt.first {
				makeBig(t, root)
			}
			cfg, err := loop.Parse("loop.toml", []byte(strings.Replace(boundsLoop, "%s", tt.wall, 1)))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			if tt.signal {
				ctx = cancelWhenReading(t, root, bigFile, cause)
			}
			opts := Options{Config: cfg, Root: root, RunID: "bounds/run", Store: store,
				Providers: map[string]Provider{"a": writeBig(root)}, Env: []string{"PATH=" + os.Getenv("PATH")}}
			out, err := Run(ctx, opts)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if out.Status != tt.want {
				t.Fatalf("status %s, want %s (%s)", out.Status, tt.want, out.Detail)
			}
			cp, err := store.Load(t.Context(), "bounds/run")
			if err != nil || cp.Status != tt.want {
				t.Fatalf("the checkpoint: %v, %v", cp, err)
			}
			ls := gitIn(t, origin, "ls-tree", "loop-state", "runs/bounds/run/")
			if has := strings.Contains(ls, "\truns/bounds/run/workspace\n"); has != tt.keepsOne {
				t.Fatalf("the run's files on the branch:\n%s\nwant a workspace: %v", ls, tt.keepsOne)
			}
			if tt.keepsOne {
				if got := gitIn(t, origin, "rev-parse", "loop-state:runs/bounds/run/workspace"); strings.TrimSpace(got) != cp.Snapshot {
					t.Errorf("the kept workspace is %s, want the last measured %s", got, cp.Snapshot)
				}
				if ls := gitIn(t, origin, "ls-tree", "loop-state:runs/bounds/run/workspace"); strings.Contains(ls, bigFile) {
					t.Errorf("the stopped iteration's terabyte was stored:\n%s", ls)
				}
			}

			// The resume restores what was kept (nothing, or the last
			// checkpoint's workspace: no terabyte) and goes on.
			if err := os.Remove(filepath.Join(root, bigFile)); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			cfg2, err := loop.Parse("loop.toml", []byte(strings.Replace(boundsLoop, "%s", "1h", 1)))
			if err != nil {
				t.Fatal(err)
			}
			opts.Config, opts.Providers = cfg2, map[string]Provider{"a": idle(1)}
			again, err := Run(t.Context(), opts)
			if err != nil {
				t.Fatalf("resume: %v", err)
			}
			if again.Status != state.IterationCap {
				t.Errorf("resumed: %s (%s), want iteration-cap", again.Status, again.Detail)
			}
		})
	}
}
