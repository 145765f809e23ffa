package isolate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// workspace.OpenRepo reads the root's repository without blocking, but
// a named pipe it reads as empty and a link it follows mislead it, and a
// node's own git, which borrows the root's objects through alternates,
// would block on a pipe there. Agents can put one there (an isolated
// node's by an absolute path, a node in the root directly), and the
// process guard only ends them with their node, so before a node is
// given the root's objects, checkRepoFiles makes sure that every file git
// may open is a regular file (or absent) and every directory a directory,
// without following links and without blocking. The Manager reads the
// repository only between waves (see BeginIteration), when no agent runs
// that could swap one in.

// errNotPlain says a file of the root's repository is not what git keeps
// there: reading the repository could block or be misled.
var errNotPlain = errors.New("is not a regular file")

// checkRepoFiles checks the files of the root repository whose git
// directory is gitdir and common directory common that go-git may open
// to read HEAD and its trees.
func checkRepoFiles(gitdir, common string) error {
	names := []string{
		filepath.Join(gitdir, "HEAD"), filepath.Join(gitdir, "commondir"), filepath.Join(gitdir, "config.worktree"),
		filepath.Join(common, "config"), filepath.Join(common, "packed-refs"), filepath.Join(common, "shallow"),
	}
	head, err := workspace.ReadGitFile(filepath.Join(gitdir, "HEAD"))
	if err != nil {
		return err
	}
	if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
		if strings.Contains(ref, "..") {
			return fmt.Errorf("HEAD names %q", ref)
		}
		names = append(names, filepath.Join(gitdir, filepath.FromSlash(ref)), filepath.Join(common, filepath.FromSlash(ref)))
	}
	for _, name := range names {
		if err := plainFile(name); err != nil {
			return err
		}
	}
	return checkObjects(filepath.Join(common, "objects"), true)
}

// plainFile reports an error unless name is absent or a regular file.
func plainFile(name string) error {
	fi, err := os.Lstat(name)
	switch {
	case missing(err):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%q %w", name, errNotPlain)
	}
	return nil
}

// checkObjects checks an object directory: its fan-out directories and
// pack directory hold only regular files, and so do those of the object
// directories its alternates file names (one level: an alternate with
// alternates of its own is refused).
func checkObjects(dir string, top bool) error {
	entries, err := workspace.ListDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := filepath.Join(dir, e.Name())
		if e.Type()&fs.ModeSymlink != 0 || !e.IsDir() && !e.Type().IsRegular() {
			return fmt.Errorf("%q %w", name, errNotPlain)
		}
		if !e.IsDir() {
			continue
		}
		if err := checkDirFiles(name); err != nil {
			return err
		}
	}
	alternates, err := workspace.ReadGitFile(filepath.Join(dir, "info", "alternates"))
	if err != nil || alternates == nil {
		return err
	}
	if !top {
		return fmt.Errorf("%q: alternates of an alternate are not followed", dir)
	}
	for _, line := range strings.Split(string(alternates), "\n") {
		if line = strings.TrimSpace(line); line == "" || line[0] == '#' {
			continue
		}
		if err := checkObjects(alternate(dir, line), false); err != nil {
			return err
		}
	}
	return nil
}

// checkDirFiles reports an error unless every entry of dir is a regular
// file (info/ may also hold directories: they are not read). A dir gone
// since its parent was listed holds nothing: git gc, which the user's git
// may run in the background after a commit, removes the fan-out
// directories it has packed.
func checkDirFiles(dir string) error {
	entries, err := workspace.ListDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if filepath.Base(dir) == "info" && e.IsDir() {
			continue
		}
		if !e.Type().IsRegular() {
			return fmt.Errorf("%q %w", filepath.Join(dir, e.Name()), errNotPlain)
		}
	}
	return nil
}

// alternate is the object directory a line of the alternates file of dir
// names: as it is when absolute, else relative to dir, as git reads it.
func alternate(dir, line string) string {
	if filepath.IsAbs(line) {
		return filepath.Clean(line)
	}
	return filepath.Join(dir, line)
}
