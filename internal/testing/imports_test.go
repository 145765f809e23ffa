// Package testing_test keeps the test helpers under internal/testing (the
// GitHub and artifact service fakes) out of the shipped program: they
// serve hand-made answers, so code that runs in a job must never reach
// them.
package testing_test

import (
	"bufio"
	"errors"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// root is the module's directory, seen from this package's.
const root = "../.."

// TestNoProductionCodeImportsTestHelpers: no non-test Go file of the
// module, whatever its build tags, imports a package under
// internal/testing — except the helpers themselves.
func TestNoProductionCodeImportsTestHelpers(t *testing.T) {
	t.Parallel()
	helpers := modulePath(t) + "/internal/testing"
	own := filepath.Join(root, "internal", "testing")
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != root && skipDir(d.Name()):
			return filepath.SkipDir
		case d.IsDir() && p == own:
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go"):
			return nil
		}
		files++
		for _, path := range imports(t, p) {
			if path == helpers || strings.HasPrefix(path, helpers+"/") {
				t.Errorf("%s imports %q, a test helper", p, path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("only %d Go files found under %s: is root wrong?", files, root)
	}
}

// skipDir reports whether a directory holds no code of the module: the go
// tool ignores testdata and names starting with "." or "_".
func skipDir(name string) bool {
	return name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

func imports(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, path)
	}
	return out
}

// modulePath reads the module directive of go.mod.
func modulePath(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	t.Fatal(errors.Join(sc.Err(), errors.New("go.mod has no module directive")))
	return ""
}
