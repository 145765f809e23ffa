// Package runner owns the loop: it dispatches the waves of agent nodes,
// has the gate rule on what the runner itself measured, writes the
// deterministic summary, applies the stop ladder and budgets, and
// checkpoints every iteration so that a later process resumes it.
//
// A Session is the one way into a run for the CLI and the action alike:
// it takes the run's lock, loads and verifies its checkpoint once, then
// amends the run or runs it. Measure is the one way to measure the
// workspace outside a run (loop-action gate, gate-only).
//
// Control flow belongs to the runner, never to an agent. Worker goroutines
// run nodes and nothing else; outcomes are recorded after each wave in a
// deterministic order. No text an agent prints reaches the gate, except a
// judge's answer, which only gate.ParseVerdict reads; an "openai"
// builder's reply is read only as SEARCH/REPLACE edits (package edit).
//
// What no node and no check may change is guarded: the protected paths and
// the executable configuration of the root's repository around every wave
// and every measurement, and the whole root around a wave of isolated
// nodes. Changes are put back through workspace.Writer, never through a
// symbolic link, and a measurement during which a guarded path changed is
// void. Checks run git with no fsmonitor and no hooks (GitEnv). Ignored
// files created or changed since the session started are removed before
// every measurement (uncarried.go): the gate measures only what a commit
// can carry.
//
// An iteration is a sequence of values (iteration.go): each wave's plan
// and outcomes, the measurement, the ruling and the summary its checkpoint
// saves. Its state, the guarded paths' included (guard.go), lives in an
// iteration made for it, so nothing of one reaches the next but through
// the checkpoint.
package runner

import (
	"context"
	"io"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner/provider"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Store keeps checkpoints between processes, and holds a run for one
// process at a time (Lock fails with state.ErrLocked while another does).
type Store interface {
	Load(ctx context.Context, runID string) (*state.Checkpoint, error)
	Save(ctx context.Context, cp *state.Checkpoint, c state.Commit) error
	Lock(runID string) (unlock func() error, err error)
}

// Restorer is a store that keeps each checkpoint's workspace and can put
// it back in the loop root, so a run resumes on another machine with the
// builders' work (the branch: store).
type Restorer interface {
	Restore(ctx context.Context, runID string) (changed int, err error)
}

// Provider calls one agent.
type Provider interface {
	Dispatch(ctx context.Context, req provider.Request) provider.Response
}

// Collector measures the evidence the gate rules on.
type Collector interface {
	Collect(ctx context.Context, cfg *loop.Config) gate.Evidence
}

// Options are a run's dependencies and settings.
type Options struct {
	Config    *loop.Config
	Root      string              // the loop root, absolute
	RunID     string              // see state.ValidRunID
	Store     Store               // required
	Providers map[string]Provider // by provider name; nil builds them from the config (command and openai)
	Collector Collector           // nil collects in Root with gate/evidence
	Env       []string            // of agents and checks, less the file commands (GuardFileCommands); nil is empty
	Progress  ledger.Progress     // live events; nil shows nothing
	Now       func() time.Time    // nil is time.Now
	Commit    string              // the git commit the run starts from, if known
	// Checkout is the loop root's git settings (core.autocrlf, core.eol)
	// as the composition root read them: every snapshot of the run
	// converts files with them. Its Base and MaxFileSize are the run's
	// own (the commit, run.max_file_size).
	Checkout  workspace.Checkout
	Version   string // loop-action's version, for the export
	ExportDir string // where the success export goes; "" is .loop/export in Root

	// MaxIterations, when positive, replaces stop.max_iterations: it can
	// raise the cap of a run stopped by it.
	MaxIterations int
	// Log receives diagnostics that are not events (for example a failed
	// export); nil discards them.
	Log io.Writer
	// VerifyDecisions, when set, checks the review decisions of a
	// checkpoint loaded from the store before the run uses any: whoever can
	// write to the store can put a decision there. It returns the decisions
	// that hold and, for each of the others, why not; those are dropped from
	// the run, each with a ledger event. It runs when Open loads the
	// checkpoint, before anything uses a decision; an error (a decision
	// could not be checked) fails Open, with the checkpoint as it was.
	// nil trusts the store (the CLI: there the user is the authority).
	VerifyDecisions func(ctx context.Context, ds []gate.Decision) (kept []gate.Decision, dropped []DroppedDecision, err error)
	// Checkpointed, when set, is called after each checkpoint Run saves,
	// on Run's goroutine, with the checkpoint as saved: for live progress
	// (iteration, verdicts, spend). cp is the run's own: read it during the
	// call, copy what is kept, change nothing. The run waits for it.
	Checkpointed func(cp *state.Checkpoint)
}

// DroppedDecision is a review decision VerifyDecisions did not let stand.
type DroppedDecision struct {
	Decision gate.Decision
	Why      string
}

// Outcome is how a run stands when Run returns, or by its checkpoint
// (OutcomeOf).
type Outcome struct {
	RunID         string         `json:"run_id"`
	Status        state.Status   `json:"status"`
	Success       bool           `json:"success"`
	Detail        string         `json:"detail,omitempty"`
	Iteration     int            `json:"iterations"`
	MaxIterations int            `json:"max_iterations"`
	Spend         state.Spend    `json:"spend"`
	Verdicts      []gate.Verdict `json:"verdicts"`
	ExportPath    string         `json:"export_path,omitempty"`
	Ran           bool           `json:"ran"` // false when the run was already over and nothing ran
}

func outcome(cp *state.Checkpoint, ran bool, export string) Outcome {
	return Outcome{
		RunID: cp.RunID, Status: cp.Status, Success: cp.Status == state.Success, Detail: cp.StopDetail,
		Iteration: cp.Iteration, MaxIterations: cp.MaxIterations, Spend: cp.Spend,
		Verdicts: cp.Verdicts, ExportPath: export, Ran: ran,
	}
}
