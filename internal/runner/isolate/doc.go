// Package isolate owns the per-node worktrees of isolated nodes
// (.loop/worktrees/<node>/ under the loop root) and the publishing of what
// those nodes change back into the loop root.
//
// A worktree is a copy of the files the loop root's snapshot includes
// (workspace decides: no .git, no .loop, no ignored files), made once and
// then kept in step incrementally. When the loop root is a git repository
// the worktree is one too, of its own: before every run its .git is
// written afresh, borrowing the root's objects read-only through
// objects/info/alternates, with HEAD a commit of the node's base on top of
// the root's HEAD (see checkout.go); otherwise it is a plain copy. For
// every path the Manager remembers the node's base: the content (git blob
// id and mode) the path had in the root when the worktree was last seeded
// or published. Publishing copies into the root only what a node changed
// relative to its base, and only while the root still holds that base: the
// first writer of a path wins and the loser is reported. What a node
// changed is found by a stat walk of its worktree compared with the base,
// whose cost follows the size of the worktree: a Publish from a
// 10,000-file worktree takes some 25 ms on a calm machine, where an
// inotify watcher (300 lines, dropped) made it follow the number of
// changed files, some 8 ms.
//
// This package never publishes into the loop root's .git or .loop (its own
// files live in .loop/worktrees), never publishes a node's .git, never
// writes into the root's .git (it only reads HEAD, the shallow list and
// HEAD's trees there, in process), never publishes a protected path, a
// symbolic link that leads outside the root or a deletion, never reads or
// writes a tree's file through a symbolic link (file access goes through
// an [os.Root], and a path below a link is not a path of the tree), never
// runs git, and writes into the loop root only in Publish, through the
// root's [workspace.Writer]. It decides nothing about ignore rules itself,
// and owns no idea of what a file is: blob ids, the stat cache and copies
// are workspace's.
//
// go-git encodes the node's objects and index (objfile, index.Encoder)
// and reads the root's repository, but the files are written through the
// worktree's os.Root: go-git's filesystem storage writes through billy,
// which follows links, and exports no tree builder (treeDir). Before
// go-git opens the root's repository, repocheck.go makes sure nothing in
// it is a named pipe, which go-git's plain open would block on.
package isolate
