package gate

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure keeps the gate pure: no package that does I/O, no clock, no
// randomness, no environment. Evidence collection lives in gate/evidence.
func TestPure(t *testing.T) {
	t.Parallel()
	forbidden := map[string]bool{
		"os": true, "os/exec": true, "io/ioutil": true, "net": true, "net/http": true,
		"math/rand": true, "math/rand/v2": true, "crypto/rand": true, "syscall": true,
		"path/filepath": true, "io/fs": true, "unsafe": true, "log": true, "log/slog": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if forbidden[path] || strings.HasPrefix(path, "net/") {
				t.Errorf("%s imports %q: the gate must stay free of I/O", f, path)
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "time" && (sel.Sel.Name == "Now" || sel.Sel.Name == "Since" || sel.Sel.Name == "Until") {
				t.Errorf("%s: time.%s reads the clock; the gate must not", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
