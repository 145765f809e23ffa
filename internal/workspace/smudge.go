package workspace

import (
	"bytes"
	"fmt"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Smudger says what a checkout of a git tree writes for its files: each
// blob smudged by the tree's own .gitattributes (read from their blobs)
// under a [Checkout]'s settings. Filter drivers and working-tree-encoding
// are not run: such a file is written as its blob, as a checkout without
// the driver writes it. A Smudger is safe for concurrent use.
type Smudger struct {
	k      Checkout
	mu     sync.Mutex
	tree   treeDirs
	stacks map[string]attrStack // the attributes files that apply in a directory, "" for the top
}

// NewSmudger returns a Smudger for the tree whose objects s holds.
func NewSmudger(s storer.EncodedObjectStorer, tree plumbing.Hash, k Checkout) *Smudger {
	return &Smudger{k: k, tree: treeDirs{s: s, root: tree, dirs: map[string][]object.TreeEntry{}}, stacks: map[string]attrStack{}}
}

// File returns what a checkout writes for the file at rel whose blob is
// blob.
func (m *Smudger) File(rel string, blob []byte) ([]byte, error) {
	c, err := m.conv(rel)
	if err != nil || !c.converts() {
		return blob, err
	}
	return m.k.smudge(blob, c), nil
}

// conv returns how a checkout converts the file at rel.
func (m *Smudger) conv(rel string) (conv, error) {
	dir, _ := splitPath(rel)
	m.mu.Lock()
	st, err := m.stack(dir)
	m.mu.Unlock()
	if err != nil {
		return conv{}, err
	}
	if len(st) == 0 && m.k.autocrlf() == "false" {
		return conv{}, nil
	}
	return convOf(st.attrs(rel, nil), m.k), nil
}

// stack returns the attributes files that apply in the directory dir.
func (m *Smudger) stack(dir string) (attrStack, error) {
	if st, ok := m.stacks[dir]; ok {
		return st, nil
	}
	var st attrStack
	if dir != "" {
		up, _ := splitPath(dir)
		var err error
		if st, err = m.stack(up); err != nil {
			return nil, err
		}
	}
	es, err := m.tree.entries(dir)
	if err != nil {
		return nil, err
	}
	f, err := m.attrFile(es, dir)
	if err != nil {
		return nil, err
	}
	if f != nil {
		st = st.push(f)
	}
	m.stacks[dir] = st
	return st, nil
}

// enter tells m the entries of the directory dir, read by a walk of the
// tree, so that it does not read them again.
func (m *Smudger) enter(dir string, es []object.TreeEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tree.dirs[dir]; !ok {
		m.tree.dirs[dir] = es
	}
}

// attrFile reads the .gitattributes among es as a checkout does: its
// blob, of a file or a link alike.
func (m *Smudger) attrFile(es []object.TreeEntry, dir string) (*attrFile, error) {
	for _, e := range es {
		if e.Name != ".gitattributes" || e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		size, err := m.tree.s.EncodedObjectSize(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", join(dir, ".gitattributes"), err)
		}
		if size >= attrMaxFile {
			return parseAttrs(nil, dir, false), nil // ignored, as git does
		}
		data, err := readObject(m.tree.s, plumbing.BlobObject, e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", join(dir, ".gitattributes"), err)
		}
		return parseAttrs(data, dir, false), nil
	}
	return nil, nil
}

// smudged returns what a checkout writes for blob id of the file at rel,
// or nil when that is the blob itself.
func (m *Smudger) smudged(rel string, id plumbing.Hash) ([]byte, error) {
	c, err := m.conv(rel)
	if err != nil || !c.converts() {
		return nil, err
	}
	blob, err := readObject(m.tree.s, plumbing.BlobObject, id)
	if err != nil {
		return nil, err
	}
	out := m.k.smudge(blob, c)
	if out == nil {
		out = []byte{}
	}
	return bytes.Clone(out), nil
}
