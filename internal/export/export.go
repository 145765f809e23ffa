// Package export owns the success export: the <name>-success/ directory a
// run writes when, and only when, the gate certifies success. It holds
// SKILL.md, EVIDENCE.md, the config that converged (loop.toml, verbatim),
// out/ (the files named by [export] paths, each at out/<path>, or at its
// own path when that starts with out/), changes.patch (the change from
// the commit the run started from to the certified snapshot, which the
// runner computes from the commit's objects), run.sh, run.cmd and a
// manifest with the sha256 of every file and the files left out.
//
// It renders only what the runner measured and the gate ruled: verdicts,
// evidence lines, deterministic summaries and spend. It must never include
// a node's claim, a provider secret in any form it is given (only the
// names of the variables: a file holding a secret is left out and the
// markdown is masked), or anything read through a symlink or from .git/
// or .loop/ (the base side of changes.patch comes from the runner, out of
// the commit's objects); it must never write one file over another, nor outside the
// export directory, nor a path that Windows, where the export may be
// extracted, reads as another (see WindowsNames). It reads no clock: the same Input gives byte-identical
// files.
//
// Every file it reads or writes, in the loop root and in the export's
// parent, goes through an os.Root opened once on each: that, not a check
// of the path beforehand, is what keeps a symlink swapped in mid-export
// from sending a read or a write elsewhere.
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/secret"
)

// Input is what a successful run hands the export.
type Input struct {
	Config   *loop.Config    // the config that converged (Source is copied verbatim to loop.toml)
	RunID    string          // the run's id
	Commit   string          // git commit the run started from ("" if unknown)
	Snapshot string          // workspace snapshot id the final gate measured
	Verdicts []gate.Verdict  // the final verdicts
	History  []Iteration     // one per iteration, oldest first
	Spend    Spend           // tokens (and whether estimated), cost USD, wall clock
	Root     string          // the loop root: [export] paths are matched here
	Finished time.Time       // when the run succeeded (passed in; export reads no clock)
	Version  string          // loop-action version that produced it
	Secrets  []secret.Secret // provider secrets: a file holding one is withheld, and the markdown is masked
	Changes  *Changes        // changes.patch, or why there is none; nil: the export says nothing of changes
}

// Iteration is one iteration of the run, as the history shows it.
type Iteration struct {
	N         int    // 1-based iteration number
	Satisfied int    // goals satisfied after the iteration's gate
	Total     int    // goals in the config
	Summary   string // the deterministic summary markdown of that iteration
}

// Spend is what the whole run used, summed across resumes.
type Spend struct {
	Tokens    int64
	Estimated bool // some token counts were estimated from text length
	CostUSD   float64
	WallClock time.Duration
}

// Manifest describes an export: written as manifest.json inside it.
type Manifest struct {
	Name     string    `json:"name"`
	RunID    string    `json:"run_id"`
	Commit   string    `json:"commit"`
	Snapshot string    `json:"snapshot"`
	Version  string    `json:"version"`
	Finished time.Time `json:"finished"`
	// Files lists every file in the export except manifest.json, sorted by path.
	Files []File `json:"files"`
	// Withheld lists the files left out, and why: files of [export] paths
	// that hold a provider secret, clash with another or have a path
	// Windows reads as another (WindowsNames), and loop.toml when it
	// holds a secret.
	Withheld []Withheld `json:"withheld,omitempty"`
}

// Withheld is a file the export left out, and why. It never holds a
// secret: a path that carries one is masked.
type Withheld struct {
	Path   string `json:"path"`             // where the file would be in the export, slash-separated
	Source string `json:"source,omitempty"` // its path in the loop root, for a file matched by [export] paths
	Reason string `json:"reason"`
}

// File is one file of an export.
type File struct {
	Path   string `json:"path"` // slash-separated, relative to the export directory
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lowercase hex
}

// Names of the files in an export.
const (
	skillFile    = "SKILL.md"
	evidenceFile = "EVIDENCE.md"
	configFile   = "loop.toml"
	outDir       = "out"
	shFile       = "run.sh"
	cmdFile      = "run.cmd"
	manifestFile = "manifest.json"
)

// DirName is the name of the export directory of a loop named name.
func DirName(name string) string { return SanitizeName(name) + "-success" }

// Write writes the export into parent/<sanitized-name>-success/ and returns
// its path and manifest. The export is built in a temporary directory
// beside it and renamed into place, replacing an older export there: a
// reader sees the old export or the new one, never a mix. (A directory
// cannot be renamed over a non-empty one, so the old export is first moved
// aside; for that instant the path does not exist.) Every step in parent
// goes through an os.Root opened on it once: a symlink swapped in for any
// directory Write makes or moves there sends nothing outside parent.
func Write(parent string, in Input) (dir string, m Manifest, err error) {
	if in.Config == nil {
		return "", Manifest{}, errors.New("write success export: no config")
	}
	dirName := DirName(in.Config.Name)
	dir = filepath.Join(parent, dirName)
	if m, err = write(parent, dirName, in); err != nil {
		return "", Manifest{}, fmt.Errorf("write success export %q: %w", dir, err)
	}
	return dir, m, nil
}

