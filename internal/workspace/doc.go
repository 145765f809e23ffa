// Package workspace computes content ids ("snapshots") of a loop root.
//
// A [Snapshot] is the git tree object id (SHA-1, 40 hex digits) that
// `git add -A && git write-tree` would record for the files on disk under
// the loop root, so that the same tree can later be stored verbatim on the
// state branch as runs/<id>/workspace. Excluded from the tree are:
//
//   - every entry named ".git", at any depth, whether directory or file
//     (as git itself does);
//   - the entry named ".loop" directly under the root (loop-action's own state);
//   - paths ignored by the .gitignore files of the tree (at every level, with
//     later and deeper patterns taking precedence) and by .git/info/exclude
//     when .git is a directory at the root.
//
// Ignore rules deliberately not consulted: core.excludesFile and the default
// global ignore file ($XDG_CONFIG_HOME/git/ignore), the system git config,
// .gitignore files above the root, and the info/exclude file of a linked
// worktree or submodule whose .git is a file. The snapshot therefore depends
// only on the content of the root itself. Tracked files that are ignored are
// excluded too: a snapshot describes what is on disk, not what is in an index.
//
// Entries are recorded as git does: regular files as 100644, or 100755 when
// the owner execute bit is set; symbolic links as 120000 whose blob is the
// link target text; directories as 40000, omitted when they contain nothing
// that is recorded. Sockets, fifos and devices are skipped. A directory that
// holds a nested repository is hashed as a plain directory (minus its .git),
// where git would record a gitlink.
//
// This package owns those ids and the objects behind them: [Hasher.WriteObjects]
// writes a snapshot's blobs and trees into a git object store (the state
// branch's), and [Restore] makes a loop root's content equal to a stored
// snapshot. Computing a snapshot writes nothing (the blob cache of a [Hasher]
// lives in memory). The package never runs git and never follows a symbolic
// link: links are hashed and restored as text, and every file access goes
// through an [os.Root] opened on the loop root, so no path can resolve
// outside it; Restore never touches .git, .loop or ignored files. Nor does
// it ever wait on what an agent put in the root: files and directories are
// opened with [OpenFile], [ReadFile], [OpenDir] and [OpenRoot], which
// refuse a FIFO, socket or device without blocking and read at most a
// limit. Other packages reading files in a loop root use them too.
//
// [Writer] is the one way loop-action writes single paths into the loop
// root (the runner's reverts of protected paths and of .git's
// configuration): it never writes through a symbolic link in any
// component, inside the root or not, and reads what it records without
// following links or blocking on named pipes.
package workspace
