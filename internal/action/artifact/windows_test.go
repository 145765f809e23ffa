package artifact_test

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/action/artifact"
	"github.com/loop-action/loop-action/internal/export"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/testing/artifactfake"
)

// TestUploadRefusesNamesWindowsReadsDifferently: a directory holding a
// path that Windows would read as another is not zipped: the upload fails
// before the artifact is created, naming the path and why. The export
// never writes such a path; this holds the line for any other directory.
func TestUploadRefusesNamesWindowsReadsDifferently(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these names cannot be made on Windows")
	}
	t.Parallel()
	tests := []struct {
		name  string
		files []string
		want  string
	}{
		{"a backslash", []string{`out/..\..\..\evil.bat`}, "path \"out/..\\\\..\\\\..\\\\evil.bat\" would be another path on Windows: its name holds `\\`, which Windows reads as a path separator"},
		{"a device", []string{"out/NUL.txt"}, `path "out/NUL.txt" would be another path on Windows: its name is the device NUL on Windows`},
		{"a device directory", []string{"com3/x"}, `path "com3/x" would be another path on Windows: the name "com3" in its path is the device COM3 on Windows`},
		{"a trailing dot", []string{"out/a."}, `path "out/a." would be another path on Windows: its name ends in a dot or a space, which Windows drops`},
		{"a trailing space", []string{"out/a "}, `path "out/a " would be another path on Windows: its name ends in a dot or a space, which Windows drops`},
		{"a control character", []string{"out/a\tb"}, `path "out/a\tb" would be another path on Windows: its name holds the control character U+0009`},
		{"a look-alike", []string{"out/a＼b"}, `path "out/a＼b" would be another path on Windows: its name holds ＼ (U+FF3C)`},
		{"names that differ only in case", []string{"out/Report.md", "out/report.md"}, `path "out/report.md" would be another path on Windows: "out/report.md" differs only in case from "out/Report.md"`},
		{"an empty directory beside one in another case", []string{"Out/x", "out/"}, `path "out/" would be another path on Windows: "out" differs only in case from "Out"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, cfg := setup(t)
			dir := t.TempDir()
			for _, f := range tt.files {
				if strings.HasSuffix(f, "/") {
					mustDo(t, os.MkdirAll(filepath.Join(dir, f), 0o755))
					continue
				}
				writeFiles(t, dir, map[string]string{f: "x"})
			}
			_, err := artifact.Upload(t.Context(), cfg, name, dir)
			checkErr(t, err, cfg.RuntimeToken, nil, tt.want)
			if got := srv.Calls(artifactfake.Create); got != 0 {
				t.Errorf("%d create calls for a tree that cannot be uploaded", got)
			}
		})
	}
}

// TestExportZipHasNoEscapingEntry: the success export of a loop root
// whose [export] paths match files named to escape or mislead on Windows
// is uploaded, and its zip, read back with archive/zip, holds no entry a
// Windows extractor could write outside its directory, onto a device or
// a stream, or over another entry; the files Windows reads as they are
// are in it.
func TestExportZipHasNoEscapingEntry(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these names cannot be made on Windows")
	}
	t.Parallel()
	root := t.TempDir()
	hostile := []string{`..\..\..\evil.bat`, `out/..\..\x.cmd`, "C:evil.txt", "a.txt:stream", "CON", "nul.txt", "dir./x",
		"trailing ", "q?.txt", "ctl\x01", "..／..／up.txt", "README.md", "readme.md", `sub\..\..\y`}
	files := map[string]string{"fine.txt": "fine", "out/report.md": "report"}
	for _, f := range hostile {
		files[f] = "hostile"
	}
	writeFiles(t, root, files)
	cfg := &loop.Config{Name: "win", Source: []byte("name = \"win\"\n"), Export: loop.Export{Paths: []string{"**"}}}
	dir, m, err := export.Write(t.TempDir(), export.Input{Config: cfg, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	srv, acfg := setup(t)
	if _, err := artifact.Upload(t.Context(), acfg, name, dir); err != nil {
		t.Fatal(err)
	}
	data, _ := srv.Artifact(name)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	seen := map[string]string{}
	for _, f := range zr.File {
		names = append(names, f.Name)
		if why := escapesOnWindows(f.Name); why != "" {
			t.Errorf("zip entry %q: %s", f.Name, why)
		}
		key := strings.ToUpper(strings.TrimSuffix(f.Name, "/"))
		if other, ok := seen[key]; ok {
			t.Errorf("zip entries %q and %q are one path on Windows", other, f.Name)
		}
		seen[key] = f.Name
	}
	for _, want := range []string{"out/fine.txt", "out/report.md", "out/README.md", "SKILL.md", "EVIDENCE.md", "manifest.json"} {
		if _, ok := seen[strings.ToUpper(want)]; !ok {
			t.Errorf("zip lacks %q: %q", want, names)
		}
	}
	var sources []string
	for _, wh := range m.Withheld {
		sources = append(sources, wh.Source)
	}
	want := []string{"..\\..\\..\\evil.bat", "..／..／up.txt", "C:evil.txt", "CON", "a.txt:stream", "ctl\x01", "dir./x", "nul.txt", "q?.txt",
		"readme.md", "sub\\..\\..\\y", "trailing ", "out/..\\..\\x.cmd"}
	slices.Sort(want)
	slices.Sort(sources)
	if diff := cmp.Diff(want, sources); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
}

// escapesOnWindows says how a Windows extractor could write the zip entry
// name somewhere else than under its directory, as name: reading `\` as
// `/`, a drive or stream in `:`, `..`, a device name, a name it trims or
// a character it forbids.
func escapesOnWindows(name string) string {
	for _, part := range strings.FieldsFunc(strings.TrimSuffix(name, "/"), func(r rune) bool { return r == '/' || r == '\\' }) {
		stem, _, _ := strings.Cut(strings.ToUpper(part), ".")
		switch {
		case strings.ContainsRune(name, '\\'):
			return "a backslash"
		case part == "..":
			return "a .. element"
		case strings.ContainsAny(part, `:<>"|?*`) || strings.IndexFunc(part, func(r rune) bool { return r < 0x20 }) >= 0:
			return "a character Windows reads as a drive, a stream, or refuses"
		case strings.HasSuffix(part, ".") || strings.HasSuffix(part, " "):
			return "a name Windows trims"
		case map[string]bool{"CON": true, "PRN": true, "AUX": true, "NUL": true}[strings.TrimSpace(stem)],
			len(stem) == 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) && stem[3] >= '0' && stem[3] <= '9':
			return "a device"
		case strings.ContainsAny(part, "＼／：＂∕∖﹨"):
			return "a look-alike of a separator"
		}
	}
	if strings.HasPrefix(name, "/") {
		return "an absolute path"
	}
	return ""
}
