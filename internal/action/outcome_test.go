package action

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

const runURL = "https://github.com/octo-org/demo/actions/runs/4242"

// TestRunOutcomeReports: what a run's outcome puts on the pull request
// (the sticky comment, review requests, the commit status), which outputs
// it sets, and whether the job fails. A run that did not run changes
// nothing on the pull request unless /loop status asked; a branch's run
// has no pull request to write on.
func TestRunOutcomeReports(t *testing.T) {
	t.Parallel()
	satisfied := pausedVerdicts()
	satisfied[1].Satisfied, satisfied[1].Passed = true, 2
	satisfied[1].Checks[1] = gate.CheckVerdict{Index: 1, Type: "manual", Status: gate.Pass, Evidence: "approved by writer"}
	success := runner.Outcome{RunID: "demo/pr-7", Status: state.Success, Success: true, Iteration: 2, MaxIterations: 3, Verdicts: satisfied, Ran: true}
	paused := runner.Outcome{RunID: "demo/pr-7", Status: state.AwaitingReview, Iteration: 1, MaxIterations: 3, Verdicts: pausedVerdicts(), Ran: true}
	stuck := runner.Outcome{RunID: "demo/pr-7", Status: state.NoProgress, Detail: "3 iterations without progress", Iteration: 3, MaxIterations: 3, Verdicts: pausedVerdicts(), Ran: true}
	over := stuck
	over.Ran = false
	requested := []ledger.Event{{Type: ledger.ReviewRequested, Goal: "ui", Snapshot: memSnap, Reason: "Does the summary read well?"}}
	status := func(st, desc string) []githubfake.Status {
		return []githubfake.Status{{SHA: memHead, State: st, Context: "loop/demo", Description: desc, TargetURL: runURL, Creator: bot}}
	}
	tests := []struct {
		name     string
		out      runner.Outcome
		evs      []ledger.Event
		refresh  bool
		setup    func(m *memJob)
		statuses []githubfake.Status
		sticky   bool
		requests []reviewRequest // the bot's review requests after the report, ids left out
		dv       delivery        // for a success: what conclude made of it (deliver_test.go tests how)
		outputs  map[string]string
		reportErr,
		jobErr error
	}{
		{name: "success", out: success, dv: delivery{success: true}, sticky: true,
			outputs: map[string]string{"success": "true", "stop-reason": "success", "iterations": "2", "delivered-sha": "",
				"summary": "loop demo: success after 2 of 3 iterations; 2 of 2 blocking goals satisfied"}},
		{name: "success, delivered", out: success, dv: delivery{success: true, sha: "d0d0", ref: "feature", notes: []string{"**Fixed in d0d0**"}}, sticky: true,
			outputs: map[string]string{"success": "true", "stop-reason": "success", "delivered-sha": "d0d0", "delivered-ref": "feature", "pull-request": ""}},
		{name: "success, not delivered", out: success, dv: delivery{notes: []string{"not delivered"}}, sticky: true,
			outputs: map[string]string{"success": "false", "stop-reason": "success"}, jobErr: ErrUnsuccessful},
		{name: "a pause for review", out: paused, evs: requested,
			statuses: status("pending", "awaiting review: comment /loop approve ui"), sticky: true,
			requests: []reviewRequest{{Goal: "ui", Snapshot: memSnap}},
			outputs:  map[string]string{"success": "false", "stop-reason": "awaiting-review", "iterations": "1"}},
		{name: "no progress", out: stuck, statuses: status("failure", "no-progress after 3 iterations: 3 iterations without progress"),
			sticky: true, outputs: map[string]string{"success": "false", "stop-reason": "no-progress"}, jobErr: ErrUnsuccessful},
		{name: "no progress, not failing the job", out: stuck, setup: func(m *memJob) { m.j.in.FailOnUnsuccessful = false },
			statuses: status("failure", "no-progress after 3 iterations: 3 iterations without progress"), sticky: true,
			outputs: map[string]string{"success": "false"}},
		{name: "already over", out: over, outputs: map[string]string{"stop-reason": "no-progress"}, jobErr: ErrUnsuccessful},
		{name: "already over, /loop status", out: over, refresh: true, sticky: true, jobErr: ErrUnsuccessful},
		{name: "comments off", out: stuck, setup: func(m *memJob) { m.j.in.Comment = false },
			statuses: status("failure", "no-progress after 3 iterations: 3 iterations without progress"), jobErr: ErrUnsuccessful},
		{name: "a branch's run", out: paused, evs: requested, setup: func(m *memJob) { m.s.pr = 0 },
			outputs: map[string]string{"stop-reason": "awaiting-review"}},
		{name: "the status cannot be set", out: stuck, setup: func(m *memJob) { m.gh.FailEvery("POST", "/repos/*/*/statuses/*", http.StatusBadGateway) },
			sticky: true, outputs: map[string]string{"success": "false"}, jobErr: ErrUnsuccessful},
		{name: "the sticky comment cannot be written", out: success, dv: delivery{success: true}, setup: func(m *memJob) {
			m.gh.FailEvery("POST", "/repos/*/*/issues/7/comments", http.StatusBadGateway)
			m.gh.FailEvery("PATCH", "/repos/*/*/issues/comments/*", http.StatusBadGateway)
		},
			reportErr: errors.New("502")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			if tt.setup != nil {
				tt.setup(m)
			}
			dv := tt.dv
			if !tt.out.Success {
				dv = m.j.conclude(context.Background(), m.s, tt.out)
			}
			err := m.j.pub().report(context.Background(), m.s, tt.out, dv, tt.evs, tt.refresh)
			if (err != nil) != (tt.reportErr != nil) {
				t.Fatalf("report: %v, want an error: %t", err, tt.reportErr != nil)
			}
			if diff := cmp.Diff(tt.statuses, m.gh.AllStatuses(owner, repo), cmpopts.IgnoreFields(githubfake.Status{}, "ID", "CreatedAt")); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if got := stickyOn(m.gh, 7) != ""; got != tt.sticky {
				t.Errorf("sticky comment written: %t, want %t", got, tt.sticky)
			}
			got := m.ownRequests()
			for i := range got {
				got[i].ID = 0
			}
			if diff := cmp.Diff(tt.requests, got); diff != "" {
				t.Errorf("review requests (-want +got):\n%s", diff)
			}
			if err != nil {
				return
			}
			out := outputs(t, m.commands)
			for k, v := range tt.outputs {
				if out[k] != v {
					t.Errorf("output %s = %q, want %q", k, out[k], v)
				}
			}
			if err := m.j.in.unsuccessful(tt.out, dv); !errors.Is(err, tt.jobErr) || (err == nil) != (tt.jobErr == nil) {
				t.Errorf("the job's result: %v, want %v", err, tt.jobErr)
			}
		})
	}
}
