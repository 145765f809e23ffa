package action

import (
	"strings"
	"testing"
)

// TestStateBranchInputRefused: input state-branch naming the default
// branch, HEAD or a full ref fails the job with exit 2 before any agent
// runs, and the repository keeps its refs.
func TestStateBranchInputRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("drives git")
	}
	t.Parallel()
	w := newWorld(t)
	refs := func() string { return w.gitCmd(w.origin, "for-each-ref", "--format=%(refname) %(objectname)") }
	before := refs()
	for _, branch := range []string{"main", "HEAD", "refs/heads/main"} {
		d := w.jobDirs("feature")
		code, log := inProcess(t, w, d, "pull_request", w.event(d.workflow, "pull_request_opened", nil), map[string]string{"INPUT_STATE-BRANCH": branch})
		if code != exitConfig || !strings.Contains(log, `refused as a state branch`) {
			t.Errorf("state-branch %q: exit %d, want 2 with a refusal\n%s", branch, code, log)
		}
		if strings.Contains(log, "fixer dispatched") {
			t.Errorf("state-branch %q: an agent ran", branch)
		}
	}
	if after := refs(); after != before {
		t.Errorf("the repository's refs changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
