package export

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/secret"
)

// TestExportWithholdsNamesWindowsReadsDifferently: loop-root files
// matched by [export] paths whose export path Windows would read as
// another — escaping out\ through `\`, a drive or a stream, a device, a
// name Windows trims or refuses, a look-alike its code-page conversion
// turns into a separator, a name that differs only in case from another
// exported one — are withheld and named in manifest.json and EVIDENCE.md,
// with why; files Windows reads as they are, next to them, are exported.
func TestExportWithholdsNamesWindowsReadsDifferently(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these names cannot be made on Windows")
	}
	t.Parallel()
	const (
		separator = "its name holds `\\`, which Windows reads as a path separator"
		colon     = "its name holds `:`, which Windows reads as a drive letter or an alternate data stream"
		trailing  = "its name ends in a dot or a space, which Windows drops"
	)
	tests := []struct {
		name     string
		files    []string
		exported []string          // out/ files written
		withheld map[string]string // export path -> why
	}{
		{name: "backslashes", files: []string{`..\..\..\evil.bat`, `a\b.txt`, `dir\x/c.txt`, "fine.txt"},
			exported: []string{"out/fine.txt"},
			withheld: map[string]string{
				`out/..\..\..\evil.bat`: separator,
				`out/a\b.txt`:           separator,
				`out/dir\x/c.txt`:       "the name \"dir\\\\x\" in its path holds `\\`, which Windows reads as a path separator",
			}},
		{name: "drives and streams", files: []string{"C:evil.txt", "notes.txt:hidden", "c:/x.txt", "ok.txt"},
			exported: []string{"out/ok.txt"},
			withheld: map[string]string{
				"out/C:evil.txt":       colon,
				"out/notes.txt:hidden": colon,
				"out/c:/x.txt":         "the name \"c:\" in its path holds `:`, which Windows reads as a drive letter or an alternate data stream",
			}},
		{name: "devices", files: []string{"CON", "nul.txt", "Com1.tar.gz", "lpt9", "aux .md", "CONIN$", "COM¹.txt", "prn/x.txt",
			"CONSOLE.txt", "COM10", "nullable.go", "com.txt", "LPT"},
			exported: []string{"out/COM10", "out/CONSOLE.txt", "out/LPT", "out/com.txt", "out/nullable.go"},
			withheld: map[string]string{
				"out/CON":         "its name is the device CON on Windows",
				"out/nul.txt":     "its name is the device NUL on Windows",
				"out/Com1.tar.gz": "its name is the device COM1 on Windows",
				"out/lpt9":        "its name is the device LPT9 on Windows",
				"out/aux .md":     "its name is the device AUX on Windows",
				"out/CONIN$":      "its name is the device CONIN$ on Windows",
				"out/COM¹.txt":    "its name is the device COM¹ on Windows",
				"out/prn/x.txt":   "the name \"prn\" in its path is the device PRN on Windows",
			}},
		{name: "trailing dots and spaces", files: []string{"a.", "b ", "c..", "d./x.txt", ".hidden", "in side.txt"},
			exported: []string{"out/.hidden", "out/in side.txt"},
			withheld: map[string]string{
				"out/a.":       trailing,
				"out/b ":       trailing,
				"out/c..":      trailing,
				"out/d./x.txt": "the name \"d.\" in its path ends in a dot or a space, which Windows drops",
			}},
		{name: "characters Windows forbids", files: []string{"a<b", "a>b", `a"b`, "a|b", "a?b", "a*b", "tab\there", "nl\nhere", "bell\x07", "ünïcødé.txt"},
			exported: []string{"out/ünïcødé.txt"},
			withheld: map[string]string{
				"out/a<b":       "its name holds `<`, which Windows does not allow in a name",
				"out/a>b":       "its name holds `>`, which Windows does not allow in a name",
				`out/a"b`:       "its name holds `\"`, which Windows does not allow in a name",
				"out/a|b":       "its name holds `|`, which Windows does not allow in a name",
				"out/a?b":       "its name holds `?`, which Windows does not allow in a name",
				"out/a*b":       "its name holds `*`, which Windows does not allow in a name",
				"out/tab\there": "its name holds the control character U+0009, which Windows does not allow in a name",
				"out/nl\nhere":  "its name holds the control character U+000A, which Windows does not allow in a name",
				"out/bell\x07":  "its name holds the control character U+0007, which Windows does not allow in a name",
			}},
		{name: "look-alikes of separators", files: []string{"..＼..＼evil.bat", "a／b", "c：d"},
			withheld: map[string]string{
				"out/..＼..＼evil.bat": "its name holds ＼ (U+FF3C), which Windows turns into `\\` where it converts names to a code page",
				"out/a／b":            "its name holds ／ (U+FF0F), which Windows turns into `/` where it converts names to a code page",
				"out/c：d":            "its name holds ： (U+FF1A), which Windows turns into `:` where it converts names to a code page",
			}},
		{name: "names that differ only in case", files: []string{"README.md", "readme.md", "Docs/a.md", "docs/b.md", "out/X.txt", "x.txt", "Straße.md", "STRASSE.md"},
			exported: []string{"out/Docs/a.md", "out/README.md", "out/STRASSE.md", "out/Straße.md", "out/X.txt"},
			withheld: map[string]string{
				"out/readme.md": `"out/readme.md" differs only in case from "out/README.md", which is exported too, and Windows reads the two as one`,
				"out/docs/b.md": `"out/docs" differs only in case from "out/Docs", which is exported too, and Windows reads the two as one`,
				"out/x.txt":     `"out/x.txt" differs only in case from "out/X.txt", which is exported too, and Windows reads the two as one`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			files := map[string]string{}
			for _, f := range tt.files {
				files[f] = "content of " + f
			}
			writeTree(t, root, files)
			in := Input{Config: &loop.Config{Name: "w", Export: loop.Export{Paths: []string{"**"}}}, Root: root}
			dir, m, err := Write(t.TempDir(), in)
			if err != nil {
				t.Fatal(err)
			}
			written := readExport(t, dir)
			var exported []string
			for name, data := range written {
				if rel, ok := strings.CutPrefix(name, "out/"); ok {
					exported = append(exported, name)
					if want := "content of " + rel; string(data) != want && string(data) != "content of "+name {
						t.Errorf("%s holds %q", name, data)
					}
				}
			}
			slices.Sort(exported)
			if diff := cmp.Diff(tt.exported, exported); diff != "" {
				t.Errorf("exported (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			for _, wh := range m.Withheld {
				got[wh.Path] = wh.Reason
				if src := strings.TrimPrefix(wh.Path, "out/"); wh.Source != src && wh.Source != wh.Path {
					t.Errorf("%q withheld with source %q", wh.Path, wh.Source)
				}
			}
			if diff := cmp.Diff(tt.withheld, got); diff != "" {
				t.Errorf("withheld (-want +got):\n%s", diff)
			}
			evidence := string(written["EVIDENCE.md"])
			for _, wh := range m.Withheld {
				if line := code(wh.Path) + " (the loop root's " + code(wh.Source) + "): " + wh.Reason + ".\n"; !strings.Contains(evidence, line) {
					t.Errorf("EVIDENCE.md lacks %q:\n%s", line, evidence)
				}
			}
		})
	}
}

