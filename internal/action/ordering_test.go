package action

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

const otherSnap = "0dd0000000000000000000000000000000000004"

// TestApprovalsAnswerTheReviewRequest: a decision counts for the snapshot
// of the latest request for its goal written before it, and only the
// bot's own requests of this loop are requests. When no request for the
// snapshot under review was ever made, the bot makes one and the decision
// does not count.
func TestApprovalsAnswerTheReviewRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		before  func(m *memJob) // after the pause, before the approval
		reply   string
		decided bool
		asked   bool // the bot posted a new request for memSnap
	}{
		{name: "after the request", decided: true},
		{name: "after a later request for another goal", before: func(m *memJob) { m.request("tests", memSnap) }, decided: true},
		{name: "after a newer request for another snapshot", before: func(m *memJob) { m.request("ui", otherSnap) },
			reply: "your approval predates the review request for snapshot `5a5a000`"},
		{name: "after a request for another snapshot only",
			before: func(m *memJob) { m.gh.DeleteComment(owner, repo, m.lastRequest()); m.request("ui", otherSnap) },
			reply:  "no review of snapshot `5a5a000` of goal `ui` had been requested", asked: true},
		{name: "after a request another user wrote", before: func(m *memJob) {
			m.gh.DeleteComment(owner, repo, m.lastRequest())
			m.gh.AddComment(owner, repo, 7, "mallory", "User", reviewMarker("demo", "ui", memSnap))
		}, reply: "the request is posted now", asked: true},
		{name: "after a request written under the bot's login by a user", before: func(m *memJob) {
			m.gh.DeleteComment(owner, repo, m.lastRequest())
			m.gh.AddComment(owner, repo, 7, bot, "User", reviewMarker("demo", "ui", memSnap))
		}, reply: "the request is posted now", asked: true},
		{name: "after a request of another loop", before: func(m *memJob) {
			m.gh.DeleteComment(owner, repo, m.lastRequest())
			m.gh.AddComment(owner, repo, 7, bot, "Bot", reviewMarker("other", "ui", memSnap))
		}, reply: "the request is posted now", asked: true},
		{name: "after a request whose marker is not its first line", before: func(m *memJob) {
			m.gh.DeleteComment(owner, repo, m.lastRequest())
			m.gh.AddComment(owner, repo, 7, bot, "Bot", "quoting:\n"+reviewMarker("demo", "ui", memSnap))
		}, reply: "the request is posted now", asked: true},
		{name: "with no request at all", before: func(m *memJob) { m.gh.DeleteComment(owner, repo, m.lastRequest()) },
			reply: "the request is posted now: look at it, then approve again", asked: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			m.pause()
			if tt.before != nil {
				tt.before(m)
			}
			requests := len(m.ownRequests())
			id, _ := m.command("writer", "/loop approve ui")
			wantReplies(t, m.replies("writer"), tt.reply)
			if got := len(m.checkpoint().Decisions) == 1; got != tt.decided {
				t.Errorf("decisions %+v, want one: %t", m.checkpoint().Decisions, tt.decided)
			}
			reqs := m.ownRequests()
			if asked := len(reqs) > requests; asked != tt.asked {
				t.Fatalf("the bot asked for a review again: %t, want %t", asked, tt.asked)
			}
			if !tt.asked {
				return
			}
			if last := reqs[len(reqs)-1]; last.Goal != "ui" || last.Snapshot != memSnap {
				t.Errorf("the new request is %+v, want one for ui on %s", last, memSnap)
			}
			again, _ := m.command("writer", "/loop approve ui")
			want := []gate.Decision{{Goal: "ui", Approved: true, By: "writer", Snapshot: memSnap, Comment: again}}
			if diff := cmp.Diff(want, m.checkpoint().Decisions); diff != "" || again < id {
				t.Errorf("the approval after the new request: decisions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApprovalPredatingTheRequestIsRefused: an approval written before the
// bot asked for the review of the snapshot under review (held back, say,
// by the concurrency group) does not count for it, and is not asked for
// again.
func TestApprovalPredatingTheRequestIsRefused(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	early := m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
	m.pause()
	m.catchUp()
	if diff := cmp.Diff([]string{"-1", "eyes"}, reactionsTo(m.gh, early)); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
	wantReplies(t, m.replies("writer"), "your approval predates the review request for snapshot `5a5a000` of goal `ui`")
	if ds := m.checkpoint().Decisions; len(ds) != 0 {
		t.Errorf("decisions recorded: %+v", ds)
	}
	if n := len(m.ownRequests()); n != 1 {
		t.Errorf("%d review requests, want the one", n)
	}
}

// TestDecisionsNeedTheRunAsItStands: a decision is about the run as it was
// paused: not before the loop ran, not once the head moved on, not for a
// goal with no review pending, and not while the request cannot be made.
func TestDecisionsNeedTheRunAsItStands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(m *memJob)
		body  string
		reply string
	}{
		{"before the loop ran", func(m *memJob) {}, "/loop approve ui",
			"the loop has not run on this pull request yet"},
		{"a rerun before the loop ran", func(m *memJob) {}, "/loop run",
			"it starts with the next push, or re-run the pull_request workflow"},
		{"after the head moved", func(m *memJob) {
			m.pause()
			m.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, Author: "writer", HeadSHA: strings.Repeat("e", 40), BaseSHA: memBase})
		}, "/loop approve ui", "the pull request's head moved to eeeeeee since the loop last ran on cafe000"},
		{"a goal with no review pending", func(m *memJob) { m.pause() }, "/loop approve tests",
			"no review of goal `tests` is pending"},
		{"a stop after the run is over", func(m *memJob) { m.pause(); m.finish() }, "/loop stop",
			"the run is already over (success)"},
		{"while the request cannot be posted", func(m *memJob) {
			m.pause()
			m.gh.DeleteComment(owner, repo, m.lastRequest())
			m.gh.FailEvery("POST", "/repos/*/*/issues/7/comments", http.StatusBadGateway)
		}, "/loop approve ui", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			tt.setup(m)
			id, st := m.command("writer", tt.body)
			if diff := cmp.Diff([]string{"-1", "eyes"}, reactionsTo(m.gh, id)); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
			wantReplies(t, m.replies("writer"), tt.reply)
			if cp := m.checkpoint(); cp != nil && len(cp.Decisions) != 0 {
				t.Errorf("decisions recorded: %+v", cp.Decisions)
			}
			if st != (steer{}) {
				t.Errorf("steer %+v, want none", st)
			}
		})
	}
}

// ownRequests are the bot's review requests on the pull request.
func (m *memJob) ownRequests() []reviewRequest {
	m.t.Helper()
	cs, err := m.api.Comments(m.t.Context(), owner, repo, 7)
	if err != nil {
		m.t.Fatal(err)
	}
	return m.j.pub().reviewRequests(cs, "demo")
}

// lastRequest is the id of the bot's newest review request.
func (m *memJob) lastRequest() int64 {
	m.t.Helper()
	reqs := m.ownRequests()
	if len(reqs) == 0 {
		m.t.Fatal("no review request")
	}
	return reqs[len(reqs)-1].ID
}

// finish marks the run a success, as an approval's run leaves it.
func (m *memJob) finish() {
	m.t.Helper()
	cp := m.checkpoint()
	cp.Status = state.Success
	if err := m.s.store.Save(m.t.Context(), cp, state.Commit{KeepWorkspace: true}); err != nil {
		m.t.Fatal(err)
	}
}
