package action

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
)

// fetchCounter stands between the action and the git server and counts
// the fetches of the state branch: each is one upload-pack ref
// advertisement (GET info/refs?service=git-upload-pack). The state branch
// fetches on every load of a checkpoint and at no other time (short of a
// push race, which a lone job never meets), so the count is the loads.
type fetchCounter struct {
	URL     string
	fetches atomic.Int32
}

func countFetches(t *testing.T, w *world) *fetchCounter {
	t.Helper()
	target, err := url.Parse(w.git.URL)
	if err != nil {
		t.Fatal(err)
	}
	fc := &fetchCounter{}
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/info/refs") && r.URL.Query().Get("service") == "git-upload-pack" {
			fc.fetches.Add(1)
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	fc.URL = srv.URL
	return fc
}

// job runs the action in process on event (a file in testdata/events) with
// the state branch behind the counter, and returns the fetches it made.
func (fc *fetchCounter) job(w *world, ref, event, file string, vars map[string]string) (int32, int, string, map[string]string) {
	w.t.Helper()
	before := fc.fetches.Load()
	d := w.jobDirs(ref)
	code, log := inProcess(w.t, w, d, event, w.event(d.workflow, file, vars), map[string]string{"GITHUB_SERVER_URL": fc.URL})
	return fc.fetches.Load() - before, code, log, outputs(w.t, d.commands)
}

// TestOneLoadPerEvent: each job loads the run's checkpoint once, under the
// run's lock, whatever it does with it: a pull_request event that first
// catches up with an approval whose own job was dropped and then resumes
// the run, and issue_comment events that only report (/loop status) or
// find the run over (/loop run).
func TestOneLoadPerEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	fc := countFetches(t, w)
	comment := func(user, body string) map[string]string {
		id := w.gh.AddComment(owner, repo, 7, user, "User", body)
		return map[string]string{"body": body, "user": user, "id": itoa(id)}
	}
	steps := []struct {
		name, ref, event, file string
		vars                   map[string]string
		want                   string // stop-reason
	}{
		{"the PR opens and the loop pauses", "feature", "pull_request", "pull_request_opened", nil, "awaiting-review"},
		{"/loop status", "feature", "issue_comment", "issue_comment_created", nil, "awaiting-review"},
		{"a push event catches up with a dropped approval", "feature", "pull_request", "pull_request_opened", map[string]string{"action": "synchronize"}, "success"},
		{"/loop run on a run that is over", "feature", "issue_comment", "issue_comment_created", nil, "success"},
	}
	for i, st := range steps {
		vars := st.vars
		switch i {
		case 1:
			vars = comment("reader", "/loop status")
		case 2:
			comment("writer", "/loop approve ui") // its own job was dropped
		case 3:
			vars = comment("writer", "/loop run")
		}
		n, code, log, out := fc.job(w, st.ref, st.event, st.file, vars)
		if code != converged(st.want) || out["stop-reason"] != st.want {
			t.Fatalf("%s: exit %d, outputs %v, want stop-reason %s\n%s", st.name, code, out, st.want, log)
		}
		if n != 1 {
			t.Errorf("%s: the job fetched the state branch %d times, want once", st.name, n)
		}
	}
}

// TestCommandsWaitForTheLock: while another process holds the run, a
// comment's job changes nothing — no command handled, no reaction, nothing
// saved — and fails; the next job handles the command.
func TestCommandsWaitForTheLock(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git and the whole loop")
	}
	t.Parallel()
	w := newWorld(t)
	w.pause()
	before := w.checkpoint()
	id := w.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
	vars := map[string]string{"body": "/loop approve ui", "user": "writer", "id": itoa(id)}
	d := w.jobDirs("feature")
	locks, err := state.OpenDir(filepath.Join(d.workspace, ".loop", "state-git", "locks"))
	if err != nil {
		t.Fatal(err)
	}
	unlock, err := locks.Lock("demo/pr-7")
	if err != nil {
		t.Fatal(err)
	}
	code, log := inProcess(t, w, d, "issue_comment", w.event(d.workflow, "issue_comment_created", vars), nil)
	unlock()
	if code == exitOK || !strings.Contains(log, "in use by another") {
		t.Fatalf("the job on a held run: exit %d\n%s", code, log)
	}
	if got := w.gh.Reactions(owner, repo, id); len(got) != 0 {
		t.Errorf("the approval got reactions %v while the run was held", got)
	}
	if after := w.checkpoint(); after.LedgerEvents != before.LedgerEvents || len(after.Decisions) != 0 || after.LastCommentID != before.LastCommentID {
		t.Errorf("the held run was amended: %d events (was %d), decisions %+v, last comment %d", after.LedgerEvents, before.LedgerEvents, after.Decisions, after.LastCommentID)
	}
	code, log, d = w.commentEvent(id, "writer", "/loop approve ui")
	if out := outputs(t, d.commands); !w.certified(code, out) {
		t.Fatalf("the next job: exit %d, outputs %v\n%s", code, out, log)
	}
}

// TestReviewRefusal: the runner's review rule, worded for a reply.
func TestReviewRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		named   string
		pending []string
		want    string
	}{
		{"ui", nil, "no review of goal `ui` is pending"},
		{"ui", []string{"copy"}, "no review of goal `ui` is pending"},
		{"", nil, "no review is pending"},
		{"", []string{"ui", "copy"}, "reviews of `ui`, `copy` are pending: name the goal, e.g. /loop approve ui"},
	}
	for _, tt := range tests {
		var verdicts []gate.Verdict
		for _, g := range tt.pending {
			verdicts = append(verdicts, gate.Verdict{Goal: g, Checks: []gate.CheckVerdict{{Type: "manual", Status: gate.Pending, ReviewRequested: true}}})
		}
		_, err := runner.PendingReview(verdicts, tt.named)
		if got := reviewRefusal(err); got == nil || got.Error() != tt.want {
			t.Errorf("PendingReview(%v, %q) refused with %v, want %q", tt.pending, tt.named, got, tt.want)
		}
	}
}
