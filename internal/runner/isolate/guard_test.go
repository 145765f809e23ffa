package isolate

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPublishRefuses(t *testing.T) {
	t.Parallel()
	seed := map[string]string{"a": "base", "loop.toml": "base", "d/e/f": "base", "up": "base"}
	tests := []struct {
		name    string
		node    func(e *env, dir string)
		want    []Refusal
		publish []Change
		tree    map[string]string // the worktree afterwards
		missing []string          // absent from the root afterwards
	}{{
		name: "writes into .git and .loop",
		node: func(e *env, dir string) {
			e.write("coder", ".git/config", "[core]")
			e.write("coder", ".git/hooks/pre-commit", "evil")
			e.write("coder", "d/.git/HEAD", "nested")
			e.write("coder", ".loop/state.json", "{}")
		},
		want: []Refusal{
			{Node: "coder", Path: ".git", Reason: ReasonGit},
			{Node: "coder", Path: ".loop", Reason: ReasonLoop},
			{Node: "coder", Path: "d/.git", Reason: ReasonGit},
		},
		tree:    map[string]string{".git/config": "<none>", ".loop/state.json": "<none>", "d/.git/HEAD": "<none>"},
		missing: []string{".git", ".loop/state.json", "d/.git"},
	}, {
		name: "writes into .loop spelt as a case-folding disk takes it",
		node: func(e *env, dir string) {
			e.write("coder", ".LOOP/state.json", "{}")
			e.write("coder", ".Loop./x", "x")
		},
		want: []Refusal{
			{Node: "coder", Path: ".LOOP", Reason: ReasonLoop},
			{Node: "coder", Path: ".Loop.", Reason: ReasonLoop},
		},
		tree:    map[string]string{".LOOP/state.json": "<none>", ".Loop./x": "<none>"},
		missing: []string{".LOOP", ".Loop."},
	}, {
		name: "a .git file at the top of the worktree",
		node: func(e *env, dir string) { e.write("coder", ".git", "gitdir: /elsewhere") },
		want: []Refusal{{Node: "coder", Path: ".git", Reason: ReasonGit}},
		tree: map[string]string{".git": "<none>"},
	}, {
		name: "symlinks that lead outside the root",
		node: func(e *env, dir string) {
			mkLink(e.t, dir, "/etc", "etc")
			mkLink(e.t, dir, "../../x", "d/out")
			mkLink(e.t, dir, "../../../../../x", "d/e/far")
			rm(e.t, dir, "up")
			mkLink(e.t, dir, "..", "up") // replaces a file
			mkLink(e.t, dir, "e/f", "d/fine")
		},
		want: []Refusal{
			{Node: "coder", Path: "d/e/far", Reason: ReasonOutside},
			{Node: "coder", Path: "d/out", Reason: ReasonOutside},
			{Node: "coder", Path: "etc", Reason: ReasonOutside},
			{Node: "coder", Path: "up", Reason: ReasonOutside},
		},
		publish: []Change{{Node: "coder", Path: "d/fine", Kind: Created}},
		tree:    map[string]string{"etc": "<none>", "d/out": "<none>", "d/e/far": "<none>", "up": "base", "d/fine": "-> e/f"},
		missing: []string{"etc", "d/out", "d/e/far"},
	}, {
		name: "symlinks into .git and .loop",
		node: func(e *env, dir string) {
			mkLink(e.t, dir, ".git/hooks", "hooks")
			mkLink(e.t, dir, "../.loop", "d/loop")
		},
		want: []Refusal{
			{Node: "coder", Path: "d/loop", Reason: ReasonLinkLoop},
			{Node: "coder", Path: "hooks", Reason: ReasonLinkGit},
		},
		missing: []string{"hooks", "d/loop"},
	}, {
		name: "protected paths",
		node: func(e *env, dir string) {
			e.write("coder", "loop.toml", "weakened")
			e.write("coder", "secret/new", "protected too")
		},
		want: []Refusal{
			{Node: "coder", Path: "loop.toml", Reason: ReasonProtected},
			{Node: "coder", Path: "secret/new", Reason: ReasonProtected},
		},
		tree:    map[string]string{"loop.toml": "base", "secret/new": "<none>"},
		missing: []string{"secret/new"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, seed, "loop.toml", "secret/new")
			e.m.opts.Protected = func(rel string) bool { return rel == "loop.toml" || rel == "secret/new" }
			tt.node(e, e.prepare("coder"))
			if diff := cmp.Diff(Report{Published: tt.publish, Refused: tt.want}, e.publish("coder")); diff != "" {
				t.Errorf("Publish (-want +got):\n%s", diff)
			}
			for p, want := range tt.tree {
				if got := e.inTree("coder", p); got != want {
					t.Errorf("worktree %s = %q, want %q (restored)", p, got, want)
				}
			}
			for _, p := range tt.missing {
				if got := e.inRoot(p); got != "<none>" {
					t.Errorf("root %s = %q, want nothing", p, got)
				}
			}
			e.prepare("coder")
			if diff := cmp.Diff(Report{}, e.publish("coder")); diff != "" {
				t.Errorf("second Publish repeats refusals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPublishNeverWritesThroughALinkedParent: a parent directory of a
// changed path that became a symbolic link in the root (into .git/hooks,
// or out of the root) or a file, during the wave or while the node's
// changes are being published (after publish checked the path, before it
// writes), is never written through: the change is refused as
// unreachable, and nothing appears where the link leads.
func TestPublishNeverWritesThroughALinkedParent(t *testing.T) {
	t.Parallel()
	for _, when := range []string{"during the wave", "while publishing"} {
		for _, into := range []string{"hooks", "outside", "file"} {
			t.Run(when+"/"+into, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, map[string]string{"d/c": "base", ".git/hooks/README": "hooks"})
				outside := t.TempDir()
				e.prepare("coder")
				e.write("coder", "d/c", "coder's")
				swapped := false
				swap := func() {
					swapped = true
					d := filepath.Join(e.root, "d")
					if err := os.RemoveAll(d); err != nil {
						t.Fatal(err)
					}
					switch into {
					case "hooks":
						mkLink(t, e.root, ".git/hooks", "d")
					case "outside":
						mkLink(t, e.root, outside, "d")
					default:
						e.writeRoot("d", "a file")
					}
				}
				if when == "during the wave" {
					swap()
				} else {
					e.m.now = func() time.Time {
						if !swapped {
							swap()
						}
						return time.Now()
					}
				}
				want := Report{Refused: []Refusal{{Node: "coder", Path: "d/c", Reason: ReasonUnreachable}}}
				if diff := cmp.Diff(want, e.publish("coder")); diff != "" {
					t.Errorf("Publish (-want +got):\n%s", diff)
				}
				if !swapped {
					t.Fatal("publish wrote without looking at the time: the parent was never swapped")
				}
				for dir, want := range map[string][]string{filepath.Join(e.root, ".git", "hooks"): {"README"}, outside: nil} {
					if diff := cmp.Diff(want, names(t, dir)); diff != "" {
						t.Errorf("%s (-want +got):\n%s", dir, diff)
					}
				}
			})
		}
	}
}

// names lists the names in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

func TestLinkReason(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	writeFile(t, root, "a/b/file", "x")
	mkLink(t, root, "../..", "a/b/top") // the root itself
	mkLink(t, root, "b", "a/alias")     // a/b
	mkLink(t, root, "loop1", "a/loop2") // a cycle
	mkLink(t, root, "loop2", "a/loop1") //
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tests := []struct{ path, target, want string }{
		{"a/x", "b/file", ""},
		{"a/x", "alias/file", ""},
		{"a/x", "../a/b/top/a", ""},
		{"a/x", "/etc/passwd", ReasonOutside},
		{"a/x", "../../etc", ReasonOutside},
		{"a/x", "", ReasonOutside},
		{"a/x", "b/top/..", ReasonOutside},       // lexically a/b, physically the root's parent
		{"a/x", "alias/top/../x", ReasonOutside}, // through two links
		{"a/x", "loop1", ReasonOutside},
		{"a/x", "../.git/config", ReasonLinkGit},
		{"a/x", "b/top/.loop", ReasonLinkLoop},
	}
	for _, tt := range tests {
		if got := linkReason(r, tt.path, tt.target); got != tt.want {
			t.Errorf("linkReason(%q, %q) = %q, want %q", tt.path, tt.target, got, tt.want)
		}
	}
}

func TestExcludedTop(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, top, reason string }{
		{".git", ".git", ReasonGit},
		{".git/config", ".git", ReasonGit},
		{"a/.git/x/y", "a/.git", ReasonGit},
		{".loop/worktrees/x", ".loop", ReasonLoop},
		{".LOOP/x", ".LOOP", ReasonLoop}, // .loop itself on a case-folding disk
		{".Loop.", ".Loop.", ReasonLoop}, // and on Windows, which drops trailing dots
		{"a/.loop/x", "", ""},
		{".loops/x", "", ""},
		{".gitignore", "", ""},
		{"a/.github/x", "", ""},
	}
	for _, tt := range tests {
		top, reason := excludedTop(tt.path)
		if diff := cmp.Diff([2]string{tt.top, tt.reason}, [2]string{top, reason}); diff != "" {
			t.Errorf("excludedTop(%q) (-want +got):\n%s", tt.path, diff)
		}
	}
}

func mkLink(t *testing.T, dir, target, rel string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
