// Package workspace is the only owner of file identity and of writes into
// the loop root.
//
// File identity. What a file or symbolic link is, for loop-action, is its
// git blob id ([ObjectID]): [HashFile] and [LinkID] compute it of the
// bytes as they are, and every copy says what it copied ([Copied]); a
// snapshot holds the blob `git add` would store, which the file's
// attributes may convert (see Snapshots). Reading a blob id again is avoided
// by the stat cache: [StatKey] is what must be unchanged (size, mode,
// times, device, inode) and [Stamp.Vouches] applies git's racy-clean rule.
// [Matcher] says which paths a snapshot includes under the ignore rules.
// Package isolate uses all of these for its worktrees; it keeps no idea of
// its own.
//
// Snapshots. A [Snapshot] is the git tree object id (SHA-1, 40 hex digits)
// that `git add -A && git write-tree` would record for the files on disk
// under the loop root, in a checkout of its [Base] (the tree it was
// checked out from, whose index git's safer-autocrlf rule reads), so that
// the same tree can later be stored verbatim on the state branch as
// runs/<id>/workspace. Files are cleaned as `git add` cleans them: the
// tree's .gitattributes (attr.go; info/attributes and global or system
// attribute files are not read, since no commit carries them) decide line
// endings (text, eol, crlf, binary) and ident, with the core.autocrlf and
// core.eol of a [Checkout] (convert.go). [Hasher.Certify] also says which
// files no checkout of the snapshot reproduces ([Problem]): a file whose
// smudged blob is not its bytes, or one under a filter driver or a
// working-tree-encoding (which are not run) that differs from the base.
// Excluded from the tree are:
//
//   - every entry named ".git", at any depth, whether directory or file
//     (as git itself does);
//   - the entry named ".loop" directly under the root (loop-action's own
//     state), in every spelling a case-folding disk takes for it ([IsLoop]);
//   - paths ignored by the .gitignore files of the tree (at every level, with
//     later and deeper patterns taking precedence) and by .git/info/exclude
//     when .git is a directory at the root.
//
// Ignore rules deliberately not consulted: core.excludesFile and the default
// global ignore file ($XDG_CONFIG_HOME/git/ignore), the system git config,
// .gitignore files above the root, and the info/exclude file of a linked
// worktree or submodule whose .git is a file. The snapshot therefore depends
// only on the content of the root itself, and on its Base where a text=auto
// file holds CRs or a file is under a filter. Tracked files that are ignored are
// excluded too: a snapshot describes what is on disk, not what is in an index.
//
// Entries are recorded as git does: regular files as 100644, or 100755 when
// the owner execute bit is set; symbolic links as 120000 whose blob is the
// link target text; directories as 40000, omitted when they contain nothing
// that is recorded. Sockets, fifos and devices are skipped. A directory that
// holds a nested repository is hashed as a plain directory (minus its .git),
// where git would record a gitlink. [Hasher.WriteObjects] writes a
// snapshot's blobs and trees into a git object store (the state branch's).
// Computing a snapshot writes nothing (the blob cache of a [Hasher] lives in
// memory). [TreeHasher] computes, by the same rules, the snapshot a
// checkout of a git tree would have, from the tree's objects alone (the
// status rule compares it with what the gate certified); it stores only
// the filtered trees it computes, in the store it is given. It takes each
// blob as the checkout's, unconverted: a certified snapshot only holds
// blobs whose checkout gives back what was measured (Certify), so a
// commit whose tree equals it checks out exactly those bytes, while a
// tree holding a blob that is not normalized (a CRLF blob under "text")
// never equals a snapshot of its own checkout, and is never certified.
// [ScanUncarried] lists, by lstat alone, what a snapshot leaves out
// although it is on disk (ignored entries, nested .git directories), and
// [Uncarried.Changed] what appeared or changed there since an earlier
// listing: the runner removes that before measuring, since no commit of
// the snapshot carries it.
//
// Writes. [Writer] is the one way loop-action writes into the loop root:
// the runner's reverts of protected paths and of .git's configuration
// ([Writer.Put], [Writer.Remove]) and its removal of ignored files that
// changed ([Writer.Remove]), what isolated nodes publish
// ([Writer.Copy]), and [Restore], which makes a loop root's content equal
// to a stored snapshot, writing each file as a checkout writes it (its
// blob smudged by the tree's .gitattributes: [Smudger]), and never
// touches .git, .loop or ignored files. A
// Writer never writes through a symbolic link in any component, inside the
// root or not: it enters directories one at a time, checking each is the
// real directory it lstat'ed, and writes files and links beside their path
// and renames them into place. [CopyNew] is the same copy into a new tree
// (isolate seeding a worktree).
//
// Reads. The package never runs git and never follows a symbolic link:
// links are hashed and restored as text, and every file access goes
// through an [os.Root], so no path can resolve outside it: the walks
// open one for each directory they enter, checking that it is the one
// they lstat'ed, and reach its entries by one component. (They once
// listed and lstat'ed through getdents(2) and fstatat(2) by hand; a walk
// of os.Root and os.File.ReadDir costs about the same, measured against
// `git status` on a 100,000-file checkout.) Nor does it
// ever wait on what an agent put in the root: files and directories are
// opened with [OpenFile], [ReadFile], [OpenDir] and [OpenRoot], which
// refuse a FIFO, socket or device without blocking and read at most a
// limit. Other packages reading files in a loop root use them too. The
// one read outside an [os.Root] is of the root's own repository with
// go-git ([OpenRepo], for [CommitBase] and isolated worktrees), through
// a file system that opens every file non-blocking, a .git file and its
// commondir followed as git follows them; [CommitBase] checks every
// object against its id.
//
// Hand-written where a library might seem to do it: the ignore and
// attribute patterns (pattern.go, wildmatch.go, attr.go) and the line
// ending and ident conversions (convert.go, eol.go, ident.go) port git's
// own code, since go-git's gitignore and gitattributes packages match
// otherwise than git, go-git's worktree applies no such conversion, and
// the certified bytes cannot be approximate; the tree and blob hashing
// (object.go) is a few lines that go-git's object encoders would spend
// allocations on in every walk.
//
// Bounds (limit.go). Nothing an agent puts in the root makes a walk cost
// more than its caller's context allows, nor hold more memory than a few
// KiB per directory it is in: every walk and every read takes a context,
// checked between entries and every 64 KiB of a file, and ends with an
// error wrapping its cause; a snapshot refuses, by lstat, a regular file
// larger than [Checkout.MaxFileSize] ([ErrFileTooLarge]); no walk enters a
// directory beyond [MaxDepth] or takes on a path beyond [MaxPathBytes]
// ([ErrTooDeep]); and the directories of a walk share one array of names
// (or one buffer), so that what a walk holds per directory is its
// os.Root, whose name MaxPathBytes bounds.
package workspace
