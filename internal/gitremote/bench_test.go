package gitremote_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/loop-action/loop-action/internal/gitremote"
)

// BenchmarkReceivePack measures the push exchange a checkpoint of the
// branch store makes, alone: one receive-pack exchange over file:// (git
// receive-pack, which runs unpack-objects, a connectivity check and gc
// --auto as child processes) moving a branch by one commit of 18 new
// objects, as a save sends. "git-process" is the floor: starting and
// waiting for one git process (git version). A save's cost minus "push"
// is the store's own work (BenchmarkBranchSave in package state).
func BenchmarkReceivePack(b *testing.B) {
	b.Run("push", func(b *testing.B) {
		bare := filepath.Join(b.TempDir(), "state.git")
		if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			b.Fatalf("git init: %v\n%s", err, out)
		}
		r, err := gitremote.Open("file://"+bare, "")
		if err != nil {
			b.Fatal(err)
		}
		s := memory.NewStorage()
		ref := plumbing.NewBranchReferenceName("loop-state")
		head, n := plumbing.ZeroHash, 0
		for b.Loop() {
			next, objs := commit(b, s, head, n)
			if err := r.Push(b.Context(), s, ref, head, next, objs); err != nil {
				b.Fatal(err)
			}
			head, n = next, n+1
		}
	})
	b.Run("git-process", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("git", "version").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// commit stores a commit on parent whose tree holds 16 new blobs, and
// returns it and its 18 objects.
func commit(b *testing.B, s *memory.Storage, parent plumbing.Hash, n int) (plumbing.Hash, []plumbing.Hash) {
	b.Helper()
	var objs []plumbing.Hash
	tree := &object.Tree{}
	for i := range 16 {
		h := store(b, s, blob(fmt.Sprintf("save %d file %d\n", n, i)))
		objs = append(objs, h)
		tree.Entries = append(tree.Entries, object.TreeEntry{Name: fmt.Sprintf("f%02d", i), Mode: filemode.Regular, Hash: h})
	}
	sig := object.Signature{Name: "bench", Email: "bench@example.com", When: time.Unix(int64(n), 0)}
	c := &object.Commit{Author: sig, Committer: sig, Message: "checkpoint\n", TreeHash: store(b, s, tree)}
	if !parent.IsZero() {
		c.ParentHashes = []plumbing.Hash{parent}
	}
	h := store(b, s, c)
	return h, append(objs, c.TreeHash, h)
}

// blob is a blob object holding text.
type blob string

func (t blob) Encode(o plumbing.EncodedObject) error {
	o.SetType(plumbing.BlobObject)
	w, err := o.Writer()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(t)); err != nil {
		return err
	}
	return w.Close()
}

// store encodes v into s and returns its id.
func store(b *testing.B, s *memory.Storage, v interface {
	Encode(plumbing.EncodedObject) error
}) plumbing.Hash {
	b.Helper()
	obj := s.NewEncodedObject()
	if err := v.Encode(obj); err != nil {
		b.Fatal(err)
	}
	h, err := s.SetEncodedObject(obj)
	if err != nil {
		b.Fatal(err)
	}
	return h
}
