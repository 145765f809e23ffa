package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/objfile"
	"github.com/go-git/go-git/v5/plumbing/hash"

	"github.com/loop-action/loop-action/internal/guard"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The root's repository can make git run commands from a handful of
// files in .git (guard.GitGuarded). The runner guards those files around
// every wave and every measurement, so nothing an agent plants there is
// ever read by the git of a check, and gives checks GitEnv besides.

// gitKeep is guard.GitGuarded for a path of the root (.git/...).
func gitKeep(rel string) bool {
	inner, ok := strings.CutPrefix(rel, ".git/")
	return ok && guard.GitGuarded(inner)
}

// scanGit records the root's .git itself (a directory, or a file holding
// a gitdir: pointer, or a link) and, when it is a real directory, the
// guarded files in it, reading again only those c does not vouch for. A
// root without .git records nothing, so a .git that appears later is seen
// as created.
func scanGit(ctx context.Context, w *workspace.Writer, out map[string]workspace.Entry, c *workspace.ScanCache) error {
	e, ok, err := w.Lookup(".git")
	if err != nil || !ok {
		return err
	}
	out[".git"] = e
	if !e.Mode.IsDir() {
		return nil
	}
	files, err := w.ScanCached(ctx, ".git", guard.GitDescend, gitKeep, c)
	maps.Copy(out, files)
	return err
}

// refsKeep says which paths of the root's .git a wave of isolated nodes
// may not change either: HEAD, the index, packed-refs, the shallow list
// and refs/. Isolated nodes have repositories of their own; one that
// reaches the root's (a worktree's .git turned into a link to it, say)
// could otherwise leave a branch, move HEAD or stage files there (which
// a check's git diff would then not show).
func refsKeep(rel string) bool {
	switch rel {
	case ".git/HEAD", ".git/index", ".git/packed-refs", ".git/shallow":
		return true
	}
	return refsDescend(rel)
}

func refsDescend(rel string) bool { return rel == ".git/refs" || strings.HasPrefix(rel, ".git/refs/") }

// scanRefs records the paths refsKeep selects.
func scanRefs(ctx context.Context, root string) guardState {
	w, err := workspace.OpenWriter(root)
	if err != nil {
		return guardState{err: err}
	}
	defer w.Close()
	files, err := w.Scan(ctx, ".git", refsDescend, refsKeep)
	return guardState{files: files, err: err}
}

