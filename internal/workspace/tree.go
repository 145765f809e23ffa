package workspace

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/phrase"
)

// TreeHasher computes the snapshot a checkout of a git tree would have in
// one loop root: the tree's entries filtered by a [Hasher]'s rules. Dropped
// are .git, the top .loop, submodules (left empty by a checkout), what the
// tree's .gitignore blobs (not links: a checked-out link ignores nothing)
// and the root's .git/info/exclude ignore, and directories left empty.
type TreeHasher struct {
	s       storer.EncodedObjectStorer
	exclude []rule
}

// NewTreeHasher returns a TreeHasher reading trees from s under the
// .git/info/exclude of the loop root root.
func NewTreeHasher(root string, s storer.EncodedObjectStorer) (*TreeHasher, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open loop root %q: %w", root, err)
	}
	defer r.Close()
	exclude, err := readInfoExclude(r)
	if err != nil {
		return nil, fmt.Errorf("read the ignore rules of %q: %w", root, err)
	}
	return &TreeHasher{s: s, exclude: exclude}, nil
}

// Snapshot returns the snapshot of a checkout of tree, storing the trees
// it computes in s so that snapshots compare entry by entry. It stops
// when ctx is done and refuses a tree beyond MaxDepth or MaxPathBytes.
func (t *TreeHasher) Snapshot(ctx context.Context, tree plumbing.Hash) (Snapshot, error) {
	es, err := (&treeWalk{ctx: ctx, t: t}).dir(tree, nil, t.exclude)
	if err != nil {
		return "", fmt.Errorf("snapshot of tree %s: %w", phrase.Short(tree.String()), err)
	}
	id, err := (&walker{s: t.s}).tree(es) // its files are the tree's own blobs: only trees are written
	if err != nil {
		return "", fmt.Errorf("snapshot of tree %s: %w", phrase.Short(tree.String()), err)
	}
	return Snapshot(id.String()), nil
}

// treeWalk is one TreeHasher.Snapshot.
type treeWalk struct {
	ctx context.Context
	t   *TreeHasher
}

// dir returns the entries a checkout of tree id, at path, records.
func (w *treeWalk) dir(id plumbing.Hash, path []string, rules []rule) ([]entry, error) {
	if err := live(w.ctx); err != nil {
		return nil, err
	}
	t := w.t
	tes, err := readTree(t.s, id, strings.Join(path, "/"))
	if err != nil {
		return nil, err
	}
	if rules, err = t.ignoreFile(tes, path, rules); err != nil {
		return nil, err
	}
	var es []entry
	child := append(path, "")
	for _, te := range tes {
		if te.Name == ".git" || (len(path) == 0 && IsLoop(te.Name)) {
			continue
		}
		child[len(path)] = te.Name
		e, ok, err := w.entry(te, child, rules)
		if err != nil {
			return nil, err
		}
		if ok {
			es = append(es, e)
		}
	}
	sortEntries(es)
	return es, nil
}

// entry returns the entry a checkout records for te, at path.
func (w *treeWalk) entry(te object.TreeEntry, path []string, rules []rule) (entry, bool, error) {
	e := entry{name: te.Name, id: ObjectID(te.Hash)}
	switch te.Mode {
	case filemode.Dir:
		if ignored(rules, path, true) {
			return entry{}, false, nil
		}
		if err := checkDepth(path); err != nil {
			return entry{}, false, err
		}
		sub, err := w.dir(te.Hash, path, rules)
		if err != nil || len(sub) == 0 {
			return entry{}, false, err
		}
		e.mode, e.obj = modeTree, &toStore{sub: sub}
		e.id = treeID(sub)
	case filemode.Regular, filemode.Deprecated:
		e.mode = modeFile
	case filemode.Executable:
		e.mode = modeExec
	case filemode.Symlink:
		e.mode = modeSymlink
	default: // a submodule, or a mode no checkout writes
		return entry{}, false, nil
	}
	if e.mode != modeTree && ignored(rules, path, false) {
		return entry{}, false, nil
	}
	return e, true, nil
}

// ignoreFile appends the rules of the tree's .gitignore blob to rules.
func (t *TreeHasher) ignoreFile(es []object.TreeEntry, path []string, rules []rule) ([]rule, error) {
	i := slices.IndexFunc(es, func(e object.TreeEntry) bool { return e.Name == ".gitignore" })
	if i < 0 || !es[i].Mode.IsRegular() && es[i].Mode != filemode.Executable {
		return rules, nil
	}
	size, err := t.s.EncodedObjectSize(es[i].Hash)
	if err == nil && size > maxIgnoreFile {
		err = fmt.Errorf("%w of %d bytes", ErrTooLarge, maxIgnoreFile)
	}
	var data []byte
	if err == nil {
		data, err = readObject(t.s, plumbing.BlobObject, es[i].Hash)
	}
	if err != nil {
		return nil, fmt.Errorf("read %q: %w", join(strings.Join(path, "/"), ".gitignore"), err)
	}
	return append(slices.Clip(rules), parseRules(data, path)...), nil
}
