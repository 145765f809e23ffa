package evidence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
)

// meet is a check that passes only if the check named by $2 runs at the
// same time: each leaves its mark, then waits (up to three seconds) for the
// other's.
func meet(me, other string) string {
	return fmt.Sprintf(`touch %s.mark; i=0; while [ ! -e %s.mark ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; [ -e %s.mark ]`, me, other, other)
}

func parallelConfig(t *testing.T, checkConcurrency string) *loop.Config {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(fmt.Sprintf(`
name = "p"
[stop]
max_tokens = 1
[run]
%s
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "made.txt"
  [[goal.check]]
  type = "test"
  run = %q
[[goal]]
name = "h"
  [[goal.check]]
  type = "test"
  run = %q
  [[goal.check]]
  type = "test"
  run = "echo made >made.txt"
`, checkConcurrency, meet("a", "b"), meet("b", "a"))))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// statuses are the check statuses of every goal, in order.
func statuses(cfg *loop.Config, ev gate.Evidence) []gate.Status {
	var out []gate.Status
	for _, v := range gate.Evaluate(cfg, ev) {
		for _, c := range v.Checks {
			out = append(out, c.Status)
		}
	}
	return out
}

// TestCollectCheckConcurrency: with check_concurrency = 0 or 2, two
// checks that each need the other running at the same time both pass, and
// a file check reads the file a later command check wrote (file checks
// are read once every command has finished); one at a time (the default),
// the first waits for the second in vain and the file check, before the
// command that writes its file, fails.
func TestCollectCheckConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		setting string
		want    []gate.Status
	}{
		{"", []gate.Status{gate.Fail, gate.Fail, gate.Pass, gate.Pass}},
		{"check_concurrency = 1", []gate.Status{gate.Fail, gate.Fail, gate.Pass, gate.Pass}},
		{"check_concurrency = 0", []gate.Status{gate.Pass, gate.Pass, gate.Pass, gate.Pass}},
		{"check_concurrency = 2", []gate.Status{gate.Pass, gate.Pass, gate.Pass, gate.Pass}},
	}
	for _, tt := range tests {
		t.Run(tt.setting, func(t *testing.T) {
			t.Parallel()
			cfg := parallelConfig(t, tt.setting)
			ev := (&Collector{Root: t.TempDir()}).Collect(t.Context(), cfg)
			if diff := cmp.Diff(tt.want, statuses(cfg, ev)); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if len(ev.Snapshot) != 40 {
				t.Errorf("snapshot = %q, want a tree id", ev.Snapshot)
			}
		})
	}
}

// TestCollectAtOnceVoidsEverything: when the sweep after any command
// check running beside the others fails, processes that could not be
// killed ran beside every check: every check fails with the reason, the
// file checks too, no metric is measured and no snapshot taken.
func TestCollectAtOnceVoidsEverything(t *testing.T) {
	t.Parallel()
	cfg := parallelConfig(t, "check_concurrency = 0")
	cfg.Metrics = loop.Metrics{Command: "echo {}"}
	root := t.TempDir()
	c := &Collector{Root: root, runSpec: func(ctx context.Context, spec process.Spec) process.Result {
		r := process.Run(ctx, spec)
		if strings.Contains(strings.Join(spec.Argv, " "), "made.txt") {
			r.SweepErr = errors.New("pid 4242 would not die")
		}
		return r
	}}
	ev := c.Collect(t.Context(), cfg)
	want := []gate.Status{gate.Fail, gate.Fail, gate.Fail, gate.Fail}
	if diff := cmp.Diff(want, statuses(cfg, ev)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	for _, v := range gate.Evaluate(cfg, ev) {
		for _, ch := range v.Checks {
			if !strings.Contains(ch.Evidence, "pid 4242 would not die") {
				t.Errorf("goal %s check %d: evidence %q does not say why", v.Goal, ch.Index, ch.Evidence)
			}
		}
	}
	if ev.Metrics == nil || ev.Metrics.Command.StartErr == "" || ev.Snapshot != "" {
		t.Errorf("metrics %+v, snapshot %q: want neither measured", ev.Metrics, ev.Snapshot)
	}
}
