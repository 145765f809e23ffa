package workspace

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Base is the tree a loop root was checked out from, as a fresh
// checkout's index holds it: asked by the safer-autocrlf rule and about
// files under a filter or working-tree-encoding (convert.go), never for
// a root without attributes. A Base is safe for concurrent use.
type Base interface {
	// Blob returns the content of the regular file at rel, false when
	// there is none.
	Blob(rel string) ([]byte, bool, error)
}

// NoBase is the empty Base of a new repository.
var NoBase Base = noBase{}

type noBase struct{}

func (noBase) Blob(string) ([]byte, bool, error) { return nil, false, nil }

// TreeBase is the Base of tree, whose objects s holds.
func TreeBase(s storer.EncodedObjectStorer, tree plumbing.Hash) Base {
	return &treeBase{tree: treeDirs{s: s, root: tree, dirs: map[string][]object.TreeEntry{}}}
}

// CommitBase is the Base of the commit sha in the repository of root,
// read when first asked: empty for no repository or no commit yet.
func CommitBase(root, sha string) Base {
	return lazyBase(sync.OnceValues(func() (Base, error) { return openBase(root, sha) }))
}

type treeBase struct {
	mu   sync.Mutex
	tree treeDirs
}

func (b *treeBase) Blob(rel string) ([]byte, bool, error) {
	dir, name := splitPath(rel)
	b.mu.Lock()
	es, err := b.tree.entries(dir)
	b.mu.Unlock()
	if err != nil {
		return nil, false, err
	}
	for _, e := range es {
		if e.Name == name && (e.Mode.IsRegular() || e.Mode == filemode.Executable) {
			data, err := readObject(b.tree.s, plumbing.BlobObject, e.Hash)
			return data, err == nil, err
		}
	}
	return nil, false, nil
}

// splitPath splits rel into its directory ("" for the top) and name.
func splitPath(rel string) (dir, name string) {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i], rel[i+1:]
	}
	return "", rel
}

// treeDirs reads the directories of a git tree once each, as asked. It is
// used by one goroutine at a time.
type treeDirs struct {
	s    storer.EncodedObjectStorer
	root plumbing.Hash
	dirs map[string][]object.TreeEntry // by directory ("" for the top); nil: the tree has none there
}

// entries returns the entries of the directory dir, nil for none.
func (t *treeDirs) entries(dir string) ([]object.TreeEntry, error) {
	if es, ok := t.dirs[dir]; ok {
		return es, nil
	}
	id := t.root
	if dir != "" {
		up, name := splitPath(dir)
		ups, err := t.entries(up)
		if err != nil {
			return nil, err
		}
		id = plumbing.ZeroHash
		for _, e := range ups {
			if e.Name == name && e.Mode == filemode.Dir {
				id = e.Hash
			}
		}
	}
	var es []object.TreeEntry
	if !id.IsZero() {
		var err error
		if es, err = readTree(t.s, id, dir); err != nil {
			return nil, err
		}
	}
	t.dirs[dir] = es
	return es, nil
}

// readTree returns the entries of the tree id, at dir, checked as
// readObject checks.
func readTree(s storer.EncodedObjectStorer, id plumbing.Hash, dir string) ([]object.TreeEntry, error) {
	data, err := readObject(s, plumbing.TreeObject, id)
	if err == nil {
		obj := &plumbing.MemoryObject{}
		obj.SetType(plumbing.TreeObject)
		obj.Write(data)
		var tr object.Tree
		if err = tr.Decode(obj); err == nil {
			return tr.Entries, nil
		}
	}
	return nil, fmt.Errorf("tree %s of %q: %w", id, dir, err)
}

// readObject reads the object id from s, checked to hash to id: agents
// can write the loop root's object store.
func readObject(s storer.EncodedObjectStorer, kind plumbing.ObjectType, id plumbing.Hash) ([]byte, error) {
	obj, err := s.EncodedObject(kind, id)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", kind, id, err)
	}
	r, err := obj.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if hashObject(kind.String(), data) != ObjectID(id) {
		return nil, fmt.Errorf("%s %s: the object store holds other content under its id", kind, id)
	}
	return data, nil
}

// lazyBase is the Base it returns when first called.
type lazyBase func() (Base, error)

func (f lazyBase) Blob(rel string) ([]byte, bool, error) {
	b, err := f()
	if err != nil {
		return nil, false, err
	}
	return b.Blob(rel)
}

func openBase(root, sha string) (Base, error) {
	repo, err := OpenRepo(root)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		return NoBase, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the repository of %q: %w", root, err)
	}
	h, err := repo.ResolveRevision(plumbing.Revision(sha))
	if sha == "HEAD" && errors.Is(err, plumbing.ErrReferenceNotFound) {
		return NoBase, nil // no commit yet
	}
	var c *object.Commit
	if err == nil {
		c, err = object.GetCommit(repo.Storer, *h)
	}
	if err != nil {
		return nil, fmt.Errorf("the commit %q the loop root was checked out from: %w", sha, err)
	}
	return TreeBase(repo.Storer, c.TreeHash), nil
}
