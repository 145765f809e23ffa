package delivery

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/secret"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Identity is a commit's author and committer.
type Identity struct{ Name, Email string }

// Spec says what to deliver.
type Spec struct {
	Root     string                // the loop root: its files are what is delivered; its .git holds Base
	Base     string                // the parent commit (full sha), present in Root's .git (a shallow clone is enough)
	Snapshot string                // the snapshot the root must equal now (the certified one); "" skips the check (partial work)
	Exclude  func(rel string) bool // paths never delivered (asked of each changed file or link, slash-separated); nil excludes nothing
	Message  string                // the full commit message, trailers included
	Author   Identity              // also the committer
	When     time.Time
	// Secrets are the provider secrets of the run: when a file the
	// delivery would change holds a form of one, Build fails with an
	// *secret.HeldError (naming the file and the variable, never
	// the value) and nothing is delivered.
	Secrets []secret.Secret
	// Checkout is the loop root's git settings (core.autocrlf, core.eol),
	// with which its files are cleaned into the delivered blobs, and the
	// largest file the root's snapshot holds; its Base is the base commit's
	// tree, whatever it says.
	Checkout workspace.Checkout
}

// Change is one path a delivery changes against its base.
type Change struct {
	Path string
	Kind string // "added", "modified", "deleted", "mode", "type"
}

// Kinds of Change.
const (
	Added    = "added"
	Modified = "modified" // the content changed (its mode may have too)
	Deleted  = "deleted"
	Mode     = "mode" // only the execute bit changed
	Type     = "type" // a file became a symbolic link, or the reverse, or replaced a directory
)

// Delivery is a commit built from the root, in memory, not pushed yet.
type Delivery struct {
	SHA, Tree string   // the commit and its tree: the base's tree with the changes (see Snapshot for what its checkout is)
	Changes   []Change // what it changes against Base, by path
	Excluded  []Change // what the root changes against Base that Exclude kept out (never delivered)
	// Snapshot is the snapshot of a checkout of the commit (see
	// CommitSnapshot), which the status rule compares with the certified
	// one: equal when nothing was excluded, unless the root's ignore rules
	// changed which of the base's tracked files a checkout shows. A
	// delivery that changes nothing has the base's tree: the caller
	// decides whether such a commit is worth pushing.
	Snapshot string

	st             *overlay
	repo           *git.Repository // the root's, only read
	root           string
	base, baseTree plumbing.Hash
	view           plumbing.Hash // the snapshot of a checkout of the base
	th             *workspace.TreeHasher
	commit, tree   plumbing.Hash
	baseFiles      *workspace.Smudger // Apply: what a checkout of the base writes
	wsFiles        *workspace.Smudger // and of the workspace
}

// ErrHidden is wrapped by the error of a Build whose root keeps a file
// the base tracks but its ignore rules now hide (an agent added it to a
// .gitignore): the snapshot leaves it out, so the commit would delete a
// file the gate's checks had on disk. Nothing is built.
var ErrHidden = errors.New("a file the base tracks is hidden by the loop root's ignore rules")

// ErrRootMoved is wrapped by the error of a Build whose loop root is not
// the snapshot it must deliver.
var ErrRootMoved = errors.New("the loop root is not the certified snapshot")

// Build builds the delivery s describes (see the package doc).
func Build(ctx context.Context, s Spec) (_ *Delivery, err error) {
	defer wrap(&err, "build the delivery on %s", phrase.Short(s.Base))
	if err := checkSpec(s); err != nil {
		return nil, err
	}
	d, err := open(ctx, s.Root, s.Base)
	if err != nil {
		return nil, err
	}
	// The root's files become the delivered blobs as `git add` in a
	// checkout of the base makes them: its index is the base's tree.
	k := s.Checkout
	k.Base = workspace.TreeBase(d.st, d.baseTree)
	snap, err := workspace.NewHasherWith(s.Root, k).WriteObjects(ctx, d.st)
	if err != nil {
		return nil, err
	}
	if s.Snapshot != "" && string(snap) != s.Snapshot {
		return nil, fmt.Errorf("%w: it is at %s, not %s: it changed since the gate measured it", ErrRootMoved, snap.Short(), phrase.Short(s.Snapshot))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := d.apply(s, hashOf(snap)); err != nil {
		return nil, err
	}
	if err := d.commitTo(s); err != nil {
		return nil, err
	}
	got, err := d.th.Snapshot(ctx, d.tree)
	if err != nil {
		return nil, err
	}
	d.Snapshot = string(got)
	return d, nil
}

// open reads the base commit from the repository of root (the
// delivery's objects are read from there and then from more) and hashes
// a checkout of it.
func open(ctx context.Context, root, base string, more ...storer.EncodedObjectStorer) (*Delivery, error) {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("open the repository of %q: %w", root, err)
	}
	d := &Delivery{st: newOverlay(append([]storer.EncodedObjectStorer{repo.Storer}, more...)...), repo: repo, root: root, base: plumbing.NewHash(base)}
	c, err := object.GetCommit(d.st, d.base)
	if err != nil {
		return nil, fmt.Errorf("commit %s is not in the repository of %q: %w", phrase.Short(base), root, err)
	}
	d.baseTree = c.TreeHash
	if d.th, err = workspace.NewTreeHasher(root, d.st); err != nil {
		return nil, err
	}
	view, err := d.th.Snapshot(ctx, c.TreeHash)
	d.view = hashOf(view)
	return d, err
}

// checkSpec refuses a spec that cannot make a commit.
func checkSpec(s Spec) error {
	switch {
	case s.Root == "":
		return errors.New("no loop root")
	case !fullSHA(s.Base):
		return fmt.Errorf("base %q is not a full commit id", s.Base)
	case s.Snapshot != "" && !fullSHA(s.Snapshot):
		return fmt.Errorf("snapshot %q is not a full tree id", s.Snapshot)
	case strings.TrimSpace(s.Message) == "":
		return errors.New("no commit message")
	}
	return checkIdentity(s.Author)
}

func checkIdentity(id Identity) error {
	if strings.TrimSpace(id.Name) == "" || strings.TrimSpace(id.Email) == "" ||
		strings.ContainsAny(id.Name+id.Email, "<>\n\x00") {
		return fmt.Errorf("author %q <%q>: want a name and an email without <, > or line breaks", id.Name, id.Email)
	}
	return nil
}

// wrap says, when *err is set, what failed: format and args name it.
func wrap(err *error, format string, args ...any) {
	if *err != nil {
		*err = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *err)
	}
}

// fullSHA reports whether s is 40 lowercase hex digits.
func fullSHA(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && len(s) == 40 && strings.ToLower(s) == s
}

func hashOf(s workspace.Snapshot) plumbing.Hash { return plumbing.NewHash(string(s)) }

// commitTo stores the commit of the delivered tree on the base.
func (d *Delivery) commitTo(s Spec) error {
	sig := object.Signature{Name: s.Author.Name, Email: s.Author.Email, When: s.When}
	c := &object.Commit{Author: sig, Committer: sig, Message: s.Message, TreeHash: d.tree, ParentHashes: []plumbing.Hash{d.base}}
	obj := d.st.NewEncodedObject()
	if err := c.Encode(obj); err != nil {
		return err
	}
	h, err := d.st.SetEncodedObject(obj)
	d.commit, d.SHA, d.Tree = h, h.String(), d.tree.String()
	return err
}

// sortChanges orders changes by path.
func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}
