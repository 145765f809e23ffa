// Package hook owns loop-action's git hooks: the shim that git runs
// (install, uninstall, status, without ever losing a hook that was there),
// what a pre-push or pre-commit hook gates (the pushed commits, or the
// staged tree — never the working tree), the isolated checkout under
// .loop/hook/checkout where the checks run (a repository of its own that
// borrows the user's objects: checkout.go), and the verdict cache that
// lets a tree already certified under the same config pass without being
// measured again; and --mode loop, a bounded loop in that checkout whose
// fix becomes one commit on a new local branch (Gate.Loop), with what its
// agents change of the user's repository and working tree put back
// (guardOutside).
//
// It rules through runner.Measure only, the one gate path. It must never
// touch the user's working tree, index, stash, HEAD or branches (it only
// creates a fix branch, never moves one); never push; never
// let a pushed commit's content run anything at hook time but the
// configured checks inside the isolated checkout (every git it runs has
// hooks and fsmonitor turned off, and nothing it starts inherits the
// repository variables git gives a hook, such as GIT_DIR or
// GIT_INDEX_FILE); and never take a cache entry it cannot verify for a
// pass.
package hook
