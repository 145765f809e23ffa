// Package evidence collects what the gate rules on: it runs the command
// checks and the metrics command in the loop root, looks at the files that
// file_exists and regex checks name, and takes the workspace snapshot,
// saying in gate.Evidence.Void when what was measured cannot be certified:
// no snapshot could be taken, or files of the workspace are not what a
// checkout of the snapshot writes (their .gitattributes convert them).
//
// It is the gate's only I/O. It measures and records; it never decides
// whether a check passes (package gate does), never reads anything outside
// the loop root, never takes a node's word for anything, and never measures
// while a process an agent (or a check) started may still be changing what
// it measures: it sweeps them away first (process.Sweep), or is told that
// its caller just did (CollectSwept), and a sweep that fails voids what is
// left to measure. Files are opened only through
// package workspace's readers, so a FIFO put in place of a checked file
// fails its check instead of hanging the run.
package evidence

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
	"github.com/loop-action/loop-action/internal/workspace"
)

// ReadLimit is the largest file a regex check reads.
const ReadLimit = 16 << 20

// Collector measures evidence in one loop root.
type Collector struct {
	Root   string            // the loop root
	Env    []string          // environment of checks; nil inherits the process's
	Hasher *workspace.Hasher // takes the workspace snapshot; nil makes one for Root
	// Beside, when set, is called once every check and the metrics command
	// have ended, on a goroutine of its own while the snapshot is taken
	// (or alone when none is due: the measurement is void); Collect
	// returns once it has returned. It must only read the loop root, as
	// the snapshot does: the runner scans its guarded paths there.
	Beside func()

	runSpec func(context.Context, process.Spec) process.Result // runs a command; nil is process.Run (tests replace it)
}

// Collect measures everything the config's checks need, except judge
// verdicts and review decisions, which the caller adds. It first kills
// whatever agents left running (process.Sweep). With [run]
// check_concurrency = 1 (the default), command checks run one at a time in
// config order, and if a sweep fails, before or after a command, nothing
// further is measured: every check left fails with the reason. Otherwise
// up to that many run at once (0: all), and a failed sweep voids every
// check (see atOnce). A ctx deadline bounds every command and a cancelled
// ctx stops them. The metrics command runs last, then the snapshot is
// taken.
func (c *Collector) Collect(ctx context.Context, cfg *loop.Config) gate.Evidence {
	return c.CollectSwept(ctx, cfg, process.Sweep())
}

// CollectSwept is Collect without the first sweep, which the caller did
// itself: swept is what process.Sweep returned, and nothing that could
// start a process may have run since (the runner sweeps once per
// iteration, from when its last wave's agents have ended, and meanwhile
// and since only records the wave, puts back guarded paths, publishes
// and checks the ignored files, which starts nothing). A non-nil swept voids every
// check, as Collect's own failed sweep does.
func (c *Collector) CollectSwept(ctx context.Context, cfg *loop.Config, swept error) gate.Evidence {
	ev := gate.Evidence{
		Commands: map[gate.CheckID]gate.CommandResult{},
		Files:    map[gate.CheckID]gate.FileResult{},
	}
	var void error
	if swept != nil {
		void = fmt.Errorf("not measured: processes agents started are still running: %w", swept)
	}
	if n := cfg.Run.CheckConcurrency; n != 1 && void == nil {
		void = c.atOnce(ctx, &ev, cfg, n)
	} else {
		for _, g := range cfg.Goals {
			for i, ch := range g.Checks {
				id := gate.CheckID{Goal: g.Name, Index: i}
				void = c.check(ctx, &ev, id, ch, void)
			}
		}
	}
	if m := cfg.Metrics; m.Configured() && void != nil {
		ev.Metrics = &gate.MetricsResult{Command: voidCommand(m.Command, m.Argv, void)}
	} else if m.Configured() {
		var r gate.CommandResult
		r, void = c.command(ctx, m.Command, m.Argv, m.Timeout.Duration)
		ev.Metrics = &gate.MetricsResult{Command: r}
	}
	ev.Snapshot, ev.Void = c.snapshotBeside(ctx, void == nil)
	return ev
}

// snapshotBeside takes the snapshot if due, with c.Beside running beside
// it, and returns it ("" when not due or when it failed) with why it
// cannot be certified (see snapshot).
func (c *Collector) snapshotBeside(ctx context.Context, due bool) (snap, void string) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if c.Beside != nil {
			c.Beside()
		}
	}()
	if due {
		snap, void = c.snapshot(ctx)
	}
	<-done
	return snap, void
}

