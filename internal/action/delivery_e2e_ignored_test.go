package action

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestE2EIgnoredHelperCertifiesNothing: an agent fixes the bug, then moves
// the fix into build/helper.sh, which it makes ignored, and has calc.sh
// source it. The commit a delivery pushes carries calc.sh but not the
// helper, so its checkout would fail the tests. The helper is removed
// before the runner measures, the tests fail, nothing is certified:
// nothing is pushed, no commit gets success, and the comment shows the
// failing check.
func TestE2EIgnoredHelperCertifiesNothing(t *testing.T) {
	extra := "printf 'build/\\n' >>.gitignore\nmkdir -p build && cp calc.sh build/helper.sh\n" +
		"printf '. ./build/helper.sh\\n' >calc.sh\n"
	e := newE2E(t, deliverLoop, extra)
	refs := e.refs()
	code, log, _ := e.pr(DeliverAuto, nil)
	if code != exitFailed {
		t.Fatalf("exit %d, want the job to fail\n%s", code, log)
	}
	if diff := cmp.Diff(refs, e.refs()); diff != "" || e.git.pushed() != 0 {
		t.Errorf("%d pushes; the remote's branches moved (-before +after):\n%s", e.git.pushed(), diff)
	}
	if got := e.successes(); len(got) != 0 {
		t.Errorf("success set on %v", got)
	}
	if s := e.sticky(); !strings.Contains(s, "cannot open ./build/helper.sh") {
		t.Errorf("the sticky comment does not show the missing helper:\n%s", s)
	}
}
