package workspace

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Smudger says what a checkout of a git tree writes for its files: each
// blob smudged by the tree's own .gitattributes, read as a checkout reads
// them (from their blobs), under the settings of a [Checkout]: "$Id$"
// expanded under ident, LF made CRLF where the line endings say so.
// Filter drivers and working-tree-encoding are not run (a file under one
// is written as its blob is, which is what a checkout without the driver
// writes). [Restore] writes through one, and package delivery's Apply
// too. A Smudger is safe for concurrent use.
type Smudger struct {
	s    storer.EncodedObjectStorer
	root plumbing.Hash
	k    Checkout
	mu   sync.Mutex
	dirs map[string]smudgeDir // by directory, "" for the top
}

// smudgeDir is a directory of the tree: its entries and the attributes
// files that apply to them.
type smudgeDir struct {
	entries []object.TreeEntry // nil when the tree has no directory there
	stack   attrStack
}

// NewSmudger returns a Smudger for the tree whose objects s holds.
func NewSmudger(s storer.EncodedObjectStorer, tree plumbing.Hash, k Checkout) *Smudger {
	return &Smudger{s: s, root: tree, k: k, dirs: map[string]smudgeDir{}}
}

// File returns what a checkout writes for the file at rel (slash
// separated) whose blob is blob: blob itself when nothing converts it.
func (m *Smudger) File(rel string, blob []byte) ([]byte, error) {
	c, err := m.conv(rel)
	if err != nil || !c.converts() {
		return blob, err
	}
	return m.k.smudge(blob, c), nil
}

// conv returns how a checkout converts the file at rel.
func (m *Smudger) conv(rel string) (conv, error) {
	dir := ""
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir = rel[:i]
	}
	m.mu.Lock()
	d, err := m.dir(dir)
	m.mu.Unlock()
	if err != nil {
		return conv{}, err
	}
	if len(d.stack) == 0 && m.k.autocrlf() == "false" {
		return conv{}, nil
	}
	return convOf(d.stack.attrs(rel, nil), m.k), nil
}

// dir returns the directory dir of the tree, reading what it lacks.
func (m *Smudger) dir(dir string) (smudgeDir, error) {
	if d, ok := m.dirs[dir]; ok {
		return d, nil
	}
	var d smudgeDir
	id := m.root
	if dir != "" {
		up, name := "", dir
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			up, name = dir[:i], dir[i+1:]
		}
		ud, err := m.dir(up)
		if err != nil {
			return smudgeDir{}, err
		}
		d.stack, id = ud.stack, plumbing.ZeroHash
		for _, e := range ud.entries {
			if e.Name == name && e.Mode == filemode.Dir {
				id = e.Hash
			}
		}
	}
	if !id.IsZero() {
		t, err := object.GetTree(m.s, id)
		if err != nil {
			return smudgeDir{}, fmt.Errorf("tree %s of %q: %w", id, dir, err)
		}
		if d, err = m.with(d.stack, t.Entries, dir); err != nil {
			return smudgeDir{}, err
		}
	}
	m.dirs[dir] = d
	return d, nil
}

// with is the directory dir holding es, below the stack up.
func (m *Smudger) with(up attrStack, es []object.TreeEntry, dir string) (smudgeDir, error) {
	d := smudgeDir{entries: es, stack: up}
	f, err := m.attrFile(es, dir)
	if err != nil {
		return smudgeDir{}, err
	}
	if f != nil {
		d.stack = d.stack.push(f)
	}
	return d, nil
}

// enter tells m the entries of the directory dir, whose parent it has
// been told of or has read (a walk of the tree from the top), so that it
// does not read the tree again.
func (m *Smudger) enter(dir string, es []object.TreeEntry) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.dirs[dir]; ok {
		return nil
	}
	var up attrStack
	if dir != "" {
		parent := ""
		if i := strings.LastIndexByte(dir, '/'); i >= 0 {
			parent = dir[:i]
		}
		p, ok := m.dirs[parent]
		if !ok {
			return nil // read when asked
		}
		up = p.stack
	}
	d, err := m.with(up, es, dir)
	if err == nil {
		m.dirs[dir] = d
	}
	return err
}

// attrFile reads the .gitattributes among es, of the directory dir, as a
// checkout does: its blob, whether it is a file or a symbolic link (whose
// blob is its target).
func (m *Smudger) attrFile(es []object.TreeEntry, dir string) (*attrFile, error) {
	for _, e := range es {
		if e.Name != ".gitattributes" || e.Mode == filemode.Dir || e.Mode == filemode.Submodule {
			continue
		}
		size, err := m.s.EncodedObjectSize(e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", join(dir, ".gitattributes"), err)
		}
		if size >= attrMaxFile {
			return parseAttrs(nil, dir, false), nil // ignored, as git does
		}
		data, err := readObject(m.s, plumbing.BlobObject, e.Hash)
		if err != nil {
			return nil, fmt.Errorf("read %q: %w", join(dir, ".gitattributes"), err)
		}
		return parseAttrs(data, dir, false), nil
	}
	return nil, nil
}

// smudged reports whether the regular file written holds what a checkout
// writes for blob id of the file at rel, and returns that when it must
// be converted (nil when the blob is written as it is).
func (m *Smudger) smudged(rel string, id plumbing.Hash) ([]byte, error) {
	c, err := m.conv(rel)
	if err != nil || !c.converts() {
		return nil, err
	}
	blob, err := readObject(m.s, plumbing.BlobObject, id)
	if err != nil {
		return nil, err
	}
	out := m.k.smudge(blob, c)
	if out == nil {
		out = []byte{}
	}
	return bytes.Clone(out), nil
}
