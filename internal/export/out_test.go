package export

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
)

// tree describes everything under dir: each entry's slash path and what it
// is ("dir", "file <sha256> <mode>", "link -> target"), without following
// symlinks.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			out[rel] = "dir " + info.Mode().String()
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link -> " + target
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			out[rel] = "file " + hex.EncodeToString(sum[:]) + " " + info.Mode().String()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// without returns m minus the entries at or under prefix.
func without(m map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if k != prefix && !strings.HasPrefix(k, prefix+"/") {
			out[k] = v
		}
	}
	return out
}

func TestNothingWrittenOutsideTheExport(t *testing.T) {
	f := newFixture(t)
	if err := os.MkdirAll(f.parent, 0o755); err != nil {
		t.Fatal(err)
	}
	writeTree(t, f.parent, map[string]string{"other-success/keep.txt": "another loop's export\n"})
	before := tree(t, f.base)
	dir, _, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	after := tree(t, f.base)
	if diff := cmp.Diff(before, without(after, "exports/green-build-success")); diff != "" {
		t.Errorf("Write changed something outside %s (-before +after):\n%s", dir, diff)
	}
	entries, err := os.ReadDir(f.parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"green-build-success", "other-success"}, names); diff != "" {
		t.Errorf("parent entries (-want +got):\n%s", diff)
	}
}

func TestSymlinksAndMetadataNeverCopied(t *testing.T) {
	f := newFixture(t)
	f.in.Config.Export.Paths = []string{"**"}
	dir, m, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, file := range m.Files {
		if strings.HasPrefix(file.Path, "out/") {
			got = append(got, file.Path)
		}
	}
	want := []string{
		"out/build/test.log", "out/data/nested/deep.txt", "out/data/results.json", "out/docs/internal/notes.md",
		"out/docs/usage.md", "out/report.md", "out/src/parser.go",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("out/ (-want +got):\n%s", diff)
	}
	for rel, what := range tree(t, filepath.Join(dir, "out")) {
		if strings.HasPrefix(what, "link") {
			t.Errorf("out/%s is a symlink", rel)
		}
	}
}

func TestWriteReplacesOlderExport(t *testing.T) {
	root, parent := t.TempDir(), t.TempDir()
	writeTree(t, root, map[string]string{"out/a.txt": "a\n", "out/b.txt": "b\n"})
	in := Input{Config: &loop.Config{Name: "r", Source: []byte("name = \"r\"\n"), Export: loop.Export{Paths: []string{"out/**"}}}, Root: root}
	dir, _, err := Write(parent, in)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"stale.txt": "left by hand\n", "out/stale/c.txt": "c\n"})
	if err := os.Remove(filepath.Join(root, "out/b.txt")); err != nil {
		t.Fatal(err)
	}
	in.Config.Source = []byte("name = \"r\"\n# changed\n")
	dir2, m, err := Write(parent, in)
	if err != nil {
		t.Fatal(err)
	}
	if dir2 != dir {
		t.Errorf("second export at %q, first at %q", dir2, dir)
	}
	files := readExport(t, dir)
	var names []string
	for _, file := range m.Files {
		names = append(names, file.Path)
	}
	want := []string{"EVIDENCE.md", "SKILL.md", "loop.toml", "out/a.txt", "run.cmd", "run.sh"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("manifest files (-want +got):\n%s", diff)
	}
	if len(files) != len(want)+1 {
		t.Errorf("the export holds %d files, want %d: stale files survived", len(files), len(want)+1)
	}
	if got := string(files["loop.toml"]); got != "name = \"r\"\n# changed\n" {
		t.Errorf("loop.toml = %q, want the new config", got)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("parent holds %d entries, want only the export (no temporary or old copies)", len(entries))
	}
}

