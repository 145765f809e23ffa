package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// ErrInUse reports a run that another process holds: see Open.
var ErrInUse = errors.New("in use by another loop-action process")

// Session is one process's hold on a run, from Open to Close: the CLI's
// run, resume and review and every event of the action go through one.
// Open takes the run's lock, then loads its checkpoint, once; whatever the
// session does next — amend the run (review decisions, a stop, the last
// comment handled, a new generation), run it, or report it (OutcomeOf) —
// it does under that lock, on that one checkpoint: nothing loads it again.
type Session struct {
	opts       Options
	unlock     func() error
	cp         *state.Checkpoint // nil while the run has no checkpoint
	rec        *ledger.Recorder  // the amendments' events; nil with cp
	held       heldEvents        // and for opts.Progress, once the run starts
	changed    bool              // amendments not committed yet
	generation string            // why Run starts the run afresh, if it does
	ran        bool
}

// Open takes the lock of the run opts.RunID and loads its checkpoint, if
// it has one. With opts.VerifyDecisions set, the review decisions the
// checkpoint carries are checked right away: those that do not hold leave
// the run before anything uses them (see Options.VerifyDecisions).
//
// A run another process holds is refused with an error wrapping ErrInUse.
// On error nothing is held. Close the session when done with it.
func Open(ctx context.Context, opts Options) (*Session, error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	unlock, err := opts.Store.Lock(opts.RunID)
	switch {
	case errors.Is(err, state.ErrLocked):
		return nil, fmt.Errorf("run %q is %w; wait for it or cancel it", opts.RunID, ErrInUse)
	case err != nil:
		return nil, fmt.Errorf("lock run %q: %w", opts.RunID, err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Session{opts: opts, unlock: unlock}
	if err := s.load(ctx); err != nil {
		return nil, errors.Join(err, s.Close())
	}
	return s, nil
}

func checkOptions(opts Options) error {
	if opts.Config == nil || opts.Store == nil || opts.Root == "" {
		return errors.New("runner: Config, Store and Root are required")
	}
	return state.ValidRunID(opts.RunID)
}

// load reads the run's checkpoint, the one time the session does.
func (s *Session) load(ctx context.Context) error {
	cp, err := s.opts.Store.Load(ctx, s.opts.RunID)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("load run %q: %w", s.opts.RunID, err)
	}
	initMaps(cp)
	s.cp = cp
	s.rec = ledger.NewRecorder(cp.LedgerEvents, s.opts.Now, &s.held)
	s.rec.Mask(Masker(s.opts.Config, s.opts.Env))
	return s.verifyDecisions(ctx)
}

// Checkpoint is the run's checkpoint as the session holds it, amendments
// included, or nil when the run has none yet. It is the session's: read
// it, and change it only through the session.
func (s *Session) Checkpoint() *state.Checkpoint { return s.cp }

// Close releases the run's lock. It commits nothing: see Commit.
func (s *Session) Close() error {
	if s.unlock == nil {
		return nil
	}
	unlock := s.unlock
	s.unlock = nil
	return unlock()
}

// heldEvents keeps the events of a session's amendments until its run
// shows them, first, with its own: the action shows what agents may have
// influenced only inside its stop-commands bracket, around the run.
type heldEvents []ledger.Event

func (h *heldEvents) Event(e ledger.Event) { *h = append(*h, e) }

// show hands the held events to p, once.
func (h *heldEvents) show(p ledger.Progress) {
	if p != nil {
		for _, e := range *h {
			p.Event(e)
		}
	}
	*h = nil
}

// OutcomeOf is how a run stands by its checkpoint, for reporting a run
// this process does not run (Ran is false).
func OutcomeOf(cp *state.Checkpoint) Outcome { return outcome(cp, false, "") }

// verifyDecisions has opts.VerifyDecisions check the decisions the loaded
// checkpoint carries; those it drops leave the run, each recorded with why,
// and the next commit saves the run without them.
func (s *Session) verifyDecisions(ctx context.Context) error {
	if s.opts.VerifyDecisions == nil || len(s.cp.Decisions) == 0 {
		return nil
	}
	kept, dropped, err := s.opts.VerifyDecisions(ctx, s.cp.Decisions)
	if err != nil {
		return fmt.Errorf("verify the review decisions of run %q: %w", s.cp.RunID, err)
	}
	for _, d := range dropped {
		dec := d.Decision
		verdict := "rejection"
		if dec.Approved {
			verdict = "approval"
		}
		s.rec.Record(ledger.Event{Type: ledger.ReviewDropped, Iteration: s.cp.Iteration, Goal: dec.Goal, By: dec.By,
			Verdict: verdict, Snapshot: dec.Snapshot,
			Reason: fmt.Sprintf("%s of goal %q by %q for snapshot %q dropped: %s", verdict, dec.Goal, dec.By, dec.Snapshot[:min(7, len(dec.Snapshot))], d.Why)})
	}
	if len(kept) != len(s.cp.Decisions) {
		s.changed = true
	}
	s.cp.Decisions = kept
	return nil
}
