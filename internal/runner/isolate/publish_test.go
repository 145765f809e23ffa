package isolate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPublish(t *testing.T) {
	t.Parallel()
	seed := map[string]string{"a": "base", "b": "base", "x.sh": "#!/bin/sh\n", "d/c": "base", ".gitignore": "*.log\n"}
	tests := []struct {
		name string
		run  func(e *env) Report // returns the Report of the last Publish
		want Report
		root map[string]string // expected content in the root afterwards
	}{{
		name: "modified created and mode are published",
		run: func(e *env) Report {
			e.prepare("coder")
			e.write("coder", "a", "edited")
			e.write("coder", "new/deep/file", "created")
			chmod(e.t, e.dirs["coder"], "x.sh", 0o755)
			return e.publish("coder")
		},
		want: Report{Published: []Change{
			{Node: "coder", Path: "a", Kind: Modified},
			{Node: "coder", Path: "new/deep/file", Kind: Created},
			{Node: "coder", Path: "x.sh", Kind: Mode},
		}},
		root: map[string]string{"a": "edited", "new/deep/file": "created", "b": "base"},
	}, {
		name: "deletion is reported, not propagated, and reported once",
		run: func(e *env) Report {
			e.prepare("coder")
			rm(e.t, e.dirs["coder"], "d/c")
			if diff := cmp.Diff(Report{Deletions: []Change{{Node: "coder", Path: "d/c", Kind: Deleted}}}, e.publish("coder")); diff != "" {
				e.t.Errorf("first Publish (-want +got):\n%s", diff)
			}
			e.prepare("coder")
			return e.publish("coder")
		},
		root: map[string]string{"d/c": "base"},
	}, {
		name: "same path in one wave: the first in order wins",
		run: func(e *env) Report {
			e.prepare("coder")
			e.prepare("tester")
			e.write("coder", "a", "coder's")
			e.write("tester", "a", "tester's")
			e.write("tester", "b", "tester's")
			return e.publish("coder", "tester")
		},
		want: Report{
			Published: []Change{{Node: "coder", Path: "a", Kind: Modified}, {Node: "tester", Path: "b", Kind: Modified}},
			Conflicts: []Conflict{{Path: "a", Winner: "coder", Loser: "tester"}},
		},
		root: map[string]string{"a": "coder's", "b": "tester's"},
	}, {
		name: "a later wave edits on top of an earlier publication",
		run: func(e *env) Report {
			e.prepare("coder")
			e.prepare("tester") // seeded in wave 1, before coder published
			e.write("coder", "a", "coder's")
			e.publish("coder")
			e.prepare("tester") // wave 2: re-seeded with coder's version
			if got := e.inTree("tester", "a"); got != "coder's" {
				e.t.Errorf("tester's a after re-seed = %q, want coder's publication", got)
			}
			e.write("tester", "a", "coder's + tester's")
			return e.publish("tester")
		},
		want: Report{Published: []Change{{Node: "tester", Path: "a", Kind: Modified}}},
		root: map[string]string{"a": "coder's + tester's"},
	}, {
		name: "a non-isolated write to the root wins",
		run: func(e *env) Report {
			e.prepare("coder")
			e.write("coder", "a", "coder's")
			e.writeRoot("a", "planner's, in the root")
			return e.publish("coder")
		},
		want: Report{Conflicts: []Conflict{{Path: "a", Winner: LoopRoot, Loser: "coder"}}},
		root: map[string]string{"a": "planner's, in the root"},
	}, {
		name: "a winner of an earlier iteration is the loop root",
		run: func(e *env) Report {
			e.prepare("coder")
			e.prepare("tester")
			e.write("coder", "a", "coder's")
			e.write("tester", "a", "tester's")
			e.publish("coder", "tester")
			e.m.BeginIteration()
			e.prepare("tester")
			return e.publish("tester")
		},
		want: Report{Conflicts: []Conflict{{Path: "a", Winner: LoopRoot, Loser: "tester"}}},
		root: map[string]string{"a": "coder's"},
	}, {
		name: "ignored files are not published, by the root's or the node's rules",
		run: func(e *env) Report {
			e.prepare("coder")
			e.write("coder", "debug.log", "ignored by the root")
			e.write("coder", "web/.gitignore", "dist/\n")
			e.write("coder", "web/dist/app.js", "ignored by the node's new rule")
			e.write("coder", "web/app.ts", "source")
			return e.publish("coder")
		},
		want: Report{Published: []Change{
			{Node: "coder", Path: "web/.gitignore", Kind: Created},
			{Node: "coder", Path: "web/app.ts", Kind: Created},
		}},
		root: map[string]string{"debug.log": "<none>", "web/dist/app.js": "<none>", "web/app.ts": "source"},
	}, {
		name: "names with a backslash are published as they are",
		run: func(e *env) Report {
			e.prepare("coder")
			e.write("coder", `we\ird`, "x")
			e.write("coder", `d\x/y`, "y")
			return e.publish("coder")
		},
		want: Report{Published: []Change{
			{Node: "coder", Path: `d\x/y`, Kind: Created},
			{Node: "coder", Path: `we\ird`, Kind: Created},
		}},
		root: map[string]string{`we\ird`: "x", `d\x/y`: "y"},
	}, {
		name: "the root's .git/info/exclude applies",
		run: func(e *env) Report {
			e.writeRoot(".git/info/exclude", "local.env\n")
			e.prepare("coder")
			e.write("coder", "local.env", "excluded")
			e.write("coder", "shared.env", "not excluded")
			return e.publish("coder")
		},
		want: Report{Published: []Change{{Node: "coder", Path: "shared.env", Kind: Created}}},
		root: map[string]string{"local.env": "<none>", "shared.env": "not excluded"},
	}, {
		name: "a publication overwritten in the root since names the loop root",
		run: func(e *env) Report {
			e.prepare("coder")
			e.prepare("tester")
			e.write("coder", "a", "coder's")
			e.write("tester", "a", "tester's")
			e.publish("coder")
			e.writeRoot("a", "planner's")
			return e.publish("tester")
		},
		want: Report{Conflicts: []Conflict{{Path: "a", Winner: LoopRoot, Loser: "tester"}}},
		root: map[string]string{"a": "planner's"},
	}, {
		name: "a file replaced by a directory, and a new file where the root has a directory",
		run: func(e *env) Report {
			dir := e.prepare("coder")
			rm(e.t, dir, "b")
			e.write("coder", "b/inside", "new")
			rm(e.t, dir, "d")
			e.write("coder", "d", "a file now")
			return e.publish("coder")
		},
		want: Report{
			Refused: []Refusal{
				{Node: "coder", Path: "b/inside", Reason: ReasonUnreachable},
				{Node: "coder", Path: "d", Reason: ReasonUnreachable},
			},
			Deletions: []Change{
				{Node: "coder", Path: "b", Kind: Deleted},
				{Node: "coder", Path: "d/c", Kind: Deleted},
			},
		},
		root: map[string]string{"b": "base", "d/c": "base"},
	}, {
		name: "touching without changing publishes nothing",
		run: func(e *env) Report {
			e.prepare("coder")
			e.write("coder", "a", "base")
			return e.publish("coder")
		},
		root: map[string]string{"a": "base"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, seed)
			chmod(t, e.root, "x.sh", 0o644)
			got := tt.run(e)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Publish (-want +got):\n%s", diff)
			}
			for p, want := range tt.root {
				if got := e.inRoot(p); got != want {
					t.Errorf("root %s = %q, want %q", p, got, want)
				}
			}
		})
	}
}

