package workspace

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// WriteObjects stores the loop root's current content in s as git objects
// (its blobs and trees, the same tree [Hasher.Snapshot] names) and returns
// its snapshot, the id of the top tree. Only missing objects are written.
//
// The walk is that of Snapshot and refreshes the same blob cache, so files
// whose stat is unchanged are not read. The store is then filled from the
// top tree down, and a tree already in s is taken to be complete, as in
// any git object store (objects are written before the trees that name
// them, here and by git): for an unchanged root WriteObjects asks s about
// one object; for a changed file, about the entries of the directories on
// its path. WriteObjects writes nothing but the objects of s.
//
// A file that changes while it is stored is stored as read: the returned
// tree describes the content that s holds.
func (h *Hasher) WriteObjects(s storer.EncodedObjectStorer) (Snapshot, error) {
	h.mu.Lock()
	w := &walker{hash: true, prev: h.cache, next: make(map[string]cacheEntry, len(h.cache)), reads: &h.reads}
	h.mu.Unlock()
	w.start = h.now()
	id, err := (&objectWalker{walker: w, s: s}).run(h.root)
	if err != nil {
		return "", fmt.Errorf("store snapshot of %q: %w", h.root, err)
	}
	h.mu.Lock()
	h.cache = w.next
	h.mu.Unlock()
	return Snapshot(hex.EncodeToString(id[:])), nil
}

// objectWalker is a walk of the loop root that stores what it finds.
type objectWalker struct {
	*walker
	s    storer.EncodedObjectStorer
	root *os.Root
}

// item is a tree entry and what storing its object takes.
type item struct {
	entry
	unverified bool   // a file hashed from the cache, or a symbolic link: its blob may be missing
	rel        string // the path, slash-separated
	link       string // a symbolic link's target
	sub        []item // a tree's entries
}

func (o *objectWalker) run(root string) (objectID, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return objectID{}, err
	}
	defer r.Close()
	o.root = r
	rules, err := readInfoExclude(r)
	if err != nil {
		return objectID{}, err
	}
	items, err := o.scan(r, nil, rules)
	if err != nil {
		return objectID{}, err
	}
	return o.storeTree(items)
}

