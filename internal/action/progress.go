package action

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
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
	now := p.j.env.Now()
	if !p.last.IsZero() && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	body := Progress{
		Loop: p.s.cfg.Name, RunID: cp.RunID, Iteration: cp.Iteration, MaxIterations: cp.MaxIterations,
		Spend: cp.Spend, Budget: p.s.cfg.Stop, Verdicts: cp.Verdicts, Ran: slices.DeleteFunc(slices.Clone(p.ran), func(w []string) bool { return len(w) == 0 }),
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

// jobLog is the action's side of the job log's workflow commands around
// a run: a stop-commands fence around everything agents may influence,
// and one group per iteration, opened and closed outside the fence so
// that the runner takes them while nothing an agent prints can open or
// close one. Only the goroutine that runs the job writes to it.
type jobLog struct {
	w     io.Writer
	token string // the open fence's token; "" when none is open
	group bool   // an iteration's group is open
}

// untrusted brackets output that agents influence with stop-commands, so
// nothing they print is taken as a workflow command.
func (l *jobLog) untrusted(f func()) {
	l.open()
	defer l.close()
	f()
}

// trusted writes the action's own workflow commands from inside an
// untrusted bracket: it closes the fence, runs f, and opens a new one
// with a fresh token. Outside a bracket it just runs f.
func (l *jobLog) trusted(f func()) {
	if l.token == "" {
		f()
		return
	}
	l.close()
	defer l.open()
	f()
}

func (j *job) log() *jobLog {
	if j.jlog == nil {
		j.jlog = &jobLog{w: j.env.Stdout}
	}
	return j.jlog
}

func (l *jobLog) open() {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	l.token = hex.EncodeToString(b)
	fmt.Fprintf(l.w, "::stop-commands::%s\n", l.token)
}

func (l *jobLog) close() {
	if l.token != "" {
		fmt.Fprintf(l.w, "::%s::\n", l.token)
		l.token = ""
	}
}

// iteration starts the group of iteration n, ending the one before.
func (l *jobLog) iteration(n int) {
	l.trusted(func() {
		l.endGroup()
		fmt.Fprintf(l.w, "::group::iteration %d\n", n)
		l.group = true
	})
}

// endIterations ends the open iteration's group, if any.
func (l *jobLog) endIterations() {
	l.trusted(l.endGroup)
}

func (l *jobLog) endGroup() {
	if l.group {
		fmt.Fprintln(l.w, "::endgroup::")
		l.group = false
	}
}

// Progress is what the sticky comment shows while a run goes: where it
// stands after its last checkpoint. It certifies nothing; the final
// Report replaces it.
type Progress struct {
	Loop          string
	RunID         string
	Iteration     int // iterations done
	MaxIterations int
	Spend         state.Spend
	Budget        loop.Stop // max_tokens, max_cost_usd, max_wall_clock
	Verdicts      []gate.Verdict
	Ran           [][]string // the nodes the last iteration ran, by wave
	Every         time.Duration
	Updated       time.Time
	SummaryURL    string
}

// Markdown renders the progress, with the sticky marker first, cut to fit
// in limit characters. Evidence is rendered as the final report renders
// it: code spans, so nothing an agent or a check wrote can format, link
// or mention.
func (p Progress) Markdown(limit int) string {
	var b strings.Builder
	b.WriteString(Marker(p.Loop) + "\n")
	fmt.Fprintf(&b, "## %s loop `%s`: in progress, iteration %d of %d\n\n", statusIcon(state.Running), p.Loop, p.Iteration, p.MaxIterations)
	fmt.Fprintf(&b, "> [!NOTE]\n> The run is still going: this comment is updated after its iterations, at most every %s, and certifies nothing. The final report replaces it when the run ends.\n\n", p.Every)
	fmt.Fprintf(&b, "Run `%s` · spent so far: %s\n\n", p.RunID, p.spent())
	p.checklist(&b)
	p.now(&b)
	fmt.Fprintf(&b, "<sub>Updated %s.", p.Updated.UTC().Format("15:04:05 MST"))
	if p.SummaryURL != "" {
		fmt.Fprintf(&b, " The job's log: [this run](%s).", p.SummaryURL)
	}
	b.WriteString("</sub>\n")
	return fit(b.String(), limit, p.SummaryURL)
}

// spent is the spend against each budget.
func (p Progress) spent() string {
	est := estimated(p.Spend)
	tokens := fmt.Sprintf("%d tokens%s", p.Spend.Tokens, est)
	if p.Budget.MaxTokens > 0 {
		tokens = fmt.Sprintf("%d of %d tokens%s", p.Spend.Tokens, p.Budget.MaxTokens, est)
	}
	cost := fmt.Sprintf("$%.4f", p.Spend.CostUSD)
	if p.Budget.MaxCostUSD > 0 {
		cost = fmt.Sprintf("$%.4f of $%.2f", p.Spend.CostUSD, p.Budget.MaxCostUSD)
	}
	wall := fmt.Sprintf("%s wall clock", p.Spend.WallClock.Round(time.Second))
	if p.Budget.MaxWallClock.IsSet() {
		wall = fmt.Sprintf("%s of %s wall clock", p.Spend.WallClock.Round(time.Second), p.Budget.MaxWallClock.Duration)
	}
	return tokens + " · " + cost + " · " + wall
}

// checklist is each goal, checked when the gate holds it satisfied now,
// with each check's current evidence under it.
func (p Progress) checklist(b *strings.Builder) {
	for _, v := range p.Verdicts {
		box := " "
		if v.Satisfied {
			box = "x"
		}
		fmt.Fprintf(b, "- [%s] `%s` (%s) %d/%d\n", box, v.Goal, kind(v), v.Passed, v.Total)
		for _, c := range v.Checks {
			fmt.Fprintf(b, "  - %s %s: %s\n", c.Status.Icon(), c.Type, codeSpan(c.Evidence, maxEvidence))
		}
	}
	b.WriteString("\n")
}

// now says what runs next, and what the last iteration ran.
func (p Progress) now(b *strings.Builder) {
	fmt.Fprintf(b, "Now: iteration %d of %d is starting.", p.Iteration+1, p.MaxIterations)
	if len(p.Ran) > 0 {
		waves := make([]string, len(p.Ran))
		for i, nodes := range p.Ran {
			waves[i] = fmt.Sprintf("wave %d: %s", i+1, verbatimAll(nodes))
		}
		fmt.Fprintf(b, " Iteration %d ran %s.", p.Iteration, strings.Join(waves, "; "))
	}
	b.WriteString("\n\n")
}
