package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelOutputStaysAwayFromTheGate keeps what agents print away from
// the gate's write path: in the runner, an agent's answer is read in one
// place only (runNode, for judges, whose answers only gate.ParseVerdict
// reads, and for openai builders, whose answers are edits applied to the
// workspace, which the checks then measure), and an agent's raw output (stdout, tails) is never read at all.
// Builders' words cannot become evidence.
func TestModelOutputStaysAwayFromTheGate(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]map[string]bool{
		"Answer": {"runNode": true},
	}
	forbidden := map[string]bool{"Stdout": true, "Tail": true, "Stderr": true}
	// Functions that read the output of a program the runner runs for
	// itself, never an agent's: ReadCheckout reads `git config`'s.
	ownProgram := map[string]bool{"ReadCheckout": true}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				name := sel.Sel.Name
				if forbidden[name] && !ownProgram[fn.Name.Name] {
					t.Errorf("%s: %s reads .%s, an agent's raw output", fset.Position(sel.Pos()), fn.Name.Name, name)
				}
				if fns, ok := allowed[name]; ok && !fns[fn.Name.Name] {
					t.Errorf("%s: %s reads .%s; only %v may", fset.Position(sel.Pos()), fn.Name.Name, name, keys(fns))
				}
				return true
			})
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