// TestWindowsNamesAreOneRule: the rule's corner cases, path by path, in
// the order a tree lists them.
func TestWindowsNamesAreOneRule(t *testing.T) {
	t.Parallel()
	var n WindowsNames
	for _, tt := range []struct{ path, want string }{
		{"out/Dir/a", ""},
		{"out/Dir/b", ""}, // the same directory, the same case
		{"out/Dir", ""},   // a path equal to one seen is no case clash (that is another clash)
		{"out/dir/c", `"out/dir" differs only in case from "out/Dir", which is exported too, and Windows reads the two as one`},
		{"out/dir", `"out/dir" differs only in case from "out/Dir", which is exported too, and Windows reads the two as one`},
		{"OUT/x", `"OUT" differs only in case from "out", which is exported too, and Windows reads the two as one`},
		{"out/É.txt", ""},
		{"out/é.txt", `"out/é.txt" differs only in case from "out/É.txt", which is exported too, and Windows reads the two as one`},
		{"out/\u212a", ""}, // the Kelvin sign: Windows upper-cases k to K, not to it
		{"out/k", ""},
		{"out/K", `"out/K" differs only in case from "out/k", which is exported too, and Windows reads the two as one`},
		{"out/nul", "its name is the device NUL on Windows"},
		{"out/nul.d/x", `the name "nul.d" in its path is the device NUL on Windows`},
		{"out/null", ""},
		{"out/COM0", "its name is the device COM0 on Windows"},
		{"out/CONOUT$.log", "its name is the device CONOUT$ on Windows"},
	} {
		if got := n.Add(tt.path); got != tt.want {
			t.Errorf("Add(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestCaseClashCountsOnlyExportedFiles: a file withheld (for a secret)
// takes no name: another that differs from it only in case is exported,
// since on Windows it meets nothing.
func TestCaseClashCountsOnlyExportedFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeTree(t, root, map[string]string{"out/HEX.txt": "token s3cr3t-value", "out/hex.txt": "clean", "out/Docs/a.md": "s3cr3t-value", "out/docs/b.md": "clean"})
	in := Input{
		Config:  &loop.Config{Name: "c", Export: loop.Export{Paths: []string{"out/**"}}},
		Root:    root,
		Secrets: []secret.Secret{{Name: "TOKEN", Forms: []string{"s3cr3t-value"}}},
	}
	dir, m, err := Write(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	var exported []string
	for name := range readExport(t, dir) {
		if strings.HasPrefix(name, "out/") {
			exported = append(exported, name)
		}
	}
	slices.Sort(exported)
	if diff := cmp.Diff([]string{"out/docs/b.md", "out/hex.txt"}, exported); diff != "" {
		t.Errorf("exported (-want +got):\n%s", diff)
	}
	var withheld []string
	for _, wh := range m.Withheld {
		withheld = append(withheld, wh.Path+": "+wh.Reason)
	}
	want := []string{
		`out/Docs/a.md: it holds the value of the provider variable "TOKEN", or an encoding of it`,
		`out/HEX.txt: it holds the value of the provider variable "TOKEN", or an encoding of it`,
	}
	if diff := cmp.Diff(want, withheld); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
}
