package action

import (
	"context"
	"fmt"
	"time"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// progressInterval is the least time between two edits of a run's
// progress comment: GitHub is not hammered, whatever the iterations take.
const progressInterval = 30 * time.Second

// progressTimeout bounds one edit: the run waits for it.
const progressTimeout = 15 * time.Second

// progress keeps a pull request's sticky comment current while its run
// goes: after a checkpoint of a run still running, at most once per
// interval by the job's clock, it replaces the comment with the run's
// Progress. It edits on the run's own goroutine, from the checkpoint
// hook, so no edit is in flight when the run returns; stop, before the
// final report, ends it, so the final report is always the last write.
// A failed edit is a warning and counts as an edit for the interval.
type progress struct {
	j       *job
	ctx     context.Context
	s       *session
	every   time.Duration
	last    time.Time // the last edit; zero before the first
	ran     [][]string
	stopped bool
}

// newProgress is the progress of s, or nil where there is none to show:
// only a pull request's run with comment on shows its progress.
func (j *job) newProgress(ctx context.Context, s *session) *progress {
	if s.pr == 0 || !j.in.Comment || j.client == nil {
		return nil
	}
	every := j.progressEvery
	if every <= 0 {
		every = progressInterval
	}
	return &progress{j: j, ctx: ctx, s: s, every: every}
}

// event follows the nodes each wave of the iteration dispatches.
func (p *progress) event(ev ledger.Event) {
	switch ev.Type {
	case ledger.IterationStarted:
		p.ran = nil
	case ledger.NodeDispatched:
		for len(p.ran) < ev.Wave {
			p.ran = append(p.ran, nil)
		}
		if ev.Wave > 0 {
			p.ran[ev.Wave-1] = append(p.ran[ev.Wave-1], ev.Node)
		}
	}
}

// checkpointed edits the comment after a checkpoint of a run that goes
// on, unless the last edit is younger than the interval.
func (p *progress) checkpointed(cp *state.Checkpoint) {
	if p == nil || p.stopped || cp.Status != state.Running {
		return
	}
	now := p.j.env.now()
	if !p.last.IsZero() && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	body := Progress{
		Loop: p.s.cfg.Name, RunID: cp.RunID, Iteration: cp.Iteration, MaxIterations: cp.MaxIterations,
		Spend: cp.Spend, Budget: p.s.cfg.Stop, Verdicts: cp.Verdicts, Ran: nonEmpty(p.ran),
		Every: p.every, Updated: now, SummaryURL: p.j.pub().runURL(),
	}.Markdown(commentLimit)
	ctx, cancel := context.WithTimeout(p.ctx, progressTimeout)
	defer cancel()
	if _, err := p.j.client.UpsertSticky(ctx, p.j.owner, p.j.repo, p.s.pr, Marker(p.s.cfg.Name), body, p.j.in.Bot); err != nil {
		p.j.log().trusted(func() { p.j.a.Warningf("the progress comment was not updated: %s", p.j.mask(err.Error())) })
	}
}

// abandon replaces a progress already shown when the job fails before its
// report: the comment must not go on saying the run is going.
func (p *progress) abandon() {
	if p == nil || p.last.IsZero() {
		return
	}
	p.stopped = true
	where := "its log"
	if u := p.j.pub().runURL(); u != "" {
		where = "[its log](" + u + ")"
	}
	body := fmt.Sprintf("%s\n## ❌ loop `%s`: the job ended without a report\n\nThe progress shown here before is void and nothing was certified: the job failed (see %s). Run it again, or comment `/loop status`.\n",
		Marker(p.s.cfg.Name), p.s.cfg.Name, where)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), progressTimeout)
	defer cancel()
	if _, err := p.j.client.UpsertSticky(ctx, p.j.owner, p.j.repo, p.s.pr, Marker(p.s.cfg.Name), body, p.j.in.Bot); err != nil {
		p.j.a.Warningf("the progress comment was not withdrawn: %s", p.j.mask(err.Error()))
	}
}

// stop ends the progress: nothing is edited after it.
func (p *progress) stop() {
	if p != nil {
		p.stopped = true
	}
}

func nonEmpty(waves [][]string) [][]string {
	var out [][]string
	for _, w := range waves {
		if len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// now is the job's clock.
func (env Env) now() time.Time {
	if env.Now != nil {
		return env.Now()
	}
	return time.Now()
}
