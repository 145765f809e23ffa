package state

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/gitremote"
)

// ErrRefusedBranch is wrapped by the errors of a branch: store asked to
// keep checkpoints on a branch that must not hold them: "HEAD", a full
// ref name ("refs/heads/main"), a name git refuses for a branch, or an
// existing branch that is not a state branch, such as the default branch.
// It is a mistake in how the store was named, never retried.
var ErrRefusedBranch = errors.New("refused as a state branch")

// checkBranchName refuses the names that are no plain branch name.
func checkBranchName(name string) error {
	why := ""
	switch {
	case name == "":
		why = "the name is empty"
	case name == "HEAD":
		why = "HEAD names the checked-out commit, not a branch"
	case strings.HasPrefix(name, "refs/"):
		why = "give the branch's short name, without refs/"
	case strings.HasPrefix(name, "-"):
		why = "git does not allow a branch name that starts with '-'"
	case plumbing.NewBranchReferenceName(name).Validate() != nil || strings.ContainsRune(name, 0x7f):
		why = "git does not allow it as a branch name (see git check-ref-format)"
	}
	if why != "" {
		return fmt.Errorf("branch %q %w: %s", name, ErrRefusedBranch, why)
	}
	return nil
}

// checkStateTip refuses an existing branch whose tip is not shaped like
// this store's commits: a root tree that holds runs/ and nothing else.
// The tip is enough to tell, and its message is not needed: the store
// starts a branch as an orphan whose tree holds only runs/ and only ever
// changes what is under runs/, so every commit of a state branch has that
// shape (a hand-made repair of a checkpoint keeps it too); a branch that
// began as anything else (the default branch, a feature branch, one a
// checkpoint was once wrongly pushed onto) keeps its other files at the
// root in every later commit. Walking the history instead would need more
// than the depth-1 fetch the store makes.
func (b *Branch) checkStateTip(c *object.Commit) error {
	es, err := b.objs.tree(c.TreeHash)
	if err != nil {
		return err
	}
	if len(es) == 1 && es[0].Name == runsDir && es[0].Mode == filemode.Dir {
		return nil
	}
	return fmt.Errorf("branch %q %w: its tip %s (%q) holds %s, not only runs/; a state branch holds loop-action's checkpoints and nothing else: name another branch, and a new one is created",
		b.opts.Branch, ErrRefusedBranch, gitremote.CommitName(c.Hash), firstLine(c.Message), names(es))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	if len(line) > 60 {
		line = line[:60] + "…"
	}
	return line
}

// names lists a tree's entries for a message, the first few only.
func names(es []object.TreeEntry) string {
	if len(es) == 0 {
		return "nothing"
	}
	var out []string
	for i, e := range es {
		if i == 3 {
			out = append(out, fmt.Sprintf("and %d more", len(es)-3))
			break
		}
		out = append(out, e.Name)
	}
	return strings.Join(out, ", ")
}
