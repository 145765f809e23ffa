package export

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
)

// TestExportPathsKeepOutOnce checks where [export] paths put files: a
// file at rel goes to out/<rel>, one already under out/ keeps its path,
// and two files never share a place.
func TestExportPathsKeepOutOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		files    []string // loop-root files, each holding its own path
		patterns []string
		want     map[string]string // out/ file -> the loop-root file it came from
		withheld []Withheld
	}{
		{"out/**", []string{"out/a.txt", "out/sub/b.txt", "c.txt"}, []string{"out/**"},
			map[string]string{"out/a.txt": "out/a.txt", "out/sub/b.txt": "out/sub/b.txt"}, nil},
		{"reports/*.md", []string{"reports/r.md", "reports/x.txt", "reports/deep/d.md"}, []string{"reports/*.md"},
			map[string]string{"out/reports/r.md": "reports/r.md"}, nil},
		{"a mix", []string{"out/a.txt", "reports/r.md", "notes.txt", "src/main.go"}, []string{"out/**", "reports/*.md", "notes.txt"},
			map[string]string{"out/a.txt": "out/a.txt", "out/notes.txt": "notes.txt", "out/reports/r.md": "reports/r.md"}, nil},
		{"a file named out", []string{"out"}, []string{"out"}, map[string]string{"out/out": "out"}, nil},
		{"two files for one place", []string{"a.txt", "out/a.txt"}, []string{"out/**", "*.txt"},
			map[string]string{"out/a.txt": "out/a.txt"}, []Withheld{{Path: "out/a.txt", Source: "a.txt", Reason: `the loop root's "out/a.txt" is exported to the same path`}}},
		{"a file where a directory must be", []string{"x", "out/x/y"}, []string{"out/**", "x"},
			map[string]string{"out/x/y": "out/x/y"}, []Withheld{{Path: "out/x", Source: "x", Reason: `the export needs "out/x" as a directory, for the loop root's "out/x/y"`}}},
		{"a directory where a file is", []string{"out/x", "x/y"}, []string{"**"},
			map[string]string{"out/x": "out/x"}, []Withheld{{Path: "out/x/y", Source: "x/y", Reason: `the loop root's "out/x" is exported to "out/x", where this file's directory would be`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = f
			}
			writeTree(t, root, files)
			in := Input{Config: &loop.Config{Name: "p", Export: loop.Export{Paths: tt.patterns}}, Root: root}
			dir, m, err := Write(t.TempDir(), in)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for name, data := range readExport(t, dir) {
				if strings.HasPrefix(name, "out/") {
					got[name] = string(data)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("out/ files and what they hold (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.withheld, m.Withheld); diff != "" {
				t.Errorf("withheld (-want +got):\n%s", diff)
			}
			evidence := string(readExport(t, dir)["EVIDENCE.md"])
			for _, wh := range tt.withheld {
				if line := "- `" + wh.Path + "` (the loop root's `" + wh.Source + "`): " + wh.Reason + ".\n"; !strings.Contains(evidence, line) {
					t.Errorf("EVIDENCE.md lacks %q:\n%s", line, evidence)
				}
			}
		})
	}
}
