package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

var update = flag.Bool("update", false, "rewrite the golden export in testdata/golden")

// fixture is a loop root beside a directory outside it, and an Input that
// a successful run of testdata/loop.toml in that root would hand Write.
type fixture struct {
	base    string // holds root, outside and parent
	root    string
	outside string
	parent  string
	in      Input
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{
		base:    base,
		root:    filepath.Join(base, "repo"),
		outside: filepath.Join(base, "outside"),
		parent:  filepath.Join(base, "exports"),
	}
	writeTree(t, f.root, map[string]string{
		"out/report.md":             "# Release `v2`\n\nTestParse fails no more: the parser now accepts a trailing comma.\n",
		"out/data/results.json":     "{\"passed\": 112, \"failed\": 0}\n",
		"out/data/nested/deep.txt":  "three levels down\n",
		"out/.loop/cache.txt":       "loop-action state, never exported\n",
		"docs/usage.md":             "# Usage\n",
		"docs/internal/notes.md":    "not matched: docs/*.md is one level\n",
		"build/test.log":            "ok  \texample.com/parser\t0.412s\n",
		"src/parser.go":             "package parser\n",
		".loop/history/run.log":     "loop-action's own history, never exported\n",
		".git/fetch.log":            "git metadata, never exported\n",
		".git/refs/heads/main.log":  "git metadata, never exported\n",
		"vendor/.git/submodule.log": "a nested .git, never exported\n",
		"modules/lib/.git":          "gitdir: ../../.git/modules/lib\n",
	})
	writeTree(t, f.outside, map[string]string{
		"secret.txt":   "a file outside the loop root\n",
		"dir/leak.log": "a directory outside the loop root\n",
	})
	symlink(t, filepath.Join(f.outside, "secret.txt"), filepath.Join(f.root, "out/secret.txt"))
	symlink(t, filepath.Join(f.outside, "dir"), filepath.Join(f.root, "out/leak"))
	symlink(t, "report.md", filepath.Join(f.root, "out/alias.md"))
	symlink(t, "../docs", filepath.Join(f.root, "out/docs"))
	symlink(t, filepath.Join(f.outside, "dir/leak.log"), filepath.Join(f.root, "build/outside.log"))

	src, err := os.ReadFile("testdata/loop.toml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loop.Parse("testdata/loop.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	f.in = Input{
		Config:   cfg,
		RunID:    "green-build/pr-42",
		Commit:   "3f9c2e1d4b5a69788c7d6e5f4a3b2c1d0e9f8a7b",
		Snapshot: "9b2d7c1e5f3a8d6b4c2e0f1a3b5c7d9e1f2a4b6c",
		Verdicts: finalVerdicts(),
		History:  history(),
		Spend:    Spend{Tokens: 1234567, Estimated: true, CostUSD: 3.2149, WallClock: 17*time.Minute + 42*time.Second + 400*time.Millisecond},
		Root:     f.root,
		Finished: time.Date(2026, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600)),
		Version:  "v0.4.0",
		Changes:  &Changes{Patch: fixturePatch, Files: 1},
	}
	return f
}

// fixturePatch is the change of the fixture's run.
const fixturePatch = `diff --git a/src/parser.go b/src/parser.go
index 1b9c3b4..0b3d2a7 100644
--- a/src/parser.go
+++ b/src/parser.go
@@ -1 +1,3 @@
 package parser
+
+// accepts a trailing comma
`

func finalVerdicts() []gate.Verdict {
	return []gate.Verdict{
		{Goal: "tests", Blocking: true, Satisfied: true, Passed: 3, Total: 3, Checks: []gate.CheckVerdict{
			{Index: 0, Type: "test", Status: gate.Pass, Evidence: "`go test ./...` exited 0 after 12.3s"},
			{Index: 1, Type: "regex", Status: gate.Pass, Evidence: "`out/report.md` matches /(?m)^# Release `v\\d+`/ at line 1: # Release `v2`"},
			{Index: 2, Type: "judge", Status: gate.Pass, Evidence: `judge "review" ruled pass (score 8/10): no test was deleted, skipped or weakened; parser_test.go gained two cases`},
		}},
		{Goal: "coverage", Blocking: false, Satisfied: false, Passed: 0, Total: 1, Checks: []gate.CheckVerdict{
			{Index: 0, Type: "metric", Status: gate.Fail, Evidence: "coverage = 79.9, needs >= 80"},
		}},
	}
}

