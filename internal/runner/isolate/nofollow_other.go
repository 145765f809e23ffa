//go:build !unix

package isolate

// oNoFollow is zero where open has no such flag; file access still goes
// through an [os.Root], which never leaves the worktree.
const oNoFollow = 0