// scan returns the entries of directory r, found at path, in git's order,
// with their subtrees. It stores the files it has to read; the others are
// left unverified.
func (o *objectWalker) scan(r *os.Root, path []string, rules []rule) ([]item, error) {
	var items []item
	err := eachChild(r, path, rules, func(child []string, rules []rule) error {
		it, ok, err := o.item(r, child, rules)
		if ok {
			items = append(items, it)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(items, func(a, b item) int { return strings.Compare(a.sortKey(), b.sortKey()) })
	return items, nil
}

// item returns the entry for path, the child of r named by its last
// component, and whether there is one to record.
func (o *objectWalker) item(r *os.Root, path []string, rules []rule) (item, bool, error) {
	name := path[len(path)-1]
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return item{}, false, nil // removed since it was listed
	}
	if err != nil {
		return item{}, false, err
	}
	mode := fi.Mode()
	if !mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
		return item{}, false, nil // socket, fifo, device...
	}
	if ignored(rules, path, mode.IsDir()) {
		return item{}, false, nil
	}
	rel := strings.Join(path, "/")
	switch {
	case mode.IsDir():
		return o.subtree(r, path, rules)
	case mode&fs.ModeSymlink != 0:
		target, err := r.Readlink(name)
		if err != nil {
			return item{}, false, err
		}
		e := entry{name: name, mode: modeSymlink, id: hashObject("blob", []byte(target))}
		return item{entry: e, unverified: true, rel: rel, link: target}, true, nil
	}
	it, err := o.file(r, name, rel, fi)
	return it, err == nil, err
}

// subtree returns the item of a directory; there is none if the directory
// holds nothing to record.
func (o *objectWalker) subtree(r *os.Root, path []string, rules []rule) (item, bool, error) {
	name := path[len(path)-1]
	sub, err := OpenDir(r, name)
	if err != nil {
		return item{}, false, err
	}
	defer sub.Close()
	items, err := o.scan(sub, path, rules)
	if err != nil || len(items) == 0 {
		return item{}, false, err
	}
	e := entry{name: name, mode: modeTree, id: hashObject("tree", treeBody(items))}
	return item{entry: e, sub: items}, true, nil
}

// file returns the item of the regular file name (at rel) whose lstat
// result is fi: from the cache when its stat allows, unverified; else read
// and stored.
func (o *objectWalker) file(r *os.Root, name, rel string, fi fs.FileInfo) (item, error) {
	it := item{entry: entry{name: name, mode: modeFile}, rel: rel}
	if fi.Mode()&0o100 != 0 {
		it.mode = modeExec
	}
	if c, ok := o.prev[rel]; ok && c.usable(keyOf(fi)) {
		o.next[rel] = c
		it.id, it.unverified = c.id, true
		return it, nil
	}
	id, err := o.storeFile(r, name, rel, fi)
	it.id = id
	return it, err
}

// storeTree makes sure the tree holding items, and everything in it, is in
// the store, and returns its id. It descends only into what is missing.
func (o *objectWalker) storeTree(items []item) (objectID, error) {
	body := treeBody(items)
	id := hashObject("tree", body)
	if o.has(id) {
		return id, nil
	}
	changed := false
	for i := range items {
		it := &items[i]
		var got objectID
		var err error
		switch {
		case it.mode == modeTree:
			got, err = o.storeTree(it.sub)
		case !it.unverified:
			continue // read and stored by scan
		case it.mode == modeSymlink:
			got, err = it.id, o.ensure(plumbing.BlobObject, it.id, []byte(it.link))
		default:
			got, err = o.storeCached(it)
		}
		if err != nil {
			return objectID{}, err
		}
		changed = changed || got != it.id
		it.id = got
	}
	if changed {
		body = treeBody(items)
		id = hashObject("tree", body)
	}
	return id, o.write(plumbing.TreeObject, id, body)
}

// storeCached stores the blob of a file hashed from the cache, unless the
// store has it, and returns its id: that of what was read if the file
// changed since.
func (o *objectWalker) storeCached(it *item) (objectID, error) {
	if o.has(it.id) {
		return it.id, nil
	}
	name := filepath.FromSlash(it.rel)
	fi, err := o.root.Lstat(name)
	if err != nil {
		return objectID{}, fmt.Errorf("store %q: %w", it.rel, err)
	}
	if !fi.Mode().IsRegular() {
		return objectID{}, fmt.Errorf("store %q: %w", it.rel, errChanged)
	}
	return o.storeFile(o.root, name, it.rel, fi)
}

// storeFile reads the regular file name in r (at rel), stores its blob
// unless the store has it, records it in the next cache and returns its
// id. It retries when the file changes while being read.
func (o *objectWalker) storeFile(r *os.Root, name, rel string, fi fs.FileInfo) (objectID, error) {
	var err error
	for range maxAttempts {
		var data []byte
		var key statKey
		data, key, err = o.readContent(r, name, keyOf(fi).ino)
		if err == nil {
			id := hashObject("blob", data)
			o.next[rel] = cacheEntry{key: key, id: id, stamp: o.start}
			return id, o.ensure(plumbing.BlobObject, id, data)
		}
		if !errors.Is(err, errChanged) {
			return objectID{}, fmt.Errorf("store %q: %w", rel, err)
		}
		if fi, err = r.Lstat(name); err != nil {
			return objectID{}, fmt.Errorf("store %q: %w", rel, err)
		}
	}
	return objectID{}, fmt.Errorf("store %q: %w", rel, err)
}

// readContent reads the regular file name in r, which lstat found with
// inode ino, and returns it with the stat key of what was read.
func (o *objectWalker) readContent(r *os.Root, name string, ino uint64) ([]byte, statKey, error) {
	o.reads.Add(1)
	f, fi, err := OpenFile(r, name)
	if errors.Is(err, ErrNotRegular) {
		return nil, statKey{}, errChanged // replaced since lstat
	}
	if err != nil {
		return nil, statKey{}, err
	}
	defer f.Close()
	key := keyOf(fi)
	if key.ino != ino {
		return nil, statKey{}, errChanged // replaced since lstat
	}
	data, err := io.ReadAll(io.LimitReader(f, key.size+1))
	if err != nil {
		return nil, statKey{}, err
	}
	if int64(len(data)) != key.size {
		return nil, statKey{}, errChanged
	}
	return data, key, nil
}

// has reports whether the store holds the object id.
func (o *objectWalker) has(id objectID) bool {
	return o.s.HasEncodedObject(plumbing.Hash(id)) == nil
}

// ensure stores an object unless the store has it.
func (o *objectWalker) ensure(kind plumbing.ObjectType, id objectID, content []byte) error {
	if o.has(id) {
		return nil
	}
	return o.write(kind, id, content)
}

// write stores an object whose id the caller computed, and checks that the
// store agrees.
func (o *objectWalker) write(kind plumbing.ObjectType, id objectID, content []byte) error {
	obj := o.s.NewEncodedObject()
	obj.SetType(kind)
	obj.SetSize(int64(len(content)))
	w, err := obj.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write(content); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	got, err := o.s.SetEncodedObject(obj)
	if err != nil {
		return fmt.Errorf("store %s %x: %w", kind, id, err)
	}
	if got != plumbing.Hash(id) {
		return fmt.Errorf("store %s %x: the store computed id %s", kind, id, got)
	}
	return nil
}

// treeBody is the content of the tree object holding items, which are in
// git's order.
func treeBody(items []item) []byte {
	size := 0
	for _, it := range items {
		size += len(it.mode) + 1 + len(it.name) + 1 + len(it.id)
	}
	body := make([]byte, 0, size)
	for _, it := range items {
		body = append(body, it.mode...)
		body = append(body, ' ')
		body = append(body, it.name...)
		body = append(body, 0)
		body = append(body, it.id[:]...)
	}
	return body
}