// build writes every file of the export through w and returns the manifest.
func build(w *writer, in Input, src *source) (Manifest, error) {
	w.err = w.mkdirAll(outDir)
	placed, clashes := place(src.files)
	for _, c := range clashes { // their names may hold a secret too
		w.withhold(Withheld{Path: w.mask(c.Path), Source: w.mask(c.Source), Reason: w.mask(c.Reason)})
	}
	for _, p := range placed {
		w.copyOut(src.root, p)
	}
	outFiles := len(w.files)
	w.writePatch(in.Changes)
	config := in.Config.Source
	if found := w.secrets.Find(config); found != "" {
		w.withhold(Withheld{Path: configFile, Reason: heldBy(found)})
		config = nil
	}
	w.write(skillFile, []byte(w.mask(string(skillMarkdown(in, outFiles, len(w.withheld))))), 0o644)
	w.write(evidenceFile, []byte(w.mask(string(evidenceMarkdown(in, w.withheld)))), 0o644)
	if config != nil {
		w.write(configFile, config, 0o644)
	}
	w.write(shFile, []byte(runSh), 0o755)
	w.write(cmdFile, []byte(runCmd), 0o644)
	if w.err != nil {
		return Manifest{}, w.err
	}
	slices.SortFunc(w.files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	m := Manifest{
		Name: in.Config.Name, RunID: in.RunID, Commit: in.Commit, Snapshot: in.Snapshot,
		Version: in.Version, Finished: in.Finished.UTC(), Files: slices.Clone(w.files),
		Withheld: slices.Clone(w.withheld),
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return Manifest{}, err
	}
	w.write(manifestFile, append(data, '\n'), 0o644)
	return m, w.err
}

// writer writes the files of an export through an os.Root, so that no
// path, however computed, lands outside the export directory. The first
// error sticks; later writes do nothing.
type writer struct {
	root     *os.Root
	files    []File
	withheld []Withheld
	windows  WindowsNames // the out/ files written, as Windows reads them
	secrets  *secret.Finder
	mask     func(string) string
	err      error
}

func newWriter(r *os.Root, secrets []secret.Secret) *writer {
	return &writer{root: r, secrets: secret.NewFinder(secrets), mask: secret.Mask(secrets)}
}

func (w *writer) withhold(wh Withheld) { w.withheld = append(w.withheld, wh) }

// heldBy names the secret a file holds, for a Withheld reason.
func heldBy(name string) string { return "it " + secret.Holds(name) }

// checkPath rejects a path that is not local to the export directory.
func checkPath(rel string) error {
	if rel == "" || rel == "." || !filepath.IsLocal(filepath.FromSlash(rel)) || path.Clean(rel) != rel {
		return fmt.Errorf("refusing to write %q: not a path inside the export", rel)
	}
	return nil
}

// mkdirAll creates the directory name and its parents, each with mode 0755
// exactly (whatever the umask).
func (w *writer) mkdirAll(name string) error {
	if name == "." {
		return nil
	}
	if err := w.mkdirAll(filepath.Dir(name)); err != nil {
		return err
	}
	if err := w.root.Mkdir(name, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return w.root.Chmod(name, 0o755)
}

func (w *writer) write(rel string, data []byte, mode fs.FileMode) {
	if w.err == nil {
		w.err = w.create(rel, bytes.NewReader(data), mode, io.Discard)
	}
}

// createScanned writes rel from src, read once, and looks for the secrets
// in it on the way. When it finds one it removes the file again (the
// export is still being built aside), withholds it (from source, a path
// in the loop root, if any) and reports true.
func (w *writer) createScanned(rel, source string, src io.Reader) bool {
	sc := w.secrets.Scanner()
	if w.err = w.create(rel, src, 0o644, sc); w.err != nil || sc.Found() == "" {
		return false
	}
	w.files = w.files[:len(w.files)-1]
	w.err = w.remove(rel)
	w.withhold(Withheld{Path: rel, Source: source, Reason: heldBy(sc.Found())})
	return true
}

// remove removes the file rel and the directories above it that it leaves
// empty, up to out/.
func (w *writer) remove(rel string) error {
	if err := w.root.Remove(filepath.FromSlash(rel)); err != nil {
		return err
	}
	for d := path.Dir(rel); d != outDir && d != "."; d = path.Dir(d) {
		if w.root.Remove(filepath.FromSlash(d)) != nil {
			break // not empty
		}
	}
	return nil
}

// create writes rel from src, copying what it reads to also as well,
// records its size and hash, and sets mode exactly (whatever the umask).
func (w *writer) create(rel string, src io.Reader, mode fs.FileMode, also io.Writer) error {
	if err := checkPath(rel); err != nil {
		return err
	}
	name := filepath.FromSlash(rel)
	if err := w.mkdirAll(filepath.Dir(name)); err != nil {
		return err
	}
	f, err := w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h, also), src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.root.Chmod(name, mode)
	}
	if err != nil {
		return fmt.Errorf("write %q: %w", rel, err)
	}
	w.files = append(w.files, File{Path: rel, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
	return nil
}
