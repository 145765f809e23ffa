package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

type replayCmd struct {
	runFlags `embed:""`
	JSON     bool `help:"Print the comparison as JSON."`
}

func (replayCmd) Help() string {
	return `Replays a recorded run with the loop config given (--config), calling no
agent: each iteration's recorded workspace is restored into a scratch directory,
the checks and the metrics command run for real, the recorded judges' answers
and the run's review decisions are added, and the gate and the stop ladder rule.
Prints per iteration the recorded verdicts beside the replayed ones. Exit 0 when
the replay reproduces the recording, 1 when it diverges (the first iteration
and goal are named), 2 when the config does not match the recording or the run
has none.

Example:
  loop-action replay
  loop-action -c stricter.toml replay --run-id nightly/main --json`
}

func (c *replayCmd) Run(cl *cli, d *deps) error {
	cfg, err := cl.load(d)
	if err != nil {
		return err
	}
	store, cp, err := c.openRun(cl, d)
	if err != nil {
		return err
	}
	defer store.Close()
	rs, ok := store.(runner.RecordingStore)
	if !ok {
		return &usageError{fmt.Errorf("--state %q keeps no recordings", c.State)}
	}
	k, err := cl.checkout(d)
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "loop-replay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	res, err := runner.Replay(d.ctx, runner.ReplayOptions{Config: cfg, Store: rs, RunID: cp.RunID, Root: scratch, Env: d.env.vars, Checkout: k})
	switch {
	case errors.Is(err, runner.ErrReplayMismatch), errors.Is(err, state.ErrNotFound):
		return &usageError{err}
	case err != nil:
		return err
	}
	if c.JSON {
		err = writeJSON(d, res)
	} else {
		err = writeReplay(d.stdout, res)
	}
	if err != nil {
		return err
	}
	if !res.Reproduced {
		return exitCodeError(exitUnsuccessful) // the comparison says where
	}
	return nil
}

// writeReplay prints each iteration's recorded and replayed verdicts.
func writeReplay(w io.Writer, res runner.ReplayResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "replay of run %s\n", res.RunID)
	fmt.Fprintf(&b, "%-10s %-20s %-22s %s\n", "iteration", "goal", "recorded", "replayed")
	for _, it := range res.Iterations {
		for _, g := range it.Recorded {
			fmt.Fprintf(&b, "%-10d %-20s %-22s %s\n", it.Iteration, g.Goal, goalCell(it.Recorded, g.Goal), goalCell(it.Replayed, g.Goal))
		}
	}
	fmt.Fprintf(&b, "recorded outcome: %s; replayed: %s\n", res.Recorded, res.Replayed)
	if res.Reproduced {
		b.WriteString("reproduced\n")
	} else {
		fmt.Fprintf(&b, "diverged at %s\n", res.Divergence)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func goalCell(gs []runner.GoalStatus, goal string) string {
	for _, g := range gs {
		if g.Goal == goal {
			mark := "fail"
			if g.Satisfied {
				mark = "pass"
			}
			return fmt.Sprintf("%s %d/%d", mark, g.Passed, g.Total)
		}
	}
	return "-"
}
