package isolate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	gogit "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"

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
	gitdir, common, err := gitDirs(root)
	if err != nil {
		return nil, err
	}
	if err := checkRepoFiles(gitdir, common); err != nil {
		return nil, fmt.Errorf("the loop root's repository: %w", err)
	}
	repo, err := openRepo(root, gitdir, common)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoRepo, err)
	}
	if cfg, err := repo.Config(); err != nil || !sha1Repo(cfg.Raw.Section("extensions").Option("objectformat")) {
		return nil, errNoRepo
	}
	r = &rootRepo{objects: filepath.Join(common, "objects")}
	if r.shallow, err = readSmall(filepath.Join(common, "shallow")); err != nil {
		return nil, err
	}
	if err := r.readHead(repo, prev); err != nil {
		return nil, fmt.Errorf("read the loop root's HEAD: %w", err)
	}
	return r, nil
}

func sha1Repo(format string) bool { return format == "" || strings.EqualFold(format, "sha1") }

// openRepo opens the repository of root, whose git directory is gitdir
// and common directory common (see gitDirs), following the object
// directories objects/info/alternates names wherever they are, as git
// does: go-git's plain open resolves every alternate inside the git
// directory, so an absolute one (hook loop mode's isolated checkout
// borrows the user's objects so) was not found, nor the commits in it.
func openRepo(root, gitdir, common string) (*gogit.Repository, error) {
	var dot billy.Filesystem = osfs.New(gitdir)
	if common != gitdir {
		dot = dotgit.NewRepositoryFilesystem(dot, osfs.New(common))
	}
	s := filesystem.NewStorageWithOptions(dot, cache.NewObjectLRUDefault(),
		filesystem.Options{AlternatesFS: osfs.New(string(filepath.Separator))})
	return gogit.Open(s, osfs.New(root))
}

// gitDirs returns the absolute paths of the root's git directory (.git,
// or the directory a gitdir: file names) and of its common directory
// (the same, or what its commondir file names).
func gitDirs(root string) (gitdir, common string, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	gitdir = filepath.Join(abs, ".git")
	fi, err := os.Lstat(gitdir)
	if err != nil || (!fi.IsDir() && !fi.Mode().IsRegular()) {
		return "", "", errNoRepo
	}
	if fi.Mode().IsRegular() {
		b, err := readSmall(gitdir)
		line, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if err != nil || !ok {
			return "", "", errNoRepo
		}
		gitdir = resolveDir(abs, strings.TrimSpace(line))
	}
	common = gitdir
	if b, err := readSmall(filepath.Join(gitdir, "commondir")); err == nil && b != nil {
		common = resolveDir(gitdir, strings.TrimSpace(string(b)))
	}
	if fi, err := os.Lstat(filepath.Join(gitdir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return "", "", errNoRepo
	}
	if strings.ContainsAny(common, "\n\r\"") {
		return "", "", errNoRepo // an alternates line could not name it
	}
	return gitdir, common, nil
}

func resolveDir(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// readHead reads HEAD, the branch it names and the blobs of its tree.
func (r *rootRepo) readHead(repo *gogit.Repository, prev *rootRepo) error {
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
