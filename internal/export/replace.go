package export

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/workspace"
)

// write is Write, without its error's context.
func write(parent, dirName string, in Input) (Manifest, error) {
	pats, err := cleanPatterns(in.Config.Export.Paths)
	if err != nil {
		return Manifest{}, err
	}
	if len(pats) > 0 && in.Root == "" {
		return Manifest{}, errors.New("no loop root to match [export] paths in")
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return Manifest{}, err
	}
	out, err := workspace.OpenRoot(parent)
	if err != nil {
		return Manifest{}, err
	}
	defer out.Close()
	src, err := collect(in.Root, pats, out, dirName)
	if err != nil {
		return Manifest{}, err
	}
	defer src.close()
	removeLeftovers(out, dirName)
	tmp := "." + dirName + tmpMarker + strconv.FormatUint(rand.Uint64(), 36)
	m, err := buildIn(out, tmp, in, src)
	if err == nil {
		err = replace(out, tmp, dirName)
	}
	if err != nil {
		_ = out.RemoveAll(tmp)
	}
	return m, err
}

// removeLeftovers removes the temporary directories an earlier Write left
// behind when its process was killed.
func removeLeftovers(parent *os.Root, dirName string) {
	entries, _ := workspace.ReadDir(parent, ".")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+dirName+tmpMarker) {
			_ = parent.RemoveAll(e.Name())
		}
	}
}

// tmpMarker is in the name of the directories Write builds in; a walk of
// the loop root skips them.
const tmpMarker = ".tmp-"

// testHookTemp, set only by tests, runs between the making of the
// temporary directory (its path) and its opening.
var testHookTemp func(tmp string)

// buildIn makes the temporary directory tmp in parent, builds the export
// in it and returns the manifest. It builds in the directory it made: a
// link or another directory swapped in for it fails the export.
func buildIn(parent *os.Root, tmp string, in Input, src *source) (Manifest, error) {
	if err := parent.Mkdir(tmp, 0o700); err != nil {
		return Manifest{}, err
	}
	if testHookTemp != nil {
		testHookTemp(filepath.Join(parent.Name(), tmp))
	}
	r, err := workspace.OpenDir(parent, tmp)
	if err != nil {
		return Manifest{}, err
	}
	defer r.Close()
	made, err := parent.Lstat(tmp)
	if err != nil {
		return Manifest{}, err
	}
	if opened, err := r.Stat("."); err != nil || !made.IsDir() || !os.SameFile(made, opened) {
		return Manifest{}, fmt.Errorf("the temporary directory %q was replaced while the export was written", tmp)
	}
	if err := r.Chmod(".", 0o755); err != nil {
		return Manifest{}, err
	}
	return build(newWriter(r, in.Secrets), in, src)
}

// replace moves the finished export tmp to name in parent, replacing what
// is there. An older export (or anything else at name, a symlink
// included) is moved aside first and removed after; a symlink is removed,
// never followed.
func replace(parent *os.Root, tmp, name string) error {
	old := ""
	if _, err := parent.Lstat(name); err == nil {
		old = tmp + ".old"
		if err := parent.Rename(name, old); err != nil {
			return fmt.Errorf("move the older export aside: %w", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := parent.Rename(tmp, name); err != nil {
		if old != "" {
			_ = parent.Rename(old, name) // put the older export back
		}
		return err
	}
	if old != "" {
		// Best effort: the new export is complete and in place.
		_ = parent.RemoveAll(old)
	}
	return nil
}
