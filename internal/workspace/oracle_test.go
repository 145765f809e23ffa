package workspace

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oracleCases are trees whose snapshot must equal git's tree id.
var oracleCases = []struct {
	name string
	ops  []op
}{
	{name: "empty root"},
	{name: "only empty dirs", ops: []op{dir("e"), dir("f/g/h")}},
	{name: "git sort order", ops: []op{
		file("a.b", "a.b\n"), file("a-b", "a-b\n"), file("b0", "file b0\n"),
		file("a0", "a0\n"), file("a=", "a=\n"), file("a b", "space\n"),
		file("a/x", "in dir a\n"), file("a/.b", "dot\n"), file("b.c", "b.c\n"),
		file("b/c", "in dir b\n"), file("B", "upper\n"), file("_", "under\n"),
		file("é", "utf-8 name\n"),
	}},
	{name: "modes and empty files", ops: []op{
		file("plain", "p\n"), fileMode("exec", "#!/bin/sh\n", 0o755),
		fileMode("owner-x", "o\n", 0o700), fileMode("owner-x-only", "o\n", 0o744),
		fileMode("group-x", "g\n", 0o654), fileMode("other-x", "o\n", 0o645),
		fileMode("readonly", "r\n", 0o444), file("empty", ""),
		fileMode("sub/empty-exec", "", 0o755),
	}},
	{name: "symlinks", ops: []op{
		file("target.txt", "target\n"), dir("d"), file("d/inner", "inner\n"),
		link("to-file", "target.txt"), link("to-dir", "d"), link("dangling", "nope"),
		link("outside", "../../../etc/passwd"), link("absolute", "/etc/passwd"),
		link("sub/up", "../target.txt"), link("to-loop", ".loop/state"),
		link(".gitignore", "target.txt"), file(".loop/state", "s\n"),
	}},
	{name: "empty and ignored-only dirs", ops: []op{
		file("keep/file", "k\n"), dir("empty"), dir("nested/empty/dirs"),
		file(".gitignore", "*.o\n"), file("objs/x.o", "o\n"), file("objs/deep/y.o", "o\n"),
		file("only-git/.git/HEAD", "nonsense\n"),
	}},
	{name: "nested gitignore with negation and dir patterns", ops: []op{
		file(".gitignore", "# comment\n\n*.log\n!keep.log\nbuild/\n/rootonly.txt\ndocs/*.tmp\n"),
		file("a.log", "x\n"), file("keep.log", "k\n"), file("rootonly.txt", "r\n"),
		file("sub/b.log", "x\n"), file("sub/keep.log", "k\n"), file("sub/rootonly.txt", "r\n"),
		file("build/out", "o\n"), file("sub/build/out", "o\n"), file("lib/build", "file\n"),
		file("docs/x.tmp", "t\n"), file("docs/deep/x.tmp", "t\n"), file("docs/x.md", "m\n"),
		file("sub/.gitignore", "!*.log\nlocal/\n"), file("sub/re.log", "re\n"),
		file("sub/local/x", "l\n"), file("local/x", "not ignored here\n"),
		file("sub/deep/.gitignore", "*.txt\n!keep.txt\n"), file("sub/deep/a.txt", "a\n"),
		file("sub/deep/keep.txt", "k\n"), file("sub/deep/more/b.txt", "b\n"),
		file("sub/deep/more/keep.txt", "k\n"),
	}},
	{name: "negation does not reach into excluded dirs", ops: []op{
		file(".gitignore", "tmp*\n!tmpdir/\n/foo\n!foo\nout/\n!out/keep\n"),
		file("tmpdir/tmpfile", "ignored: tmp* matches its base name\n"),
		file("tmpdir/other", "kept\n"), file("tmpfile", "ignored\n"),
		file("foo/bar", "kept: /foo only matches the path foo\n"),
		file("out/keep", "ignored: out/ is excluded\n"),
	}},
	{name: "everything except", ops: []op{
		file(".gitignore", "/*\n!/.gitignore\n!/keep/\n"),
		file("drop", "d\n"), file("dropdir/x", "d\n"), file("keep/x", "k\n"),
		file("keep/drop/y", "k\n"),
	}},
	{name: "double star patterns", ops: []op{
		file(".gitignore", "**/gen/\ndocs/**/*.md\n**/cache\n"),
		file("gen/a", "g\n"), file("src/gen/b", "g\n"), file("src/gen.go", "k\n"),
		file("docs/a.md", "m\n"), file("docs/x/y/b.md", "m\n"), file("docs/x/b.txt", "k\n"),
		file("README.md", "k\n"), file("cache", "c\n"), file("a/b/cache/x", "c\n"),
	}},
	{name: "double star edge cases", ops: []op{
		file(".gitignore", "foo/**\n!foo/keep\n**/a/b\nx/**/y\n!x/y/z\n"),
		file("foo/keep", "kept: foo/** excludes what is inside foo, not foo\n"),
		file("foo/drop", "d\n"), file("foo/sub/drop", "d\n"),
		file("a/a/b", "ignored: ** is not greedy\n"), file("q/a/bb", "k\n"),
		file("x/y/z", "ignored: its dir x/y is\n"), file("x/y/w", "ignored\n"), file("x/m/n/y/w", "ignored\n"),
	}},
	{name: "bracket expressions", ops: []op{
		file(".gitignore", "[!a]*.c\n[^x]*.h\n\\[!lit\n"),
		file("a.c", "k\n"), file("b.c", "i\n"), file("x.h", "k\n"), file("y.h", "i\n"),
		file("[!lit", "i\n"), file("[lit", "k\n"),
	}},
	{name: "pattern syntax", ops: []op{
		file(".gitignore", "trail.txt   \n\\#hash\n\\!bang\ncrlf.txt\r\n[ab]?.c\n"+
			"sp\\ \n"),
		file("trail.txt", "t\n"), file("#hash", "h\n"), file("!bang", "b\n"),
		file("crlf.txt", "c\n"), file("a1.c", "i\n"), file("c1.c", "k\n"),
		file("sp ", "s\n"), file("sp", "k\n"),
		file("self/.gitignore", ".gitignore\n*.tmp\n"), file("self/a.tmp", "i\n"), file("self/b", "k\n"),
	}},
	{name: "git and loop dirs", ops: []op{
		file(".loop/state.json", "{}\n"), file(".loop/runs/1/log", "l\n"),
		file("sub/.loop/x", "only the root .loop is ours\n"),
		file("sub/.git/config", "not a repository\n"), file("sub/a", "a\n"),
		file("wt/.git", "gitdir: /nonexistent\n"), file("wt/b", "b\n"),
		file(".git/info/exclude", "*.secret\n"), file(".gitignore", "!keep.secret\n"),
		file("a.secret", "s\n"), file("keep.secret", "k\n"),
	}},
}

func TestSnapshotMatchesGit(t *testing.T) {
	for _, tc := range oracleCases {
		t.Run(tc.name, func(t *testing.T) {
			root := build(t, tc.ops...)
			wantTree, wantFiles := oracle(t, root)
			h := NewHasher(root)
			got, err := h.Snapshot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(Snapshot(wantTree), got); diff != "" {
				t.Errorf("Snapshot() mismatch (-git +ours):\n%s", diff)
			}
			files, err := h.Files(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantFiles, files); diff != "" {
				t.Errorf("Files() mismatch (-git ls-files +ours):\n%s", diff)
			}
		})
	}
}
