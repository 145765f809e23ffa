package edit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/workspace"
)

// FuzzApply parses and applies arbitrary replies in a root with a .git, a
// .loop, a protected file and links to a directory outside: whatever the
// reply, nothing outside the root changes, nothing in .git, .loop or the
// protected file changes, and a reply that fails changes nothing at all.
func FuzzApply(f *testing.F) {
	block := func(path, search, replace string) string {
		return path + "\n<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"
	}
	f.Add(block("a.go", "package a\n", "package b\n"))
	f.Add(block("../x", "", "y\n"))
	f.Add(block("linked/target.txt", "outside\n", "pwned\n"))
	f.Add(block("alias", "outside\n", "pwned\n"))
	f.Add(block(".git/config", "[core]\n", "x\n"))
	f.Add(block(".LOOP/state/run.json", "", "x\n"))
	f.Add(block("loop.toml", "name = \"x\"\n", "y\n"))
	f.Add(block("a.go", "package a\n", "package b\n") + block("new/f", "", "n\n") + block("a.go", "nope\n", "x\n"))
	f.Fuzz(func(t *testing.T, reply string) {
		blocks, err := Parse(reply)
		if err != nil {
			return
		}
		root, outside := tree(t, map[string]string{"a.go": "package a\n", "loop.toml": "name = \"x\"\n"})
		before, beforeOut := contents(t, root), contents(t, outside)
		w, err := workspace.OpenWriter(root)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		written, err := Apply(w, blocks, Options{Refuse: protect})
		after := contents(t, root)
		if diff := cmp.Diff(beforeOut, contents(t, outside)); diff != "" {
			t.Fatalf("outside the root changed:\n%s", diff)
		}
		if err != nil {
			if diff := cmp.Diff(before, after); diff != "" {
				t.Fatalf("a failed reply (%v) changed the root:\n%s", err, diff)
			}
			return
		}
		for p := range after {
			if before[p] == after[p] {
				continue
			}
			lower := strings.ToLower(p)
			if strings.HasPrefix(lower, ".git/") || strings.Contains(lower, "/.git/") || strings.HasPrefix(lower, ".loop/") || protect(p) != "" {
				t.Fatalf("%s changed", p)
			}
			found := false
			for _, w := range written {
				found = found || w == p
			}
			if !found {
				t.Fatalf("%s changed but is not among the written %v", p, written)
			}
		}
	})
}
