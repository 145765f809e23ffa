package workspace

import (
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// walker performs one traversal of the loop root.
type walker struct {
	hash  bool                  // compute object ids (Snapshot) or only list (Files)
	start time.Time             // when the snapshot started, for the racy rule
	prev  map[string]cacheEntry // cache of the previous snapshot; read only
	next  map[string]cacheEntry // cache entries for the files seen now
	files []string              // included paths, when listing
	reads *atomic.Int64
}

// maxAttempts bounds how often a file that changes while it is read is retried.
const maxAttempts = 3

// errChanged reports a file that changed while it was being read.
var errChanged = errors.New("changed while being read")

// run walks the tree at root and returns the id of its top-level tree.
func (w *walker) run(root string) (objectID, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return objectID{}, err
	}
	defer r.Close()
	rules, err := readInfoExclude(r)
	if err != nil {
		return objectID{}, err
	}
	es, err := w.dir(r, nil, rules)
	if err != nil || !w.hash {
		return objectID{}, err
	}
	return treeID(es), nil
}

// readInfoExclude returns the rules of .git/info/exclude, if .git is a directory.
func readInfoExclude(r *os.Root) ([]rule, error) {
	fi, err := r.Lstat(".git")
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !fi.IsDir()) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return readRules(r, ".git/info/exclude", nil, nil)
}

// dir returns the sorted tree entries of directory r, found at path.
func (w *walker) dir(r *os.Root, path []string, rules []rule) ([]entry, error) {
	var es []entry
	err := eachChild(r, path, rules, func(child []string, rules []rule) error {
		e, ok, err := w.entry(r, child, rules)
		if ok {
			es = append(es, e)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sortEntries(es)
	return es, nil
}

// eachChild reads directory r's .gitignore on top of rules and calls visit
// for each child a snapshot may hold — never .git, nor .loop at the root —
// with path extended by the child's name. visit must not keep child.
func eachChild(r *os.Root, path []string, rules []rule, visit func(child []string, rules []rule) error) error {
	rules, err := readRules(r, ".gitignore", path, rules)
	if err != nil {
		return err
	}
	names, err := readNames(r)
	if err != nil {
		return err
	}
	child := append(slices.Clip(path), "")
	for _, name := range names {
		if name == ".git" || (len(path) == 0 && name == ".loop") {
			continue
		}
		child[len(path)] = name
		if err := visit(child, rules); err != nil {
			return err
		}
	}
	return nil
}

// readNames lists the names in directory r.
func readNames(r *os.Root) ([]string, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// entry returns the tree entry for path, the child of directory r named
// by its last component, and whether there is one to record.
func (w *walker) entry(r *os.Root, path []string, rules []rule) (entry, bool, error) {
	name := path[len(path)-1]
	fi, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return entry{}, false, nil // removed since it was listed
	}
	if err != nil {
		return entry{}, false, err
	}
	mode := fi.Mode()
	if !mode.IsDir() && !mode.IsRegular() && mode&fs.ModeSymlink == 0 {
		return entry{}, false, nil // socket, fifo, device...
	}
	if ignored(rules, path, mode.IsDir()) {
		return entry{}, false, nil
	}
	switch {
	case mode.IsDir():
		return w.subdir(r, path, rules)
	case mode&fs.ModeSymlink != 0:
		return w.symlink(r, path)
	default:
		return w.file(r, path, fi)
	}
}

// subdir returns the tree entry of a directory; there is none if the
// directory holds nothing to record.
func (w *walker) subdir(r *os.Root, path []string, rules []rule) (entry, bool, error) {
	name := path[len(path)-1]
	sub, err := OpenDir(r, name)
	if err != nil {
		return entry{}, false, err
	}
	defer sub.Close()
	es, err := w.dir(sub, path, rules)
	if err != nil || len(es) == 0 {
		return entry{}, false, err
	}
	e := entry{name: name, mode: modeTree}
	if w.hash {
		e.id = treeID(es)
	}
	return e, true, nil
}

// symlink returns the entry of a symbolic link, whose blob is its target.
func (w *walker) symlink(r *os.Root, path []string) (entry, bool, error) {
	name := path[len(path)-1]
	e := entry{name: name, mode: modeSymlink}
	if !w.hash {
		w.files = append(w.files, strings.Join(path, "/"))
		return e, true, nil
	}
	target, err := r.Readlink(name)
	if err != nil {
		return entry{}, false, err
	}
	e.id = hashObject("blob", []byte(target))
	return e, true, nil
}

// file returns the entry of a regular file whose lstat result is fi.
func (w *walker) file(r *os.Root, path []string, fi fs.FileInfo) (entry, bool, error) {
	name := path[len(path)-1]
	e := entry{name: name, mode: modeFile}
	if fi.Mode()&0o100 != 0 {
		e.mode = modeExec
	}
	rel := strings.Join(path, "/")
	if !w.hash {
		w.files = append(w.files, rel)
		return e, true, nil
	}
	var err error
	e.id, err = w.blob(r, name, rel, fi)
	if err != nil {
		return entry{}, false, fmt.Errorf("hash %q: %w", rel, err)
	}
	return e, true, nil
}

// blob returns the blob id of the regular file name in r, from the cache
// when its stat allows it, else by reading it (retrying if it changes
// while being read).
func (w *walker) blob(r *os.Root, name, rel string, fi fs.FileInfo) (objectID, error) {
	if e, ok := w.prev[rel]; ok && e.usable(keyOf(fi)) {
		w.next[rel] = e
		return e.id, nil
	}
	var err error
	for range maxAttempts {
		var id objectID
		var key statKey
		id, key, err = w.readBlob(r, name, keyOf(fi).ino)
		if err == nil {
			w.next[rel] = cacheEntry{key: key, id: id, stamp: w.start}
			return id, nil
		}
		if !errors.Is(err, errChanged) {
			return objectID{}, err
		}
		if fi, err = r.Lstat(name); err != nil {
			return objectID{}, err
		}
	}
	return objectID{}, err
}

// readBlob hashes the regular file name in r, which lstat found with inode ino,
// and returns its id with the stat key of what was read.
func (w *walker) readBlob(r *os.Root, name string, ino uint64) (objectID, statKey, error) {
	w.reads.Add(1)
	f, fi, err := OpenFile(r, name)
	if errors.Is(err, ErrNotRegular) {
		return objectID{}, statKey{}, errChanged // replaced since lstat
	}
	if err != nil {
		return objectID{}, statKey{}, err
	}
	defer f.Close()
	key := keyOf(fi)
	if key.ino != ino {
		return objectID{}, statKey{}, errChanged // replaced since lstat
	}
	h := sha1.New()
	h.Write(objectHeader("blob", key.size))
	n, err := io.Copy(h, io.LimitReader(f, key.size+1))
	if err != nil {
		return objectID{}, statKey{}, err
	}
	if n != key.size {
		return objectID{}, statKey{}, errChanged
	}
	return objectID(h.Sum(nil)), key, nil
}
