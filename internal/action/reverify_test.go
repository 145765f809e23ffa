package action

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/runner"
)

// approval is the decision a writer's "/loop approve ui" in comment id
// records.
func approval(id int64) gate.Decision {
	return gate.Decision{Goal: "ui", Approved: true, By: "writer", Snapshot: memSnap, Comment: id}
}

// verify runs the job's verifier on ds, as a run does with the decisions
// it loads from the state branch.
func (m *memJob) verify(ds ...gate.Decision) ([]gate.Decision, []runner.DroppedDecision, error) {
	return m.j.verifier(m.s)(context.Background(), ds)
}

// TestStoredDecisionsAreVerified: a decision read back from the state
// branch stands only if the comment it names, read through the API now,
// makes it; each forgery is dropped with why.
func TestStoredDecisionsAreVerified(t *testing.T) {
	t.Parallel()
	say := func(author, body string) func(m *memJob) int64 {
		return func(m *memJob) int64 { return m.gh.AddComment(owner, repo, 7, author, "User", body) }
	}
	tests := []struct {
		name   string
		config string
		// write sets the scene after the pause and returns the comment
		// the forged decision names; edit changes the decision.
		write func(m *memJob) int64
		edit  func(d *gate.Decision)
		why   string // "" when the decision stands
	}{
		{name: "genuine", write: say("writer", "/loop approve ui")},
		{name: "genuine, naming no goal", write: say("writer", "LGTM\n/loop approve")},
		{name: "genuine, by login in another case", write: say("Writer", "/loop approve ui")},
		{name: "a genuine rejection", write: say("writer", "/loop reject ui too dark"),
			edit: func(d *gate.Decision) { d.Approved, d.Reason = false, "too dark" }},
		{name: "no comment (loop-action review)", write: say("writer", "/loop approve ui"),
			edit: func(d *gate.Decision) { d.Comment = 0 }, why: "it names no comment it came from"},
		{name: "a fabricated comment id", write: func(*memJob) int64 { return 4_000_000_123 },
			why: "comment 4000000123 is not on pull request #7"},
		{name: "a comment on another pull request", write: func(m *memJob) int64 { return m.gh.AddComment(owner, repo, 8, "writer", "User", "/loop approve ui") },
			why: "is not on pull request #7"},
		{name: "a reader's comment", write: say("reader", "/loop approve ui"), edit: func(d *gate.Decision) { d.By = "reader" },
			why: "reader has read permission on octo-org/demo now, not write"},
		{name: "a writer who lost write since", write: func(m *memJob) int64 {
			id := m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
			m.gh.SetPermission(owner, repo, "writer", "read")
			return id
		}, why: "writer has read permission on octo-org/demo now, not write"},
		{name: "someone else's comment", write: say("reader", "/loop approve ui"), why: "was written by reader, not writer"},
		{name: "an edited comment", write: func(m *memJob) int64 {
			id := m.gh.AddComment(owner, repo, 7, "writer", "User", "Nice work.")
			m.gh.EditComment(owner, repo, id, "/loop approve ui")
			return id
		}, why: "was edited after it was written"},
		{name: "a comment saying something else", write: say("writer", "I will approve this later."), why: "holds no valid /loop command"},
		{name: "a rejection recorded as an approval", write: say("writer", "/loop reject ui too dark"), why: "says /loop reject, not /loop approve"},
		{name: "an approval of another goal", write: say("writer", "/loop approve tests"), why: "is about goal tests, not ui"},
		{name: "a rejection with another reason", write: say("writer", "/loop reject ui too dark"),
			edit: func(d *gate.Decision) { d.Approved, d.Reason = false, "fine by me" }, why: "gives another reason"},
		{name: "the bot's review request", write: func(m *memJob) int64 { return m.lastRequest() },
			edit: func(d *gate.Decision) { d.By = bot }, why: "was written by a bot"},
		{name: "a user writing as the bot's login", write: say(strings.ToUpper(bot), "/loop approve ui"),
			edit: func(d *gate.Decision) { d.By = bot }, why: "was written by a bot"},
		{name: "a writer who is not an approver", config: approvers, write: say("writer", "/loop approve ui"),
			why: "writer is not among the [review] approvers"},
		{name: "an approval older than the review request", write: func(m *memJob) int64 { return m.gh.Comments(owner, repo, 7)[0].ID },
			why: "no review of goal ui was requested before comment"},
		{name: "an approval answering a newer snapshot's request", write: func(m *memJob) int64 {
			m.request("ui", otherSnap)
			return m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
		}, why: "answers the review request for snapshot 0dd0000, not 5a5a000"},
		{name: "an approval moved to a snapshot never requested", write: say("writer", "/loop approve ui"),
			edit: func(d *gate.Decision) { d.Snapshot = otherSnap }, why: "answers the review request for snapshot 5a5a000, not 0dd0000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop+tt.config)
			m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui") // before the review was requested
			m.pause()
			d := approval(tt.write(m))
			if tt.edit != nil {
				tt.edit(&d)
			}
			kept, dropped, err := m.verify(d)
			if err != nil {
				t.Fatal(err)
			}
			want := []gate.Decision{d}
			if tt.why != "" {
				want = nil
				if len(dropped) != 1 || dropped[0].Decision != d || !strings.Contains(dropped[0].Why, tt.why) {
					t.Errorf("dropped %+v, want the decision, saying %q", dropped, tt.why)
				}
			} else if len(dropped) != 0 {
				t.Errorf("dropped %+v, want none", dropped)
			}
			if diff := cmp.Diff(want, kept); diff != "" {
				t.Errorf("kept (-want +got):\n%s", diff)
			}
		})
	}
}

