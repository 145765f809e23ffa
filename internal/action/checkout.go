package action

import (
	"fmt"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/workspace"
)

// checkoutFix is how a workflow checks out a pull request's head rather
// than the merge commit actions/checkout takes by default.
const checkoutFix = "check out the head on the checkout step: `ref: ${{ github.event.pull_request.head.sha }}` " +
	"(on issue_comment: `ref: refs/pull/${{ github.event.issue.number }}/head`)"

// branchCheckoutFix is the same for a branch's run.
const branchCheckoutFix = "check out the commit the workflow runs on (actions/checkout's default, without `ref:`), and change no tracked file before loop-action"

// checkHead makes sure the workspace is the tree of head, the commit the
// run is about, before anything runs: the status rule compares the tree
// the gate measures with a commit's tree, and a delivered commit's parent
// is head. A pull request's job that checked out GitHub's merge commit
// (actions/checkout's default, refs/pull/N/merge), or the default branch
// on issue_comment, fails here with the fix (exit 2), as does a workspace
// that an earlier step changed. Without git nothing can be compared, and
// nothing is certified on a commit later either.
func (j *job) checkHead(head, what, fix string) error {
	if j.git == nil {
		j.a.Warningf("this loop-action was built without git delivery: no commit can be certified, so loop/<name> is never success and nothing is delivered")
		return nil
	}
	tree, err := j.git.CommitSnapshot(j.workspace, head)
	if err != nil {
		return badSetup(fmt.Errorf("the checkout does not hold %s %s, which the loop measures and delivers onto (%s); %s",
			what, phrase.Short(head), j.mask(err.Error()), fix))
	}
	now, err := workspace.NewHasher(j.workspace).Snapshot()
	if err != nil {
		return fmt.Errorf("hash the workspace: %w", err)
	}
	if string(now) != tree {
		return badSetup(fmt.Errorf("the workspace is not the tree of %s %s (snapshot %s, not %s): "+
			"the checkout is another commit, or a step before loop-action changed files that are not ignored; %s",
			what, phrase.Short(head), now.Short(), phrase.Short(tree), fix))
	}
	return nil
}
