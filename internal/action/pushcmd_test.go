package action

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoopPush: with deliver: comment the fix is posted; /loop push from a
// reader is refused with a reaction only, from a writer it restores the
// certified workspace, measures it again and pushes it onto the branch
// (compare-and-swap on the head), where the commit carries success. It
// delivers once; with deliver: auto it is refused with the reason.
func TestLoopPush(t *testing.T) {
	t.Parallel()
	comment := withDeliver(DeliverComment)
	f := newFlow(t, deliverLoop, fixer(""))
	head := f.head
	if res := f.pr(comment); !errors.Is(res.err, ErrUnsuccessful) {
		t.Fatalf("the run: %v\n%s", res.err, res.log)
	}
	id, res := f.comment("reader", "/loop push", comment)
	if res.err != nil || len(f.git.tried()) != 0 || !cmp.Equal(reactionsTo(f.gh, id), []string{"-1", "eyes"}) {
		t.Fatalf("a reader's push: %v, pushes %+v, reactions %v", res.err, f.git.tried(), reactionsTo(f.gh, id))
	}
	id, res = f.comment("writer", "/loop push", comment)
	pushes := f.git.tried()
	if res.err != nil || len(pushes) != 1 || !cmp.Equal(reactionsTo(f.gh, id), []string{"+1", "eyes"}) {
		t.Fatalf("a writer's push: %v, pushes %+v, reactions %v\n%s", res.err, pushes, reactionsTo(f.gh, id), res.log)
	}
	d := pushes[0].SHA
	if pushes[0].Ref != "refs/heads/feature" || pushes[0].Old != head || f.git.get(d).Files["calc.sh"] != fixedCalc {
		t.Errorf("the push: %+v", pushes[0])
	}
	if res.outputs["success"] != "true" || res.outputs["delivered-sha"] != d {
		t.Errorf("outputs %v", res.outputs)
	}
	got := f.statuses()
	if want := []string{d[:7] + " success: certified: snapshot " + f.checkpoint("demo/pr-7").Snapshot[:7] + " at iteration 1 of demo/pr-7",
		head[:7] + " failure: fixed in " + d[:7] + " pushed to this branch"}; !cmp.Equal(want, got[len(got)-2:]) {
		t.Errorf("statuses %q", got)
	}
	if f.ran() != 1 {
		t.Errorf("the agent ran %d times, want once: /loop push measures, it does not run the loop", f.ran())
	}

	id, _ = f.comment("writer", "/loop push", comment)
	if len(f.git.tried()) != 1 || !strings.Contains(lastReply(f), "already pushed") {
		t.Errorf("a second push: pushes %+v, reply %q, reactions %v", f.git.tried(), lastReply(f), reactionsTo(f.gh, id))
	}
	f.comment("writer", "/loop push", nil)
	if !strings.Contains(lastReply(f), "/loop push is for `deliver: comment` or `deliver: none`; with `deliver: auto` the loop delivers certified work itself") {
		t.Errorf("with deliver: auto: reply %q", lastReply(f))
	}
}

func lastReply(f *flow) string {
	cs := f.gh.Comments(owner, repo, 7)
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].User == bot && strings.HasPrefix(cs[i].Body, "@") {
			return cs[i].Body
		}
	}
	return ""
}