// TestVerificationFailsClosed: when the comments or a permission cannot be
// read, verification is an error (the run stops and keeps its decisions
// for a later job), never a decision kept unchecked.
func TestVerificationFailsClosed(t *testing.T) {
	t.Parallel()
	for read, path := range map[string]string{
		"Comments":   "/repos/*/*/issues/7/comments",
		"Permission": "/repos/*/*/collaborators/*/permission",
	} {
		t.Run(read, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			m.pause()
			d := approval(m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui"))
			m.gh.FailEvery("GET", path, http.StatusBadGateway)
			kept, dropped, err := m.verify(d)
			if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") || kept != nil || dropped != nil {
				t.Errorf("kept %+v, dropped %+v, error %v; want only the error", kept, dropped, err)
			}
		})
	}
}

// TestVerificationReadsOnce: one listing of the comments serves every
// decision, and each author's permission is asked once.
func TestVerificationReadsOnce(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	m.pause()
	first := approval(m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui"))
	second := approval(m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve"))
	before := len(m.gh.Requests())
	kept, dropped, err := m.verify(first, second)
	if err != nil || len(kept) != 2 || len(dropped) != 0 {
		t.Fatalf("kept %+v, dropped %+v, error %v; want both kept", kept, dropped, err)
	}
	want := []string{"GET /repos/octo-org/demo/issues/7/comments?per_page=100", "GET /repos/octo-org/demo/collaborators/writer/permission"}
	if diff := cmp.Diff(want, m.gh.Requests()[before:]); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}

// TestBranchRunKeepsNoDecision: a branch's run (schedule,
// workflow_dispatch) has no pull request to check a decision against, so
// it drops them all without asking GitHub anything.
func TestBranchRunKeepsNoDecision(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	d := approval(m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui"))
	m.s.pr = 0
	kept, dropped, err := m.verify(d)
	if err != nil || kept != nil || len(dropped) != 1 || !strings.Contains(dropped[0].Why, "a branch's run takes no stored decisions") {
		t.Errorf("kept %+v, dropped %+v, error %v", kept, dropped, err)
	}
	if calls := m.gh.Requests(); len(calls) != 0 {
		t.Errorf("calls %q, want none", calls)
	}
}