// check measures one check into ev, unless void says why nothing may be
// measured any more, and returns the reason to stop measuring, if any.
func (c *Collector) check(ctx context.Context, ev *gate.Evidence, id gate.CheckID, ch loop.Check, void error) error {
	switch {
	case ch.IsCommand() && void != nil:
		ev.Commands[id] = voidCommand(ch.Run, ch.Argv, void)
	case ch.IsCommand():
		var r gate.CommandResult
		r, void = c.command(ctx, ch.Run, ch.Argv, ch.Timeout.Duration)
		ev.Commands[id] = r
	case ch.Type != loop.CheckFileExists && ch.Type != loop.CheckRegex:
	case void != nil:
		ev.Files[id] = gate.FileResult{Path: ch.Path, ReadLimit: ReadLimit, Err: void.Error()}
	default:
		ev.Files[id] = Look(c.Root, ch.Path, ch.Type == loop.CheckRegex)
	}
	return void
}

// voidCommand is the result of a command that was not run because of why.
func voidCommand(run string, argv []string, why error) gate.CommandResult {
	return gate.CommandResult{Command: shownAs(run, argv), ExitCode: -1, StartErr: why.Error()}
}

// shownAs is a command as users wrote it: the shell command run, or argv
// quoted as a shell reads it.
func shownAs(run string, argv []string) string {
	if run != "" {
		return run
	}
	return process.Quote(argv)
}

// snapshot takes the workspace snapshot the gate may certify, and says
// why it may not: it could not be taken (a file is larger than a snapshot
// holds, directories nest too deep, ctx ended), or files of the root are
// not what a checkout of it writes (workspace.Hasher.Certify: their
// .gitattributes convert them), so the checks measured bytes no checkout
// of the snapshot reproduces.
func (c *Collector) snapshot(ctx context.Context) (snap, void string) {
	h := c.Hasher
	if h == nil {
		h = workspace.NewHasher(c.Root)
	}
	s, err := h.Certify(ctx)
	var ue *workspace.UnreproducibleError
	switch {
	case errors.As(err, &ue):
		return string(s), err.Error()
	case errors.Is(err, workspace.ErrFileTooLarge): // the error names the file, and the root's path adds nothing
		return "", fmt.Sprintf("the workspace holds a file larger than a snapshot holds, so nothing it holds can be certified: %v; remove it, or raise run.max_file_size (GitHub refuses any pushed file over 100 MiB)", errors.Unwrap(err))
	case errors.Is(err, workspace.ErrTooDeep):
		return "", fmt.Sprintf("the workspace nests directories deeper than a snapshot holds, so nothing it holds can be certified: %v", errors.Unwrap(err))
	case err != nil:
		return "", fmt.Sprintf("the workspace snapshot could not be taken, so nothing it holds can be certified: %v", err)
	}
	return string(s), ""
}

// command runs a shell command (run) or an argv in the loop root. The
// error says why nothing more may be measured: what it started could not
// all be killed.
func (c *Collector) command(ctx context.Context, run string, argv []string, timeout time.Duration) (gate.CommandResult, error) {
	shown := shownAs(run, argv)
	if run != "" {
		argv = process.ShellArgv(run)
	}
	runSpec := c.runSpec
	if runSpec == nil {
		runSpec = process.Run
	}
	r := runSpec(ctx, process.Spec{Argv: argv, Dir: c.Root, Env: c.Env, Timeout: timeout})
	var void error
	if r.SweepErr != nil {
		void = fmt.Errorf("not measured: after %s, %s: %w", shown, leftBehind, r.SweepErr)
	}
	return Result(shown, r, ctx), void
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
		StdoutCut:   r.StdoutTruncated,
		OutputBytes: r.OutputBytes,
	}
	if r.StartErr != nil {
		out.StartErr = startError(r.StartErr)
	}
	if r.Canceled {
		out.Signal = ""
		out.Stopped = stopReason(ctx)
	}
	if r.SweepErr != nil {
		out.Stopped = fmt.Sprintf("%s: %v", leftBehind, r.SweepErr)
	}
	return out
}

// leftBehind starts the Stopped reason of a command whose leftovers could
// not all be killed.
const leftBehind = "processes it started could not all be killed"

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
	return trimPathError(err)
}
