// Package evidence collects what the gate rules on: it runs the command
// checks and the metrics command in the loop root, looks at the files that
// file_exists and regex checks name, and takes the workspace snapshot.
//
// It is the gate's only I/O. It measures and records; it never decides
// whether a check passes (package gate does), never reads anything outside
// the loop root, and never takes a node's word for anything.
package evidence

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"time"

	"github.com/loop-action/loop-action/gate"
	"github.com/loop-action/loop-action/loop"
	"github.com/loop-action/loop-action/process"
	"github.com/loop-action/loop-action/workspace"
)

// ReadLimit is the largest file a regex check reads.
const ReadLimit = 16 << 20

// Collector measures evidence in one loop root.
type Collector struct {
	Root   string            // the loop root
	Env    []string          // environment of checks; nil inherits the process's
	Hasher *workspace.Hasher // takes the workspace snapshot; nil makes one for Root
}

// Collect measures everything the config's checks need, except judge
// verdicts and review decisions, which the caller adds. Command checks run
// one at a time in config order; a ctx deadline bounds every command and
// a cancelled ctx stops them.
func (c *Collector) Collect(ctx context.Context, cfg *loop.Config) gate.Evidence {
	ev := gate.Evidence{
		Commands: map[gate.CheckID]gate.CommandResult{},
		Files:    map[gate.CheckID]gate.FileResult{},
	}
	for _, g := range cfg.Goals {
		for i, ch := range g.Checks {
			id := gate.CheckID{Goal: g.Name, Index: i}
			switch {
			case ch.IsCommand():
				ev.Commands[id] = c.command(ctx, ch.Run, ch.Argv, ch.Timeout.Duration)
			case ch.Type == loop.CheckFileExists:
				ev.Files[id] = Look(c.Root, ch.Path, false)
			case ch.Type == loop.CheckRegex:
				ev.Files[id] = Look(c.Root, ch.Path, true)
			}
		}
	}
	if cfg.Metrics.Configured() {
		m := cfg.Metrics
		ev.Metrics = &gate.MetricsResult{Command: c.command(ctx, m.Command, m.Argv, m.Timeout.Duration)}
	}
	ev.Snapshot = c.snapshot()
	return ev
}

func (c *Collector) snapshot() string {
	h := c.Hasher
	if h == nil {
		h = workspace.NewHasher(c.Root)
	}
	s, err := h.Snapshot()
	if err != nil {
		return ""
	}
	return string(s)
}

// command runs a shell command (run) or an argv in the loop root.
func (c *Collector) command(ctx context.Context, run string, argv []string, timeout time.Duration) gate.CommandResult {
	shown := run
	if run != "" {
		argv = process.ShellArgv(run)
	} else {
		shown = process.Quote(argv)
	}
	r := process.Run(ctx, process.Spec{Argv: argv, Dir: c.Root, Env: c.Env, Timeout: timeout})
	return Result(shown, r, ctx)
}

// Result turns a finished process into command evidence. shown is the
// command as users wrote it.
func Result(shown string, r process.Result, ctx context.Context) gate.CommandResult {
	out := gate.CommandResult{
		Command:     shown,
		ExitCode:    r.ExitCode,
		Signal:      r.Signal,
		TimedOut:    r.TimedOut,
		Duration:    r.Duration,
		Tail:        string(r.Tail),
		Stdout:      string(r.Stdout),
		OutputBytes: r.OutputBytes,
	}
	if r.StartErr != nil {
		out.StartErr = startError(r.StartErr)
	}
	if r.Canceled {
		out.Signal = ""
		out.Stopped = stopReason(ctx)
	}
	return out
}

// stopReason says why ctx stopped a command: its cause when one was given.
func stopReason(ctx context.Context) string {
	cause := context.Cause(ctx)
	switch {
	case cause == nil:
		return "the run was cancelled"
	case errors.Is(cause, context.DeadlineExceeded):
		return "the run's deadline passed"
	case errors.Is(cause, context.Canceled):
		return "the run was cancelled"
	}
	return cause.Error()
}

// startError says why a command could not start, without the wrapping
// that repeats its name.
func startError(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
