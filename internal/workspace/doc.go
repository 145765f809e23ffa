// Package workspace is the only owner of file identity and of writes into
// the loop root.
//
// File identity. A file or symbolic link is its git blob id ([ObjectID]),
// of its bytes ([HashFile], [LinkID]) or, in a snapshot, of the blob
// `git add` stores; every copy says what it copied ([Copied]). The stat
// cache ([StatKey], [Stamp.Vouches]: git's racy-clean rule) avoids reading
// a file again. [Matcher] says which paths a snapshot includes. Package
// isolate uses all of these and keeps no idea of its own.
//
// Snapshots. A [Snapshot] is the tree id `git add -A && git write-tree`
// would record for the loop root in a checkout of its [Base], cleaned by
// the tree's .gitattributes and the [Checkout] settings (convert.go).
// Excluded are every entry named ".git", the top-level ".loop" in every
// spelling a case-folding disk takes for it ([IsLoop]), and what the
// tree's .gitignore files and a root .git/info/exclude ignore. Not read:
// core.excludesFile, global and system ignore and attribute files,
// .gitignore files above the root, a linked worktree's info/exclude: none
// travels with a commit, so a snapshot depends only on the root (and on
// its Base, for text=auto files with CRs and filtered files). Tracked but
// ignored files are excluded too: a snapshot describes the disk, not an
// index. A nested repository is hashed as a plain directory minus its
// .git, where git would record a gitlink; sockets, fifos and devices are
// skipped. [Hasher.Certify] names the files no checkout of the snapshot
// reproduces ([Problem]). [TreeHasher] computes, from a tree's objects
// alone, the snapshot its checkout would have: it takes each blob
// unconverted, which is sound since a certified snapshot holds only blobs
// whose checkout gives back what was measured. [ScanUncarried] lists what
// a snapshot leaves out although it is on disk, for the runner to remove.
//
// Writes. [Writer] is the one way loop-action writes into the loop root,
// and [Restore] writes through it. It never writes through a symbolic
// link in any component: it enters directories one at a time, checking
// each is the directory it lstat'ed, and renames files and links into
// place from beside them.
//
// Reads. The package never runs git and never follows a symbolic link.
// Every access goes through an [os.Root], one per directory a walk
// enters, checked to be the one lstat'ed. An agent may put a FIFO, socket
// or device anywhere, and open(2) of a FIFO blocks beyond any context:
// [OpenFile], [ReadFile], [OpenDir] and [OpenRoot] refuse them without
// blocking, and other packages reading the loop root use them too. The
// one read outside an os.Root is of the root's repository with go-git
// ([OpenRepo]), through a file system that opens every file non-blocking.
//
// Hand-written where a library might seem to do it: the ignore and
// attribute patterns and the line-ending and ident conversions port git's
// own code, since go-git's gitignore and gitattributes packages match
// otherwise than git, its worktree converts nothing, and the certified
// bytes cannot be approximate; tree and blob hashing (object.go) is a few
// lines where go-git's encoders would allocate in every walk.
//
// Bounds (limit.go). Nothing an agent puts in the root makes a walk cost
// more than its caller's context allows, nor hold more than a few KiB per
// directory it is in: every walk and read takes a context; a snapshot
// refuses, by lstat, a file larger than [Checkout.MaxFileSize]
// ([ErrFileTooLarge]); no walk goes beyond [MaxDepth] or [MaxPathBytes]
// ([ErrTooDeep]); and a walk's directories share one array of names.
package workspace