func TestWriteReplacesSymlinkWithoutFollowingIt(t *testing.T) {
	base := t.TempDir()
	victim := filepath.Join(base, "victim")
	writeTree(t, victim, map[string]string{"precious.txt": "keep me\n"})
	parent := filepath.Join(base, "parent")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, victim, filepath.Join(parent, "v-success"))
	before := tree(t, victim)
	dir, _, err := Write(parent, Input{Config: &loop.Config{Name: "v"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, victim)); diff != "" {
		t.Errorf("Write changed the symlink's target (-before +after):\n%s", diff)
	}
	if info, err := os.Lstat(dir); err != nil || !info.IsDir() {
		t.Errorf("%s is not a directory after Write: %v", dir, err)
	}
}

// TestExportInsideRootSkipsItself: an export written inside the loop root
// never copies itself, however the root and the parent are spelled (each
// through a symlink or not).
func TestExportInsideRootSkipsItself(t *testing.T) {
	for _, tt := range []struct{ name, root, parent string }{
		{"plain", "real", "real/exports"},
		{"root through a link", "link", "real/exports"},
		{"parent through a link", "real", "link/exports"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			writeTree(t, filepath.Join(base, "real"), map[string]string{"a.txt": "a\n"})
			symlink(t, "real", filepath.Join(base, "link"))
			parent := filepath.Join(base, tt.parent)
			in := Input{Config: &loop.Config{Name: "self", Export: loop.Export{Paths: []string{"**"}}}, Root: filepath.Join(base, tt.root)}
			for range 3 {
				if _, _, err := Write(parent, in); err != nil {
					t.Fatal(err)
				}
			}
			got := slices.Sorted(maps.Keys(tree(t, filepath.Join(parent, "self-success", "out"))))
			if diff := cmp.Diff([]string{".", "a.txt"}, got); diff != "" {
				t.Errorf("out/ (-want +got): the export must not copy itself\n%s", diff)
			}
		})
	}
}

func TestDirectoryPatternTakesItsFiles(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"out/a.txt": "a\n", "out/sub/b.txt": "b\n", "outer.txt": "no\n", "notes.md": "n\n"})
	in := Input{Config: &loop.Config{Name: "d", Export: loop.Export{Paths: []string{"./out", "notes.md"}}}, Root: root}
	_, m, err := Write(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, file := range m.Files {
		if strings.HasPrefix(file.Path, "out/") {
			got = append(got, file.Path)
		}
	}
	if diff := cmp.Diff([]string{"out/a.txt", "out/notes.md", "out/sub/b.txt"}, got); diff != "" {
		t.Errorf("out/ (-want +got):\n%s", diff)
	}
}

func TestSymlinkedRootParts(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	writeTree(t, real, map[string]string{"out/a.txt": "a\n"})
	root := filepath.Join(base, "root")
	writeTree(t, root, map[string]string{"keep.txt": "k\n"})
	// The pattern's literal base is itself a symlink to a directory.
	symlink(t, filepath.Join(real, "out"), filepath.Join(root, "out"))
	in := Input{Config: &loop.Config{Name: "s", Export: loop.Export{Paths: []string{"out/**", "out/a.txt", "keep.txt"}}}, Root: root}
	_, m, err := Write(filepath.Join(base, "exports"), in)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range m.Files {
		if strings.HasPrefix(file.Path, "out/") && file.Path != "out/keep.txt" {
			t.Errorf("%s was copied through a symlinked directory", file.Path)
		}
	}
}

func TestCheckPath(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"SKILL.md", "out/a/b.txt", "out/..a/b", "out/a..b"} {
		if err := checkPath(p); err != nil {
			t.Errorf("checkPath(%q) = %v, want nil", p, err)
		}
	}
	for _, p := range []string{"", ".", "..", "../x", "out/../../x", "out/./x", "/etc/passwd", "out//x", "out/"} {
		if err := checkPath(p); err == nil {
			t.Errorf("checkPath(%q) = nil, want an error", p)
		}
	}
}

func TestWriterRefusesEscapes(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "export")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w := newWriter(r, nil)
	w.write("out/../../escaped.txt", []byte("x"), 0o644)
	if w.err == nil {
		t.Error("writing out/../../escaped.txt succeeded")
	}
	if _, err := os.Lstat(filepath.Join(base, "escaped.txt")); err == nil {
		t.Error("a file was written outside the export directory")
	}
}