// scanObjects lists the entries of the root's object directory and of
// its subdirectories (fan-out, pack, info) by lstat, never reading a
// file (packs are large) nor following a link nor blocking on a named
// pipe. A directory's own stat is left out (it changes with its entries);
// an objects that is not a directory is recorded as what it is. A root
// whose .git is not a directory has none.
func scanObjects(root string) (map[string]workspace.StatKey, error) {
	out := map[string]workspace.StatKey{}
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err != nil || !fi.IsDir() {
		return out, nil
	}
	base := filepath.Join(root, ".git", "objects")
	fi, err := os.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return out, nil
	case err != nil:
		return nil, err
	case !fi.IsDir():
		out[".git/objects"] = workspace.KeyOf(fi)
		return out, nil
	}
	out[".git/objects"] = workspace.StatKey{}
	top, err := workspace.ListDir(base)
	if err != nil {
		return nil, err
	}
	for _, e := range top {
		rel := ".git/objects/" + e.Name()
		if err := addObject(out, rel, e); err != nil || !e.IsDir() {
			if err != nil {
				return nil, err
			}
			continue
		}
		sub, err := workspace.ListDir(filepath.Join(base, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			delete(out, rel) // removed since it was listed
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, f := range sub {
			if err := addObject(out, rel+"/"+f.Name(), f); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

func addObject(out map[string]workspace.StatKey, rel string, e fs.DirEntry) error {
	if e.IsDir() {
		out[rel] = workspace.StatKey{}
		return nil
	}
	fi, err := e.Info()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out[rel] = workspace.KeyOf(fi)
	return err
}

// Which changes to the object store are changes. A loose object's file
// is named by the id of its content, and a pack by the checksum its .idx
// records (which is also the pack's trailer, and, since git 1.8.5, its
// name): a file of either kind whose stat changed still holds what it
// held when its content still hashes to that. Git freshens (sets the
// mtime of) every object it would write and finds already there, in an
// alternate too: an isolated agent that runs git commit in its worktree
// touches the root's loose objects and packs that way, and that is no
// change. Only the .pack is ever freshened. Everything else in the store
// (.idx, .rev, .bitmap, .keep, .promisor, .mtimes, info/,
// multi-pack-index, commit-graph) is not named by its content, and an
// .idx or .rev rewritten could point an id at other bytes: a change of
// its stat is a change, which cannot be put back (its content was not
// kept). So a pack rewritten together with its .idx still escalates, over
// the .idx. The same goes for an object of a SHA-256 repository, which is
// checked with SHA-1 and so never matches: that fails closed.

// maxInflate bounds how much a loose object's declared size may exceed
// its compressed size: deflate expands at most about 1032 times, so a
// header that declares more is no object git wrote, and is not inflated.
const maxInflate = 1100

// intactObject reports whether the file rel of the root's object store
// (.git/objects/...), whose stat changed during a wave, still holds the
// content its name stands for: a loose object whose inflated content
// hashes to its id, ending where its zlib stream ends, or a pack whose
// checksum matches its trailer and the one its .idx records. It reads
// regular files only, without following a link or blocking on a pipe,
// hashing each once where go-git's storers would parse and load it.
func intactObject(objects *os.Root, rel string) bool {
	name, ok := strings.CutPrefix(rel, ".git/objects/")
	if !ok || objects == nil {
		return false
	}
	if dir, file, ok := strings.Cut(name, "/"); ok && len(dir) == 2 && len(file) == 38 {
		id, err := hex.DecodeString(dir + file)
		return err == nil && intactLoose(objects, name, plumbing.Hash(id))
	}
	if sum, ok := strings.CutPrefix(name, "pack/pack-"); ok && strings.HasSuffix(sum, ".pack") && !strings.Contains(sum, "/") {
		return intactPack(objects, name)
	}
	return false
}

// openRegular opens name in objects when it is a regular file itself (not
// a link to one).
func openRegular(objects *os.Root, name string) (*os.File, fs.FileInfo, bool) {
	lfi, err := objects.Lstat(name)
	if err != nil || !lfi.Mode().IsRegular() {
		return nil, nil, false
	}
	f, fi, err := workspace.OpenFile(objects, name)
	if err != nil {
		return nil, nil, false
	}
	if !os.SameFile(lfi, fi) {
		f.Close()
		return nil, nil, false
	}
	return f, fi, true
}

// intactLoose reports whether the loose object file name inflates to
// content whose id is id, with nothing after its zlib stream (git refuses
// to read such an object).
func intactLoose(objects *os.Root, name string, id plumbing.Hash) bool {
	f, fi, ok := openRegular(objects, name)
	if !ok {
		return false
	}
	defer f.Close()
	br := bufio.NewReader(f) // a byte reader: inflating never reads past the stream
	r, err := objfile.NewReader(br)
	if err != nil {
		return false
	}
	defer r.Close()
	_, size, err := r.Header()
	if err != nil || size > maxInflate*(fi.Size()+64) {
		return false
	}
	n, err := io.Copy(io.Discard, io.LimitReader(r, size+1))
	if err != nil || n != size { // n == size: the stream ended there, its checksum verified
		return false
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return false
	}
	return r.Hash() == id
}

// intactPack reports whether the pack file name hashes to its trailer,
// and that trailer is the pack checksum its .idx records. It reads the
// whole pack: a wave in which a pack was freshened costs one SHA-1 pass
// over it (with collision detection, as git hashes), a few seconds for a
// pack of a GiB, beside agents' minutes.
func intactPack(objects *os.Root, name string) bool {
	want, ok := idxPackSum(objects, strings.TrimSuffix(name, ".pack")+".idx")
	if !ok {
		return false
	}
	f, fi, ok := openRegular(objects, name)
	if !ok {
		return false
	}
	defer f.Close()
	body := fi.Size() - int64(len(want))
	if body < 12 {
		return false
	}
	h := hash.New(crypto.SHA1)
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, body)); err != nil {
		return false
	}
	trailer := make([]byte, len(want))
	if _, err := f.ReadAt(trailer, body); err != nil {
		return false
	}
	return bytes.Equal(h.Sum(nil), trailer) && bytes.Equal(trailer, want)
}

// idxPackSum returns the pack checksum a pack index records: the first
// half of its trailer (the second is the index's own checksum).
func idxPackSum(objects *os.Root, name string) ([]byte, bool) {
	f, fi, ok := openRegular(objects, name)
	if !ok {
		return nil, false
	}
	defer f.Close()
	sum := make([]byte, crypto.SHA1.Size())
	if fi.Size() < int64(2*len(sum)) {
		return nil, false
	}
	if _, err := f.ReadAt(sum, fi.Size()-int64(2*len(sum))); err != nil {
		return nil, false
	}
	return sum, true
}
