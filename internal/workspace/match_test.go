package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// probeNames are names asked about in every directory of a test tree
// before they exist, to match the patterns of the oracle cases.
var probeNames = []string{"probe", "probe.log", "keep.log", "probe.tmp", "probe.md", "probe.txt",
	"keep.txt", "tmpprobe", "cache", "build/probe", "gen/probe", "newdir/probe.log", "local/probe"}

// TestMatcherAgreesWithGit: for every oracle tree, Matcher.Included says
// of every file and link (at any depth, .git and .loop included) whether
// git lists it after `git add -A`, and says it of files that did not
// exist yet when it was asked.
func TestMatcherAgreesWithGit(t *testing.T) {
	for _, tc := range oracleCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := build(t, tc.ops...)
			r, err := OpenRoot(root)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			m, err := NewMatcher(r)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]bool{}
			ask := func(p string) {
				if got[p], err = m.Included(p); err != nil {
					t.Fatalf("Included(%q): %v", p, err)
				}
			}
			for _, p := range probes(t, root) {
				ask(p)
				if !createProbe(root, p) {
					delete(got, p) // in the way of something already there
				}
			}
			_, files := oracle(t, root)
			want := map[string]bool{}
			for _, p := range onDisk(t, root) {
				want[p] = slices.Contains(files, p)
				if _, asked := got[p]; !asked {
					ask(p)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Included (-git +ours):\n%s", diff)
			}
		})
	}
}

// probes returns the probe names in every real directory of root that
// are not there yet.
func probes(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	for _, d := range append([]string{"."}, dirsOnDisk(t, root)...) {
		for _, n := range probeNames {
			p := filepath.ToSlash(filepath.Join(d, n))
			if _, err := os.Lstat(filepath.Join(root, p)); os.IsNotExist(err) {
				out = append(out, p)
			}
		}
	}
	return out
}

// createProbe makes p an empty file, and reports whether it could.
func createProbe(root, p string) bool {
	abs := filepath.Join(root, filepath.FromSlash(p))
	if os.MkdirAll(filepath.Dir(abs), 0o755) != nil {
		return false
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false
	}
	return f.Close() == nil
}

// onDisk lists the files and symbolic links under root, at any depth,
// without following links.
func onDisk(t *testing.T, root string) []string {
	return walkDisk(t, root, func(d fs.DirEntry) bool { return d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 })
}

// dirsOnDisk lists the directories under root.
func dirsOnDisk(t *testing.T, root string) []string {
	return walkDisk(t, root, fs.DirEntry.IsDir)
}

func walkDisk(t *testing.T, root string, keep func(fs.DirEntry) bool) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		if keep(d) {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