func TestPublishNestedNewTree(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "base"})
	dir := e.prepare("coder")
	var want []Change
	for _, d := range []string{"n", "n/1", "n/1/2", "n/1/2/3", "n/1/2/3/4", "n/other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"f1", "f2"} {
			e.write("coder", d+"/"+f, d+f)
			want = append(want, Change{Node: "coder", Path: d + "/" + f, Kind: Created})
		}
	}
	if err := os.Rename(filepath.Join(dir, "n/other"), filepath.Join(dir, "n/1/moved")); err != nil {
		t.Fatal(err)
	}
	want = want[:len(want)-2]
	want = append(want[:2], append([]Change{
		{Node: "coder", Path: "n/1/moved/f1", Kind: Created}, {Node: "coder", Path: "n/1/moved/f2", Kind: Created},
	}, want[2:]...)...)
	got := e.publish("coder")
	sortChanges(got.Published)
	sortChanges(want)
	if diff := cmp.Diff(Report{Published: want}, got); diff != "" {
		t.Errorf("Publish (-want +got):\n%s", diff)
	}
	if got := e.inRoot("n/1/2/3/4/f2"); got != "n/1/2/3/4f2" {
		t.Errorf("root n/1/2/3/4/f2 = %q", got)
	}
}

func chmod(t *testing.T, dir, rel string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(rel)), mode); err != nil {
		t.Fatal(err)
	}
}

func rm(t *testing.T, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

func sortChanges(cs []Change) {
	slices.SortFunc(cs, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
}

// TestPublishBusyNode publishes a worktree changed in every way a node
// can at once: edits, new nested directories, a directory deleted and
// one moved, a mode change, a link out of the root and a write into
// .git; and then a burst of new directories made faster than one could
// watch them.
func TestPublishBusyNode(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]string{"a": "1", "d/c": "1", "d/e/f": "1", "x.sh": "1", "m/1": "1", "m/2/3": "1"})
	dir := e.prepare("coder")
	e.write("coder", "a", "edited")
	e.write("coder", "new/1/2/f", "nested")
	e.write("coder", "new/1/g", "nested")
	e.write("coder", ".git/config", "x")
	rm(t, dir, "d")
	chmod(t, dir, "x.sh", 0o755)
	mkLink(t, dir, "/etc", "etc")
	if err := os.Rename(filepath.Join(dir, "m"), filepath.Join(dir, "new/m2")); err != nil {
		t.Fatal(err)
	}
	c := func(p, kind string) Change { return Change{Node: "coder", Path: p, Kind: kind} }
	want := Report{
		Published: []Change{c("a", Modified), c("new/1/2/f", Created), c("new/1/g", Created), c("new/m2/1", Created), c("new/m2/2/3", Created), c("x.sh", Mode)},
		Refused:   []Refusal{{Node: "coder", Path: ".git", Reason: ReasonGit}, {Node: "coder", Path: "etc", Reason: ReasonOutside}},
		Deletions: []Change{c("d/c", Deleted), c("d/e/f", Deleted), c("m/1", Deleted), c("m/2/3", Deleted)},
	}
	if diff := cmp.Diff(want, e.publish("coder"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Publish of a busy node (-want +got):\n%s", diff)
	}
	for i := range 50 {
		e.write("coder", filepath.Join("burst", string(rune('a'+i%26)), "x", "y", "f"+string(rune('a'+i/26))), "z")
	}
	if rep := e.publish("coder"); len(rep.Published) != 50 {
		t.Errorf("published %d files of a burst, want 50: %+v", len(rep.Published), rep)
	}
}