func history() []Iteration {
	return []Iteration{
		{N: 1, Satisfied: 0, Total: 2, Summary: "## Iteration 1\n\nRan: `fixer` (builder, 41.2s), `review` (judge, 9.8s).\n\nStill failing:\n- `tests` check 1 (`test`): `go test ./...` exited 1 (expected 0) after 8.1s: --- FAIL: TestParse (0.00s)\n- `coverage` check 1 (`metric`): coverage = 71.4, needs >= 80\n\nSpend: 402,113 tokens, $1.02.\n"},
		{N: 2, Satisfied: 0, Total: 2, Summary: "## Iteration 2\n\nRan: `fixer` (builder, 1m3s), `review` (judge, 11.0s).\n\nStill failing:\n- `tests` check 3 (`judge`): judge \"review\" ruled fail (score 4/10): TestParseEmpty was deleted\n\nSpend: 815,540 tokens, $2.11.\n"},
		{N: 3, Satisfied: 1, Total: 2, Summary: "## Iteration 3\n\nRan: `fixer` (builder, 52.7s), `review` (judge, 10.4s).\n\nNewly satisfied: `tests`.\n\nStill failing:\n- `coverage` check 1 (`metric`): coverage = 79.9, needs >= 80\n\nSpend: 1,234,567 tokens (estimated), $3.21.\n"},
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// readExport returns every file under dir by slash path, and fails on
// anything that is neither a file nor a directory.
func readExport(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if !d.Type().IsRegular() {
			t.Errorf("%s: not a regular file (%v)", p, d.Type())
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func TestWriteGolden(t *testing.T) {
	f := newFixture(t)
	dir, m, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(f.parent, "green-build-success"); dir != want {
		t.Errorf("dir = %q, want %q", dir, want)
	}
	got := readExport(t, dir)
	golden := filepath.Join("testdata", "golden", "green-build-success")
	if *update {
		if err := os.RemoveAll(golden); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(golden, os.DirFS(dir)); err != nil {
			t.Fatal(err)
		}
	}
	want := readExport(t, golden)
	if diff := cmp.Diff(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got))); diff != "" {
		t.Errorf("files (-golden +got):\n%s", diff)
	}
	for name, w := range want {
		if g, ok := got[name]; ok && !bytes.Equal(w, g) {
			t.Errorf("%s differs from the golden file (-golden +got):\n%s", name, cmp.Diff(string(w), string(g)))
		}
	}
	wantOut := []string{"out/build/test.log", "out/data/nested/deep.txt", "out/data/results.json", "out/docs/usage.md", "out/report.md"}
	var gotOut []string
	for _, file := range m.Files {
		if strings.HasPrefix(file.Path, "out/") {
			gotOut = append(gotOut, file.Path)
		}
	}
	if diff := cmp.Diff(wantOut, gotOut); diff != "" {
		t.Errorf("out/ files (-want +got):\n%s", diff)
	}
}

func TestWriteModes(t *testing.T) {
	f := newFixture(t)
	dir, _, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		want := fs.FileMode(0o644)
		switch {
		case d.IsDir():
			want = fs.ModeDir | 0o755
		case d.Name() == "run.sh":
			want = 0o755
		}
		if info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestManifestVerifies(t *testing.T) {
	f := newFixture(t)
	dir, m, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk Manifest
	if err := json.Unmarshal(data, &onDisk); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, onDisk); diff != "" {
		t.Errorf("manifest.json differs from the returned manifest (-returned +file):\n%s", diff)
	}
	files := readExport(t, dir)
	delete(files, "manifest.json")
	var paths []string
	for _, file := range m.Files {
		paths = append(paths, file.Path)
		content, ok := files[file.Path]
		if !ok {
			t.Errorf("%s is in the manifest but not in the export", file.Path)
			continue
		}
		sum := sha256.Sum256(content)
		if got := hex.EncodeToString(sum[:]); got != file.SHA256 || int64(len(content)) != file.Size {
			t.Errorf("%s: sha256 %s size %d, manifest says %s size %d", file.Path, got, len(content), file.SHA256, file.Size)
		}
	}
	if !slices.IsSorted(paths) {
		t.Errorf("manifest paths are not sorted: %q", paths)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(files)), paths); diff != "" {
		t.Errorf("files in the export (-disk +manifest):\n%s", diff)
	}
	want := Manifest{Name: "green-build", RunID: f.in.RunID, Commit: f.in.Commit, Snapshot: f.in.Snapshot,
		Version: "v0.4.0", Finished: time.Date(2026, 3, 14, 14, 9, 26, 535897932, time.UTC)}
	m.Files = nil
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("manifest (-want +got):\n%s", diff)
	}
}

func TestWriteIsDeterministic(t *testing.T) {
	f := newFixture(t)
	first, _, err := Write(filepath.Join(f.base, "one"), f.in)
	if err != nil {
		t.Fatal(err)
	}
	second, _, err := Write(filepath.Join(f.base, "two"), f.in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(readExport(t, first), readExport(t, second)); diff != "" {
		t.Errorf("two exports of the same input differ:\n%s", diff)
	}
}

func TestWriteWithoutConfig(t *testing.T) {
	parent := t.TempDir()
	if _, _, err := Write(parent, Input{}); err == nil {
		t.Fatal("Write without a config succeeded")
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed Write left %d entries in the parent", len(entries))
	}
}

func TestWriteRejectsBadPattern(t *testing.T) {
	root, parent := t.TempDir(), t.TempDir()
	cfg := &loop.Config{Name: "x", Export: loop.Export{Paths: []string{"out/[a"}}}
	_, _, err := Write(parent, Input{Config: cfg, Root: root})
	if err == nil || !strings.Contains(err.Error(), `"out/[a" is not a valid glob pattern`) {
		t.Fatalf("err = %v, want an invalid pattern error", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Errorf("a failed Write left %d entries in the parent", len(entries))
	}
}
