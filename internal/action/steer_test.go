package action

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// These tests drive the action in process against the GitHub fake, with
// hostile comments: each shape was once executed.

// TestEditedCommentIsNoCommand: a plain comment edited into /loop approve
// (by its author, or by anyone allowed to edit it) is not executed by the
// next job's catch-up.
func TestEditedCommentIsNoCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	w.tick()
	w.pause()
	id, code, log, _ := w.commentJob("writer", "Looks fine, I will have a closer look tomorrow.")
	if code != exitOK {
		t.Fatalf("the plain comment's job exited %d\n%s", code, log)
	}
	w.gh.EditComment(owner, repo, id, "/loop approve ui")
	_, code, log, d := w.commentJob("reader", "/loop status")
	if code != exitOK {
		t.Fatalf("the next job exited %d\n%s", code, log)
	}
	if got := w.lastStatus(); got == "success" {
		t.Fatalf("the edited comment certified the head\n%s", log)
	}
	if out := outputs(t, d.commands); out["success"] == "true" {
		t.Errorf("outputs %v", out)
	}
	if diff := cmp.Diff([]string{"-1", "eyes"}, sorted(w.gh.Reactions(owner, repo, id))); diff != "" {
		t.Errorf("reactions to the edited comment (-want +got):\n%s", diff)
	}
	if r := w.repliesTo("writer"); len(r) != 1 || !strings.Contains(r[0], "an edited comment is never a command") {
		t.Errorf("replies to the writer: %q", r)
	}
	if ds := w.checkpoint().Decisions; len(ds) != 0 {
		t.Errorf("decisions recorded: %+v", ds)
	}
}

// TestApprovalPredatingReviewRequest: an approval written before the bot
// asked for the review (here: before the loop even ran, its job held back
// by the concurrency group) does not count for the snapshot it never saw;
// one written after the request does.
func TestApprovalPredatingReviewRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	early := w.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
	w.pause()
	code, log, d := w.commentEvent(early, "writer", "/loop approve ui")
	if code != exitOK {
		t.Fatalf("the early approval's job exited %d\n%s", code, log)
	}
	if out := outputs(t, d.commands); w.lastStatus() == "success" || out["success"] == "true" || out["stop-reason"] == "success" {
		t.Fatalf("an approval older than the review request certified the head: status %s, outputs %v\n%s", w.lastStatus(), out, log)
	}
	replies := w.repliesTo("writer")
	if len(replies) == 0 || !strings.Contains(replies[len(replies)-1], "your approval predates the review request for snapshot") {
		t.Errorf("replies to the writer: %q", replies)
	}
	_, code, log, d = w.commentJob("writer", "/loop approve ui")
	if out := outputs(t, d.commands); !w.certified(code, out) {
		t.Fatalf("the approval after the request: exit %d, outputs %v, status %s\n%s", code, out, w.lastStatus(), log)
	}
}

// TestCommandsStayHandledAcrossGenerations: when a push starts a new
// generation of the run, the commands already handled are not handled
// again (an old approval must not meet the new snapshot, an old help not
// be answered twice).
func TestCommandsStayHandledAcrossGenerations(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	w.pause()
	w.commentJob("writer", "/loop help")
	approval, code, log, d := w.commentJob("writer", "/loop approve ui")
	if !w.certified(code, outputs(t, d.commands)) {
		t.Fatalf("the approval: exit %d, status %s\n%s", code, w.lastStatus(), log)
	}
	w.push("NOTES.md", "more\n")
	if code, log, _ := w.prJob("synchronize"); code != exitOK || w.lastStatus() != "pending" {
		t.Fatalf("the new head: exit %d, status %s\n%s", code, w.lastStatus(), log)
	}
	replies := len(w.repliesTo("writer"))
	if _, code, log, _ := w.commentJob("reader", "/loop status"); code != exitOK {
		t.Fatalf("the status job exited %d\n%s", code, log)
	}
	if diff := cmp.Diff([]string{"+1", "eyes"}, sorted(w.gh.Reactions(owner, repo, approval))); diff != "" {
		t.Errorf("reactions to the old approval (-want +got):\n%s", diff)
	}
	if got := len(w.repliesTo("writer")); got != replies {
		t.Errorf("old commands were answered again: %q", w.repliesTo("writer")[replies:])
	}
	if w.lastStatus() == "success" {
		t.Error("the new head was certified without a review")
	}
}

// TestMissingReviewRequestIsPostedAgain: when the request for the snapshot
// under review is missing (it could not be posted, or was deleted), an
// approval does not count; the request is posted and the next approval
// does.
func TestMissingReviewRequestIsPostedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	w.pause()
	cs := w.gh.Comments(owner, repo, 7)
	request := cs[len(cs)-1]
	if !strings.HasPrefix(request.Body, "<!-- loop-action:review loop=demo goal=ui snapshot=") || !w.gh.DeleteComment(owner, repo, request.ID) {
		t.Fatalf("no review request to delete: %+v", request)
	}
	_, code, log, _ := w.commentJob("writer", "/loop approve")
	if code != exitOK || w.lastStatus() == "success" {
		t.Fatalf("an approval with no request: exit %d, status %s\n%s", code, w.lastStatus(), log)
	}
	cs = w.gh.Comments(owner, repo, 7)
	if r := w.repliesTo("writer"); len(r) != 1 || !strings.Contains(r[0], "the request is posted now") ||
		!strings.HasPrefix(cs[len(cs)-2].Body, request.Body[:strings.Index(request.Body, "\n")]) {
		t.Fatalf("replies %q; comments %+v", r, cs)
	}
	if _, code, log, d := w.commentJob("writer", "/loop approve"); !w.certified(code, outputs(t, d.commands)) {
		t.Fatalf("the approval after the new request: exit %d, status %s\n%s", code, w.lastStatus(), log)
	}
}
