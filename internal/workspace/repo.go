package workspace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/go-git/go-git/v5/storage/filesystem/dotgit"
)

// Repo is the repository of a loop root, opened by [OpenRepo].
type Repo struct {
	*git.Repository
	GitDir string // absolute: the root's .git, or the directory its gitdir: file names
	Common string // where its objects, refs and config are: GitDir, or what its commondir file names
}

// OpenRepo opens the repository of the loop root for reading. Agents can
// put a named pipe where git keeps an object or a ref, which go-git's
// plain open would wait on forever: every file of the git, common and
// alternate directories is opened non-blocking (a pipe reads as empty).
// .git may be a gitdir: file, whose commondir is followed as git does,
// and alternates are followed wherever they are (go-git's plain open
// looks inside the git directory only). A root whose .git is absent, a
// link, or names no directory with a HEAD has none
// ([git.ErrRepositoryNotExists]).
func OpenRepo(root string) (*Repo, error) {
	gitdir, common, err := gitDirs(root)
	if err != nil {
		return nil, err
	}
	var dot billy.Filesystem = nonBlocking{osfs.New(gitdir)}
	if common != gitdir {
		dot = dotgit.NewRepositoryFilesystem(dot, nonBlocking{osfs.New(common)})
	}
	st := filesystem.NewStorageWithOptions(dot, cache.NewObjectLRUDefault(),
		filesystem.Options{AlternatesFS: nonBlocking{osfs.New(string(filepath.Separator))}})
	repo, err := git.Open(st, nil)
	if err != nil {
		return nil, err
	}
	return &Repo{Repository: repo, GitDir: gitdir, Common: common}, nil
}

// gitDirs returns the absolute paths of the root's git and common
// directories.
func gitDirs(root string) (gitdir, common string, err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", "", err
	}
	gitdir = filepath.Join(abs, ".git")
	fi, err := os.Lstat(gitdir)
	switch {
	case errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() && !fi.Mode().IsRegular():
		return "", "", git.ErrRepositoryNotExists
	case err != nil:
		return "", "", err
	case fi.Mode().IsRegular():
		b, err := ReadGitFile(gitdir)
		line, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
		if err != nil || !ok {
			return "", "", fmt.Errorf("%w: %q holds no gitdir: line (%v)", git.ErrRepositoryNotExists, gitdir, err)
		}
		gitdir = resolveDir(abs, strings.TrimSpace(line))
	}
	common = gitdir
	b, err := ReadGitFile(filepath.Join(gitdir, "commondir"))
	if err != nil {
		return "", "", err
	}
	if b != nil {
		common = resolveDir(gitdir, strings.TrimSpace(string(b)))
	}
	if fi, err := os.Lstat(filepath.Join(gitdir, "HEAD")); err != nil || !fi.Mode().IsRegular() {
		return "", "", git.ErrRepositoryNotExists
	}
	return gitdir, common, nil
}

// resolveDir is p as a git file in base names it.
func resolveDir(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// maxGitFile bounds what ReadGitFile reads.
const maxGitFile = 1 << 20

// ReadGitFile reads the small file name (an absolute path) of a git
// directory, nil when there is none. It refuses without blocking a link
// and anything but a regular file ([ErrNotRegular]), and over 1 MiB.
func ReadGitFile(name string) ([]byte, error) {
	lfi, err := os.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return nil, nil
	case err != nil:
		return nil, err
	case !lfi.Mode().IsRegular():
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !os.SameFile(lfi, fi) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular} // swapped since the lstat
	}
	return readLimited(f, lfi.Size(), name, maxGitFile)
}

// nonBlocking is a file system opening files for reading with O_NONBLOCK.
type nonBlocking struct{ billy.Filesystem }

func (n nonBlocking) Open(name string) (billy.File, error) {
	return n.OpenFile(name, os.O_RDONLY, 0)
}

func (n nonBlocking) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		flag |= syscall.O_NONBLOCK
	}
	return n.Filesystem.OpenFile(name, flag, perm)
}

func (n nonBlocking) Chroot(path string) (billy.Filesystem, error) {
	sub, err := n.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return nonBlocking{sub}, nil
}
