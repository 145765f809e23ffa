package runner

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/workspace"
)

// The job's file commands. The Actions runner gives every step files that
// it acts on once the step ends: a line in GITHUB_ENV sets a variable for
// every later step (BASH_ENV=… runs code in each of them, with their
// secrets), GITHUB_PATH prepends to their PATH, GITHUB_OUTPUT sets the
// step's outputs, GITHUB_STATE its post-step state and GITHUB_STEP_SUMMARY
// its job summary. They are the job's, never an agent's: agents and checks
// run without the variables, and the files are put back as they were
// after every wave and when Run returns, since an agent finds them without
// the variables (in a container they are /github/file_commands/*).
var fileCommandVars = []string{"GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY"}

// WithoutFileCommands returns env without the variables that name the
// job's file-command files: the environment agents, checks and the metrics
// command get. The result is never nil: a nil env is an empty one, so that
// nothing is inherited from this process.
func WithoutFileCommands(env []string) []string {
	// Every spelling goes, even where names are case-sensitive: dropping
	// a variable no one reads costs nothing.
	return environ.Env(env).WithoutFunc(func(name string) bool {
		return slices.ContainsFunc(fileCommandVars, func(v string) bool { return strings.EqualFold(v, name) })
	})
}

// FileCommands holds the job's file-command files as they were when it was
// taken, to put them back after untrusted processes ran.
type FileCommands struct {
	files []commandFile
}

// commandFile is one file as it was.
type commandFile struct {
	name    string      // the variable naming it, for messages
	path    string      //
	dir     fs.FileInfo // the directory holding it: a replaced directory is refused
	info    fs.FileInfo // the file; nil when it did not exist
	content []byte
}

// GuardFileCommands records the file-command files that env names, content
// and all. A file that does not exist is recorded as absent; one that is
// not a regular file (a device such as /dev/null) is left alone, and so is
// a file whose directory does not exist.
func GuardFileCommands(env []string) (*FileCommands, error) {
	g := &FileCommands{}
	seen := map[string]bool{}
	for _, name := range fileCommandVars {
		path := environ.Env(env).Get(name)
		if path == "" || seen[path] {
			continue
		}
		seen[path] = true
		f, ok, err := recordFile(name, path)
		if err != nil {
			return nil, err
		}
		if ok {
			g.files = append(g.files, f)
		}
	}
	return g, nil
}

func recordFile(name, path string) (commandFile, bool, error) {
	f := commandFile{name: name, path: path}
	dir, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return f, false, nil
	}
	f.dir = dir
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return f, true, nil
	case err != nil:
		return f, false, fmt.Errorf("file command %s %q: %w", name, path, err)
	case !fi.Mode().IsRegular():
		return f, false, nil
	}
	if f.content, fi, err = readRegular(path); err != nil {
		return f, false, fmt.Errorf("file command %s %q: %w", name, path, err)
	}
	f.info = fi
	return f, true, nil
}

// Restore puts every recorded file back as it was: bytes appended or
// overwritten, a file deleted, or replaced by a symlink, a FIFO or a
// directory. It never writes through a symlink: a changed file is
// replaced by a new one renamed over whatever is at its path. It refuses
// when a file's directory itself was replaced.
func (g *FileCommands) Restore() error {
	if g == nil {
		return nil
	}
	var errs []error
	for _, f := range g.files {
		if err := f.restore(); err != nil {
			errs = append(errs, fmt.Errorf("restore the file command %s %q: %w", f.name, f.path, err))
		}
	}
	return errors.Join(errs...)
}

func (f commandFile) restore() error {
	dir, err := os.Lstat(filepath.Dir(f.path))
	if err != nil {
		return err
	}
	if !os.SameFile(dir, f.dir) {
		return errors.New("its directory was replaced")
	}
	now, err := os.Lstat(f.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if f.info == nil {
			return nil
		}
		now = nil
	case err != nil:
		return err
	case f.info == nil:
		return os.RemoveAll(f.path) // a symlink is removed, not followed
	case f.unchanged(now):
		return nil
	}
	return f.replace(now)
}

// unchanged reports whether the file at the path is the recorded one,
// with the recorded content.
func (f commandFile) unchanged(now fs.FileInfo) bool {
	if !now.Mode().IsRegular() || !os.SameFile(now, f.info) || now.Mode() != f.info.Mode() || now.Size() != int64(len(f.content)) {
		return false
	}
	b, fi, err := readRegular(f.path)
	return err == nil && os.SameFile(fi, f.info) && bytes.Equal(b, f.content)
}

// readRegular reads the regular file at path and returns its status as
// read. It never blocks in open(2): a FIFO swapped in after an lstat is
// refused, not waited on (workspace.OpenFile).
func readRegular(path string) ([]byte, fs.FileInfo, error) {
	r, err := workspace.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	file, fi, err := workspace.OpenFile(r, filepath.Base(path))
	if err != nil {
		return nil, nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(file)
	return b, fi, err
}

// replace writes the recorded content to a new file in the same directory
// and renames it over the path, which replaces a symlink rather than
// following it.
func (f commandFile) replace(now fs.FileInfo) error {
	if now != nil && now.IsDir() {
		if err := os.RemoveAll(f.path); err != nil {
			return err
		}
	}
	dir, name := filepath.Dir(f.path), filepath.Base(f.path)
	r, err := workspace.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	tmp, err := workspace.Atomic{Perm: f.info.Mode().Perm()}.Stage(r, name, bytes.NewReader(f.content))
	if err != nil {
		return err
	}
	chownLike(filepath.Join(dir, tmp), f.info) // the runner's user, when this runs as root
	if err := r.Rename(tmp, name); err != nil {
		_ = r.Remove(tmp)
		return err
	}
	return nil
}
