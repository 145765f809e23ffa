package isolate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/loop-action/loop-action/internal/workspace"
)

// go-git opens the root repository's files with a plain open, which
// blocks on a named pipe. Agents can put one there (an isolated node's by
// an absolute path, a node in the root directly), and the process guard
// only ends them with their node, so before go-git reads anything,
// checkRepoFiles makes sure that every file it may open is a regular file
// (or absent) and every directory a directory, without following links
// and without blocking. The Manager reads the repository only between
// waves (see BeginIteration), when no agent runs that could swap one in.

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
	head, err := readSmall(filepath.Join(gitdir, "HEAD"))
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
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
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
	alternates, err := readSmall(filepath.Join(dir, "info", "alternates"))
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
		if err := checkObjects(resolveDir(dir, line), false); err != nil {
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

// readSmall reads a regular file of the root's git directory (nil if
// there is none) without following a link or blocking on a named pipe,
// refusing anything larger than a shallow list can sensibly be.
func readSmall(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|oNoFollow|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%q %w", name, errNotPlain)
	case fi.Size() > 1<<20:
		return nil, fmt.Errorf("%q is larger than 1 MiB", name)
	}
	return io.ReadAll(io.LimitReader(f, 1<<20))
}
