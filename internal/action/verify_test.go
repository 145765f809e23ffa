package action

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// forge writes a decision into the PR's run on the state branch, as anyone
// with push access to it can. The decision approves goal ui for the
// snapshot under review.
func (w *world) forge(by string, comment int64) gate.Decision {
	w.t.Helper()
	st := w.store()
	cp, err := st.Load(context.Background(), "demo/pr-7")
	if err != nil {
		w.t.Fatal(err)
	}
	d := gate.Decision{Goal: "ui", Approved: true, By: by, Snapshot: cp.Snapshot, Comment: comment}
	cp.Decisions = append(cp.Decisions, d)
	if err := st.Save(context.Background(), cp, state.Commit{KeepWorkspace: true}); err != nil {
		w.t.Fatal(err)
	}
	return d
}

// dropped are the review_dropped events in the run's ledger.
func (w *world) dropped() []string {
	w.t.Helper()
	b, err := w.store().Ledger(context.Background(), "demo/pr-7")
	if err != nil {
		w.t.Fatal(err)
	}
	evs, err := ledger.Decode(strings.NewReader(string(b)))
	if err != nil {
		w.t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		if e.Type == ledger.ReviewDropped {
			out = append(out, e.Reason)
		}
	}
	return out
}

// TestForgedDecisionsAreDropped: a decision pushed into the state branch
// does not certify the head when the PR is reopened unless the comment it
// names, read back through the API, makes it: the forgery is dropped and
// the ledger says why. Each kind of forgery is a row of
// TestStoredDecisionsAreVerified, in memory; these drive the whole job
// over HTTP, with one forgery for each thing read back: the comment
// listing, a comment's timestamps, a permission.
func TestForgedDecisionsAreDropped(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	tests := []struct {
		name  string
		forge func(w *world) (by string, comment int64)
		why   string
	}{
		{"a fabricated comment id", func(w *world) (string, int64) { return "writer", 4_000_000_123 },
			"comment 4000000123 is not on pull request #7"},
		{"a reader's comment", func(w *world) (string, int64) {
			return "reader", w.gh.AddComment(owner, repo, 7, "reader", "User", "/loop approve ui")
		}, "reader has read permission on octo-org/demo now, not write"},
		{"an edited comment", func(w *world) (string, int64) {
			id := w.gh.AddComment(owner, repo, 7, "writer", "User", "Nice work.")
			w.gh.EditComment(owner, repo, id, "/loop approve ui")
			return "writer", id
		}, "was edited after it was written"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.tick()
			w.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
			w.pause()
			w.forge(tt.forge(w))
			code, log, d := w.prJob("reopened")
			if out := outputs(t, d.commands); code != exitOK || out["success"] == "true" || w.lastStatus() == "success" {
				t.Fatalf("reopening certified the forged decision: exit %d, outputs %v, status %s\n%s", code, out, w.lastStatus(), log)
			}
			if !strings.Contains(log, "review_dropped") || !strings.Contains(log, tt.why) {
				t.Errorf("the job log does not say why the decision was dropped (%q):\n%s", tt.why, log)
			}
			if got := w.dropped(); len(got) != 1 || !strings.Contains(got[0], tt.why) {
				t.Errorf("review_dropped events in the ledger: %q, want one saying %q", got, tt.why)
			}
			if ds := w.checkpoint().Decisions; len(ds) != 0 {
				t.Errorf("decisions kept: %+v", ds)
			}
		})
	}
}

// TestStoredDecisionVerifiedAcrossPages: a genuine decision whose comment
// is on the listing's second page stands; while its check cannot be made
// the run stops with an error and keeps it; a later job certifies. Each
// job asks for the approver's permission at most once.
func TestStoredDecisionVerifiedAcrossPages(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	w.pause()
	for i := range 120 {
		w.gh.AddComment(owner, repo, 7, "reader", "User", fmt.Sprintf("comment %d", i))
	}
	id := w.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
	d := w.forge("writer", id) // as if a job had recorded it, then died
	cp := w.checkpoint()
	cp.LastCommentID = id
	if err := w.store().Save(context.Background(), cp, state.Commit{KeepWorkspace: true}); err != nil {
		t.Fatal(err)
	}

	w.gh.FailNext("GET", "/repos/*/*/collaborators/writer/permission", 401, nil, "")
	code, log, dirs := w.prJob("reopened")
	if code == exitOK || outputs(t, dirs.commands)["success"] == "true" || w.lastStatus() == "success" {
		t.Fatalf("an unverifiable decision: exit %d, status %s\n%s", code, w.lastStatus(), log)
	}
	if ds := w.checkpoint().Decisions; len(ds) != 1 || ds[0] != d {
		t.Fatalf("decisions after a failed check: %+v, want the one recorded", ds)
	}

	before := len(w.gh.Requests())
	code, log, dirs = w.prJob("reopened")
	if out := outputs(t, dirs.commands); !w.certified(code, out) {
		t.Fatalf("a genuine stored approval: exit %d, outputs %v, status %s\n%s", code, out, w.lastStatus(), log)
	}
	perms, pages := 0, 0
	for _, r := range w.gh.Requests()[before:] {
		perms += strings.Count(r, "/collaborators/writer/permission")
		pages += strings.Count(r, "/issues/7/comments?page=2")
	}
	if perms != 1 || pages == 0 {
		t.Errorf("the job asked for the writer's permission %d times and read page 2 %d times", perms, pages)
	}
}
