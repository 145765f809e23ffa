package action

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// Jobs in the world, run in process, and what to read back after them.

// tick makes the fake GitHub's clock move on a second at every stamp, so
// that an edit is always later than what it edits. (The fake calls the
// clock under its lock.)
func (w *world) tick() {
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	w.gh.SetClock(func() time.Time {
		t0 = t0.Add(time.Second)
		return t0
	})
}

// prJob runs the action in process on a pull_request event for the PR's
// head with the given action ("opened", "reopened", …).
func (w *world) prJob(action string) (int, string, jobDirs) {
	w.t.Helper()
	d := w.jobDirs("feature")
	code, log := inProcess(w.t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", map[string]string{"action": action}), nil)
	return code, log, d
}

// commentJob posts body on the PR as user and runs the action in process
// on the issue_comment event it raises.
func (w *world) commentJob(user, body string) (int64, int, string, jobDirs) {
	w.t.Helper()
	id := w.gh.AddComment(owner, repo, 7, user, "User", body)
	code, log, d := w.commentEvent(id, user, body)
	return id, code, log, d
}

// commentEvent runs the action on the issue_comment event of comment id.
func (w *world) commentEvent(id int64, user, body string) (int, string, jobDirs) {
	w.t.Helper()
	d := w.jobDirs("feature")
	code, log := inProcess(w.t, w, d, "issue_comment", w.event(d.workflow, "issue_comment_created",
		map[string]string{"body": body, "user": user, "id": itoa(id)}), nil)
	return code, log, d
}

// pause opens the PR and checks that the loop paused for the ui review.
func (w *world) pause() {
	w.t.Helper()
	code, log, d := w.prJob("opened")
	if out := outputs(w.t, d.commands); code != exitOK || out["stop-reason"] != "awaiting-review" {
		w.t.Fatalf("pull_request exited %d with outputs %v\n%s", code, out, log)
	}
}

// lastStatus is the state of the last loop/demo status on the PR head.
func (w *world) lastStatus() string {
	st := w.gh.Statuses(owner, repo, w.headSHA)
	if len(st) == 0 {
		return ""
	}
	return st[len(st)-1].State
}

// certified reports whether the job's run succeeded with the fix the
// agent made: with deliver: none the head then keeps failure (the fix is
// not on it) and the job fails, but the run's checkpoint says success.
func (w *world) certified(code int, out map[string]string) bool {
	st := w.gh.Statuses(owner, repo, w.headSHA)
	return code == exitFailed && out["stop-reason"] == "success" && out["success"] == "false" &&
		len(st) > 0 && strings.Contains(st[len(st)-1].Description, "not delivered")
}

// repliesTo are the bot's comments that mention login.
func (w *world) repliesTo(login string) []string {
	var out []string
	for _, c := range w.gh.Comments(owner, repo, 7) {
		if c.User == bot && strings.HasPrefix(c.Body, "@"+login+":") {
			out = append(out, c.Body)
		}
	}
	return out
}

// store opens the state branch the way anyone with push access could.
func (w *world) store() state.Store {
	w.t.Helper()
	st, err := state.OpenStore(context.Background(), "branch:loop-state", w.t.TempDir(), state.RemoteOptions{Remote: w.origin})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { st.Close() })
	return st
}

// checkpoint loads the PR's run from the state branch.
func (w *world) checkpoint() *state.Checkpoint {
	w.t.Helper()
	cp, err := w.store().Load(context.Background(), "demo/pr-7")
	if err != nil {
		w.t.Fatal(err)
	}
	return cp
}

// push adds a commit to the PR's branch and moves the PR's head to it.
func (w *world) push(file, content string) {
	w.t.Helper()
	seed := filepath.Join(w.dir, "seed")
	writeFile(w.t, filepath.Join(seed, file), content)
	w.gitCmd(seed, "add", "-A")
	w.gitCmd(seed, "commit", "-q", "-m", "more")
	w.headSHA = w.gitCmd(seed, "rev-parse", "HEAD")
	w.gitCmd(seed, "push", "-q", w.origin, "feature")
	w.gh.AddPull(owner, repo, githubfake.Pull{Number: 7, HeadSHA: w.headSHA, HeadRef: "feature", BaseRef: "main", BaseSHA: w.baseSHA, Author: "writer"})
}
