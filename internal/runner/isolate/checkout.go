package isolate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitindex "github.com/go-git/go-git/v5/plumbing/format/index"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/guard"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The node's repository. When the loop root is a git repository, a
// worktree is also one: .git in the worktree is a repository of its own
// (its own HEAD, refs, config, hooks and objects) that borrows the root's
// objects through objects/info/alternates, which git only ever reads. Its
// HEAD is a commit of the node's base (the root's content as last seeded
// or published) whose parent is the root's HEAD, and its index is that
// commit's tree with the worktree's stat data, so that git status and git
// diff show exactly the node's own changes and git log the history.
//
// Before every run the Manager writes the repository afresh: everything
// the node left in its .git (commits, branches, tags, config, hooks, a
// rewritten alternates file, a .git turned into a link or a file) is
// dropped, except the loose objects in a real .git/objects directory,
// which keep the blobs of bases the worktree no longer holds. The .git at
// the top of a worktree is never published, and its changes are no
// refusal; a .git anywhere else still is one.

// gitConfig is the node repository's configuration: nothing in it runs
// anything.
const gitConfig = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n" +
	"[user]\n\tname = loop node\n\temail = loop-node@localhost.invalid\n"

// checkout writes t's repository for the node's base; it removes t's .git
// when the root has no repository.
func (m *Manager) checkout(t *tree) error {
	if m.repo == nil {
		if t.git {
			t.git = false
			return t.r.RemoveAll(".git")
		}
		return nil
	}
	t.git = true
	o := &objectWriter{r: t.r, dirs: map[string]bool{}}
	if err := m.resetGit(t.r); err != nil {
		return fmt.Errorf("write the node's .git: %w", err)
	}
	tree, entries, err := m.baseTree(t, o)
	if err != nil {
		return fmt.Errorf("write the node's base: %w", err)
	}
	if err := m.commitBase(t, o, tree); err != nil {
		return fmt.Errorf("commit the node's base: %w", err)
	}
	return writeIndex(t.r, entries)
}

// resetGit makes the worktree's .git a real directory holding config,
// the alternates file naming the root's objects, the root's shallow list,
// empty refs, and nothing else but the loose objects of a real
// .git/objects (see guard.Layout).
func (m *Manager) resetGit(r *os.Root) error {
	fi, err := r.Lstat(".git")
	if err == nil && !fi.IsDir() || err != nil && !missing(err) {
		if err := r.RemoveAll(".git"); err != nil {
			return err
		}
	}
	if err := r.Mkdir(".git", 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	files := map[string][]byte{"config": []byte(gitConfig), "objects/info/alternates": []byte(m.repo.objects + "\n")}
	if m.repo.shallow != nil {
		files["shallow"] = m.repo.shallow
	}
	git, err := workspace.OpenDir(r, ".git")
	if err != nil {
		return err
	}
	defer git.Close()
	return guard.Layout{Files: files, Dirs: []string{"refs/heads", "refs/tags"}, Keep: looseObject}.Apply(git)
}

// looseObject keeps what is in .git/objects but its info/ (where git
// would read grafts and alternates): the blobs of bases the worktree no
// longer holds.
func looseObject(rel string, _ fs.DirEntry) bool {
	return strings.HasPrefix(rel, "objects/") && rel != "objects/info" && !strings.HasPrefix(rel, "objects/info/")
}

// writeNew creates name (which must not exist) holding data.
func writeNew(r *os.Root, name string, data []byte) error {
	f, err := r.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|oNoFollow, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// baseTree writes the tree of t's base, and the blobs of it neither the
// root's HEAD nor the node's objects hold, from the worktree. A base the
// worktree no longer holds and no object holds is left out (git then
// shows the path as untracked). It returns the tree and its index entries.
func (m *Manager) baseTree(t *tree, o *objectWriter) (plumbing.Hash, []*gitindex.Entry, error) {
	root := &treeDir{}
	entries := make([]*gitindex.Entry, 0, len(t.base))
	for _, p := range sortedKeys(t.base) {
		e := t.base[p]
		id := plumbing.Hash(e.st.id)
		if !e.st.present() {
			continue
		}
		if !m.repo.blobs[e.st.id] && !o.has(id) {
			ok, err := o.blob(p, e.st)
			if err != nil {
				return id, nil, fmt.Errorf("%q: %w", p, err)
			}
			if !ok {
				continue
			}
		}
		mode := gitMode(e.st.kind)
		root.add(p, mode, id)
		entries = append(entries, indexEntry(p, mode, id, e.seen.Key))
	}
	id, err := root.write(o)
	return id, entries, err
}

// indexEntry is the index entry of p: its base, and the stat of the
// worktree's file when it last held that base. Should the file have
// changed since, git sees a different stat and compares the content.
func indexEntry(p string, mode filemode.FileMode, id plumbing.Hash, key workspace.StatKey) *gitindex.Entry {
	size, mtime, ctime, dev, ino := key.IndexStat()
	return &gitindex.Entry{Name: p, Mode: mode, Hash: id, Size: uint32(size), Dev: uint32(dev), Inode: uint32(ino),
		ModifiedAt: time.Unix(0, mtime), CreatedAt: time.Unix(0, ctime), UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
}

// writeIndex writes the node's index of entries (git's format, version 2).
func writeIndex(r *os.Root, entries []*gitindex.Entry) error {
	var b bytes.Buffer
	if err := gitindex.NewEncoder(&b).Encode(&gitindex.Index{Version: 2, Entries: entries}); err != nil {
		return err
	}
	return writeNew(r, ".git/index", b.Bytes())
}

func gitMode(k kind) filemode.FileMode {
	switch k {
	case executable:
		return filemode.Executable
	case symlink:
		return filemode.Symlink
	}
	return filemode.Regular
}

// commitBase writes the commit of tree, child of the root's HEAD, and
// points the node's HEAD (and the root's branch name, if HEAD names one)
// at it.
func (m *Manager) commitBase(t *tree, o *objectWriter, tree plumbing.Hash) error {
	sig := object.Signature{Name: "loop-action", Email: "loop-action@localhost.invalid", When: m.now()}
	c := &object.Commit{Author: sig, Committer: sig, TreeHash: tree,
		Message: fmt.Sprintf("loop: base of node %s\n\nThe loop root's content as last seeded into this worktree or published from it.\n", t.node)}
	if !m.repo.head.IsZero() {
		c.ParentHashes = []plumbing.Hash{m.repo.head}
	}
	obj := &plumbing.MemoryObject{}
	if err := c.Encode(obj); err != nil {
		return err
	}
	id, err := o.put(obj)
	if err != nil {
		return err
	}
	if m.repo.branch == "" {
		return writeNew(t.r, ".git/HEAD", []byte(id.String()+"\n"))
	}
	if err := t.r.MkdirAll(path.Dir(".git/"+m.repo.branch), 0o755); err != nil {
		return err
	}
	if err := writeNew(t.r, ".git/"+m.repo.branch, []byte(id.String()+"\n")); err != nil {
		return err
	}
	return writeNew(t.r, ".git/HEAD", []byte("ref: "+m.repo.branch+"\n"))
}
