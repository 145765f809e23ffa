// Package delivery owns the git mechanics of getting converged work to a
// branch people merge: a commit built from the loop root (the workspace
// the gate certified), on the commit the run started from, pushed with a
// compare-and-swap on the branch; the snapshot of a commit, computed as
// package workspace computes a checkout's (the status rule compares the
// two); and the patch from the base to a delivered tree.
//
// [Build] hashes the loop root by the workspace's rules (files cleaned by
// their .gitattributes as `git add` in a checkout of the base cleans
// them: the delivered blobs are the snapshot's) and takes from it
// every path whose content differs from a checkout of the base: .loop,
// .git (in any spelling a case-folding file system would take for it)
// and ignored files are never delivered, nor is a path the caller
// excludes (protected paths, workflows) or a file holding a secret the
// caller names (then nothing is); nor is anything when the root's ignore
// rules hide a file the base tracks that is still there (the commit
// would delete a file the gate's checks had on disk). Objects live in memory, over the
// root's repository, which is only read, until [Delivery.Push] sends
// exactly those the remote lacks, with the ref update old → new that the
// server applies only if the branch is still at old. [Apply] is the
// same change brought into a person's checkout as uncommitted files,
// written as a checkout writes them (workspace.Smudger), refusing to
// overwrite local edits.
//
// It must never write into the loop root's .git (nor, but for Apply
// through a workspace.Writer, into the loop root), never push
// anything but the one commit to the one ref it is given (and never to a
// ref that is not a branch), never overwrite a branch that moved, and
// never let a token into an error, a commit or the objects it sends.
//
// The tree diff, the line diff and the patch are this package's, not
// go-git's (v5): its tree diff fails on a directory whose name holds a
// control character or spells .git, its line diff panics past about a
// million distinct lines and has no bound but a clock (its output would
// depend on load), and its unified encoder writes names unquoted (one
// with a tab breaks `git apply`) and a file that became a link as a mode
// change, which `git apply` refuses.
package delivery
