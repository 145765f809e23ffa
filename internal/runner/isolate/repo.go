package isolate

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/loop-action/loop-action/internal/workspace"
)

// rootRepo is what a node's repository borrows from the loop root's: its
// object store (read only, through objects/info/alternates), its HEAD
// commit as the parent of the node's base, and its shallow list.
type rootRepo struct {
	objects string        // absolute path of the root's object directory
	head    plumbing.Hash // zero when HEAD is unborn
	branch  string        // the branch HEAD names, "" when detached or unusable here
	shallow []byte        // the root's shallow file, nil if none
	blobs   map[workspace.ObjectID]bool
}

// errNoRepo says the loop root has no repository a node's can borrow
// from: worktrees are then plain copies.
var errNoRepo = errors.New("no git repository")

// readRepo reads the loop root's repository, reusing prev's blob list
// when HEAD has not moved. It returns errNoRepo when the root has no
// .git, or one whose objects a SHA-1 index cannot name (objectformat).
func readRepo(root string, prev *rootRepo) (r *rootRepo, err error) {
	defer func() { // hostile objects must not take the runner down
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("read the loop root's repository: %v", p)
		}
	}()
	repo, err := workspace.OpenRepo(root)
	switch {
	case errors.Is(err, workspace.ErrNotRegular): // a commondir an agent made a pipe, say
		return nil, fmt.Errorf("the loop root's repository: %w", err)
	case err != nil:
		return nil, fmt.Errorf("%w: %w", errNoRepo, err)
	case strings.ContainsAny(repo.Common, "\n\r\""):
		return nil, errNoRepo // an alternates line could not name it
	}
	if err := checkRepoFiles(repo.GitDir, repo.Common); err != nil {
		return nil, fmt.Errorf("the loop root's repository: %w", err)
	}
	if cfg, err := repo.Config(); err != nil || !sha1Repo(cfg.Raw.Section("extensions").Option("objectformat")) {
		return nil, errNoRepo
	}
	r = &rootRepo{objects: filepath.Join(repo.Common, "objects")}
	if r.shallow, err = workspace.ReadGitFile(filepath.Join(repo.Common, "shallow")); err != nil {
		return nil, err
	}
	if err := r.readHead(repo, prev); err != nil {
		return nil, fmt.Errorf("read the loop root's HEAD: %w", err)
	}
	return r, nil
}

func sha1Repo(format string) bool { return format == "" || strings.EqualFold(format, "sha1") }

// readHead reads HEAD, the branch it names and the blobs of its tree.
func (r *rootRepo) readHead(repo *workspace.Repo, prev *rootRepo) error {
	ref, err := repo.Storer.Reference(plumbing.HEAD)
	if err != nil {
		return err
	}
	if ref.Type() == plumbing.SymbolicReference && branchName.MatchString(ref.Target().String()) && !strings.Contains(ref.Target().String(), "..") {
		r.branch = ref.Target().String()
	}
	head, err := repo.Head()
	if errors.Is(err, plumbing.ErrReferenceNotFound) {
		r.blobs = map[workspace.ObjectID]bool{} // unborn: no history yet
		return nil
	}
	if err != nil {
		return err
	}
	r.head = head.Hash()
	if prev != nil && prev.head == r.head {
		r.blobs = prev.blobs
		return nil
	}
	c, err := repo.CommitObject(r.head)
	if err != nil {
		return err
	}
	tree, err := c.Tree()
	if err != nil {
		return err
	}
	r.blobs, err = treeBlobs(tree)
	return err
}

// branchName is a conservative subset of git's branch names: anything
// else leaves the node's HEAD detached.
var branchName = regexp.MustCompile(`^refs/heads/[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)

// treeBlobs returns the ids of the files and links of tree and below.
func treeBlobs(tree *object.Tree) (map[workspace.ObjectID]bool, error) {
	out := map[workspace.ObjectID]bool{}
	w := object.NewTreeWalker(tree, true, nil)
	defer w.Close()
	for {
		_, e, err := w.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if e.Mode == filemode.Regular || e.Mode == filemode.Executable || e.Mode == filemode.Symlink {
			out[workspace.ObjectID(e.Hash)] = true
		}
	}
}
