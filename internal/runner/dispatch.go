package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// dispatched is what the waves of one iteration left.
type dispatched struct {
	runs        []*nodeRun
	judges      map[string]gate.JudgeResult
	ranBuilders []string
	published   []string
	reverted    []string     // protected paths put back after a wave
	gitReverted []string     // .git paths put back after a wave
	rootChanged []string     // root paths put back after a wave of isolated nodes
	swept       <-chan error // the measurement's sweep, started after the last wave (sweepAhead)
}

// dispatch runs the iteration's waves in order. Within a wave, up to
// [run] concurrency nodes run at once; outcomes are recorded after the
// wave, in wave order. Once the last wave's nodes have ended, the
// measurement's sweep starts beside what follows (sweepAhead).
func (r *iteration) dispatch(ctx context.Context, p perturbation) dispatched {
	d := dispatched{judges: map[string]gate.JudgeResult{}}
	waves := r.cfg.Waves()
	for wi, wave := range waves {
		if ctx.Err() != nil {
			break
		}
		wave = p.order(wave)
		ahead := r.scanAhead()
		runs := r.planWave(wi+1, wave, p)
		guard, root := r.guardWave(runs, ahead), r.guardRoot(runs)
		r.runWave(ctx, runs)
		if wi == len(waves)-1 {
			d.swept = sweepAhead()
		}
		if err := r.run.files.Restore(); err != nil { // Run returns it at the end
			r.run.logf("%v", err)
		}
		r.recordWave(ctx, runs, &d)
		r.noteEdits(runs)
		r.putBack(runs, guard, root, &d)
		d.published = append(d.published, r.publish(ctx, runs)...)
		r.run.step("published")
	}
	return d
}

// scanAhead scans the guarded paths on a goroutine of its own, beside the
// planning of a wave, which only decides, builds prompts and records (no
// process runs, nothing is written): the wave's guard (guardWave) starts
// from that scan.
func (r *iteration) scanAhead() <-chan guardState {
	g, c := r.w.guarded, make(chan guardState, 1)
	go func() { c <- g.scan() }()
	return c
}

// guardWave records the guarded paths before a wave in which a node runs,
// as scanAhead found them; with nothing running, nothing is guarded.
func (r *iteration) guardWave(runs []*nodeRun, ahead <-chan guardState) *guardState {
	g := <-ahead
	if !slices.ContainsFunc(runs, func(nr *nodeRun) bool { return nr.queued }) {
		return nil
	}
	return &g
}

// putBack puts back, before anything is published, what the wave changed
// that no node may change: the guarded paths, then (after a wave of
// isolated nodes only) anything in the loop root. Each is recorded; a
// wave that changed any counts as one node failure, and one whose changes
// could not be put back leaves the iteration's measurement void.
func (r *iteration) putBack(runs []*nodeRun, guard *guardState, root *rootGuard, d *dispatched) {
	if guard == nil {
		return
	}
	rv := r.w.revert(r.n, ranNames(runs), *guard, "")
	rootPaths, rootErr := root.revert(r.n)
	d.reverted = append(d.reverted, rv.protected...)
	d.gitReverted = append(d.gitReverted, rv.git...)
	d.rootChanged = append(d.rootChanged, rootPaths...)
	if r.guardsStopped(rv.failed, rootErr) {
		return
	}
	if len(rv.failed) > 0 {
		r.unfit("guarded paths could not be put back after a wave: " + strings.Join(rv.failed, "; "))
	}
	if rootErr != "" {
		r.unfit(rootErr)
	}
	switch {
	case len(rootPaths) > 0 || rootErr != "":
		r.nodeFailed("changes to the loop root outside the worktrees were reverted")
	case len(rv.git) > 0 && len(rv.protected) == 0:
		r.nodeFailed("changes to .git were reverted")
	case rv.any():
		r.nodeFailed("changes to protected paths were reverted")
	}
}

// recordWave records each node's outcome in wave order, counts node
// failures and collects the judges' answers for the gate.
func (r *iteration) recordWave(ctx context.Context, runs []*nodeRun, d *dispatched) {
	for _, nr := range runs {
		d.runs = append(d.runs, nr)
		n := nr.node
		if !nr.queued {
			continue // its skip is already recorded
		}
		if nr.skip != "" {
			r.rec.Record(ledger.Event{Type: ledger.NodeSkipped, Iteration: r.n, Wave: nr.wave, Node: n.Name, Reason: nr.skip})
			continue
		}
		if nr.retried != "" {
			r.rec.Record(ledger.Event{Type: ledger.JudgeRetried, Iteration: r.n, Wave: nr.wave, Node: n.Name, Reason: nr.retried})
		}
		e := ledger.Event{Iteration: r.n, Wave: nr.wave, Node: n.Name, Duration: nr.resp.Result.Duration,
			Tokens: nr.usage.Total, Estimated: nr.usage.Estimated, CostUSD: nr.usage.CostUSD}
		if nr.resp.Err != nil {
			e.Type, e.Reason = ledger.NodeFailed, nr.resp.Err.Error()
			r.countFailure(ctx, nr)
		} else {
			e.Type = ledger.NodeSucceeded
		}
		r.rec.Record(e)
		if n.Role == loop.RoleJudge {
			d.judges[n.Name] = judgeResult(nr)
		} else {
			d.ranBuilders = append(d.ranBuilders, n.Name)
		}
	}
}

func judgeResult(nr *nodeRun) gate.JudgeResult {
	jr := gate.JudgeResult{Node: nr.node.Name, Provider: nr.node.Provider, Answers: nr.answers}
	if nr.resp.Err != nil {
		jr.Err = nr.resp.Err.Error()
	}
	return jr
}

// countFailure counts a node's error or timeout against max_node_failures;
// a node that could not even start escalates the run at once. A node cut
// short because the run itself was stopping is not its fault.
func (r *iteration) countFailure(ctx context.Context, nr *nodeRun) {
	res := nr.resp.Result
	if res.Canceled || ctx.Err() != nil {
		return
	}
	r.cp.NodeFailures++
	switch max := r.cfg.Stop.MaxNodeFailures; {
	case res.StartErr != nil && r.run.escalate == "":
		r.run.escalate = fmt.Sprintf("dispatch failure: node %s could not start: %v", nr.node.Name, res.StartErr)
	case max > 0 && r.cp.NodeFailures >= max && r.run.escalate == "":
		r.run.escalate = fmt.Sprintf("%s (max_node_failures = %d); the last: node %s: %v", phrase.Plural(r.cp.NodeFailures, "node failure", "node failures"), max, nr.node.Name, nr.resp.Err)
	}
}

// nodeFailed counts a failure the runner found in a wave's changes, and
// escalates when failures reach max_node_failures.
func (r *iteration) nodeFailed(why string) {
	r.cp.NodeFailures++
	if max := r.cfg.Stop.MaxNodeFailures; max > 0 && r.cp.NodeFailures >= max && r.run.escalate == "" {
		r.run.escalate = fmt.Sprintf("%s (max_node_failures = %d) after %s", phrase.Plural(r.cp.NodeFailures, "node failure", "node failures"), max, why)
	}
}

// ranNames are the nodes of a wave that ran, builders and judges.
func ranNames(runs []*nodeRun) []string {
	var out []string
	for _, nr := range runs {
		if nr.queued && nr.skip == "" {
			out = append(out, nr.node.Name)
		}
	}
	return out
}
