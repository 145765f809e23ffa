package runner

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/state"
)

// isoCommitRoot is a loop root that is a repository committing a.txt,
// dir/b.txt and dir/sub/c.txt, their mtimes and the commit's dates at
// at, its objects packed (git repack -ad) when packed, whose isolated
// builder runs the scripted agent agent with env.
func isoCommitRoot(t *testing.T, agent string, at time.Time, packed bool, env ...string) (*harness, string) {
	t.Helper()
	h, seen := isoGitHarness(t, agent, env...)
	files := map[string]string{"a.txt": "one\nof the root\n", "dir/b.txt": "b\n", "dir/sub/c.txt": strings.Repeat("c is a longer file\n", 40)}
	for rel, content := range files {
		p := filepath.Join(h.root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	date := fmt.Sprintf("@%d +0000", at.Unix())
	datedGit(t, h.root, date, "add", "-A")
	datedGit(t, h.root, date, "commit", "-qm", "the root's files")
	if packed {
		datedGit(t, h.root, date, "repack", "-adq")
	}
	return h, seen
}

// datedGit runs git in root with its author and committer dates at date.
func datedGit(t *testing.T, root, date string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// objectEvents lists the object store's paths the run put back or
// reported, with why.
func objectEvents(evs []ledger.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == ledger.GitReverted && strings.HasPrefix(e.Path, ".git/objects") {
			out = append(out, e.Path+" "+e.Reason)
		}
	}
	return out
}

// TestIsolatedAgentsThatCommitNeverEscalate: an isolated builder that
// commits in its worktree (git commit -am, then git add -A and git
// commit of a copy of a committed file), as Claude Code or Codex do,
// makes git freshen the root's objects it would write again: their mtime
// changes, their content does not. Twenty runs in a row — the root's
// objects loose or packed, its commit made in the same second as the run
// or seconds before — each end at the iteration cap with nothing
// reported about the object store, the node's work published, and the
// store's files as they were. Without the content check every run
// escalated ("the loop root's object store changed during a wave of
// isolated nodes and could not be put back").
func TestIsolatedAgentsThatCommitNeverEscalate(t *testing.T) {
	t.Parallel()
	for i := range 20 {
		packed, before := i%2 == 1, i%4 >= 2
		name := fmt.Sprintf("run %d loose", i+1)
		if packed {
			name = fmt.Sprintf("run %d packed", i+1)
		}
		at := time.Now()
		if before {
			name, at = name+", committed seconds before", at.Add(-3*time.Second)
		}
		t.Run(name, func(t *testing.T) {
			h, seen := isoCommitRoot(t, "git-commit.sh", at, packed)
			objects := listObjects(t, h.root)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out := h.run(ctx)
			if b, _ := os.ReadFile(seen); len(b) > 0 {
				t.Logf("agent output:\n%s", b)
			}
			if out.Status != state.IterationCap {
				t.Errorf("run ended %s: %q; want %s", out.Status, out.Detail, state.IterationCap)
			}
			if got := objectEvents(h.events()); len(got) > 0 {
				t.Errorf("object store events %q, want none", got)
			}
			if n := count(h.events(), ledger.NodeFailed, ""); n > 0 {
				t.Errorf("%d node failures, want none", n)
			}
			if diff := cmp.Diff(objects, listObjects(t, h.root)); diff != "" {
				t.Errorf("the root's object store changed (-before +after):\n%s", diff)
			}
			if b, err := os.ReadFile(filepath.Join(h.root, "copy.txt")); err != nil || string(b) != "b\n" {
				t.Errorf("copy.txt in the loop root = %q, %v; want the node's work published", b, err)
			}
		})
	}
}

// TestIsolatedAgentAndTheRootObjectStore: what an isolated agent does to
// the root's object store by its path. Touching an object, or rewriting
// it with the same content compressed otherwise, is no change; an object
// added is removed; bytes that no longer hash to the object's name, a
// link in an object's place, a touched .idx, are changes that cannot be
// put back, and the run escalates.
func TestIsolatedAgentAndTheRootObjectStore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		packed bool
		script string // sh; $OBJ is dir/b.txt's loose object, $OTHER dir/sub/c.txt's, $PACK and $IDX the pack's files, $NEW the file new wrote
		new    func(t *testing.T, obj string) []byte
		file   string   // which of rootObjectFiles' files the events name (%s)
		want   []string // object store events
		escal  bool     // the run escalates over the object store
	}{
		{name: "touches an object", script: `touch "$OBJ"`},
		{name: "touches a pack", packed: true, script: `touch "$PACK"`},
		{name: "rewrites an object with its content compressed otherwise", new: recompressed,
			script: `rm -f "$OBJ" && cp "$NEW" "$OBJ"`},
		{name: "rewrites an object with another object's bytes", script: `rm -f "$OBJ" && cp "$OTHER" "$OBJ"`,
			file: "OBJ", want: []string{"%s modified; it cannot be put back"}, escal: true},
		{name: "appends to an object", script: `chmod u+w "$OBJ" && printf x >>"$OBJ"`,
			file: "OBJ", want: []string{"%s modified; it cannot be put back"}, escal: true},
		{name: "puts a link to a copy in an object's place", script: `cp "$OBJ" "$OBJ.copy" && rm -f "$OBJ" && ln -s "$(basename "$OBJ").copy" "$OBJ"`,
			file: "OBJ", want: []string{"%s modified; it cannot be put back", "%s.copy created"}, escal: true},
		{name: "changes a byte of a pack", packed: true, script: `chmod u+w "$PACK" && printf Q | dd of="$PACK" bs=1 seek=20 conv=notrunc 2>/dev/null`,
			file: "PACK", want: []string{"%s modified; it cannot be put back"}, escal: true},
		{name: "touches a pack's index", packed: true, script: `touch "$IDX"`,
			file: "IDX", want: []string{"%s modified; it cannot be put back"}, escal: true},
		{name: "removes an object", script: `rm -f "$OBJ"`,
			file: "OBJ", want: []string{"%s deleted; it cannot be put back"}, escal: true},
		{name: "adds an object", script: `echo planted | git --git-dir="$ROOTGIT" hash-object -w --stdin >/dev/null`,
			file: "PLANTED", want: []string{"%s created"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			script := filepath.Join(t.TempDir(), "agent.sh")
			if err := os.WriteFile(script, []byte("#!/bin/sh\nset -eu\n"+tt.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			h, seen := isoCommitRoot(t, "git-look.sh", time.Now().Add(-time.Hour), tt.packed)
			files := rootObjectFiles(t, h.root, tt.packed)
			env := []string{"AGENT=" + script, "ROOTGIT=" + filepath.Join(h.root, ".git")}
			for k, v := range files {
				env = append(env, k+"="+filepath.Join(h.root, v))
			}
			if tt.new != nil {
				newFile := filepath.Join(t.TempDir(), "new")
				if err := os.WriteFile(newFile, tt.new(t, filepath.Join(h.root, files["OBJ"])), 0o444); err != nil {
					t.Fatal(err)
				}
				env = append(env, "NEW="+newFile)
			}
			h.opts.Env = append(h.opts.Env, env...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out := h.run(ctx)
			if b, _ := os.ReadFile(seen); len(b) > 0 {
				t.Logf("agent output:\n%s", b)
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, strings.ReplaceAll(w, "%s", files[tt.file]))
			}
			if diff := cmp.Diff(want, objectEvents(h.events())); diff != "" {
				t.Errorf("object store events (-want +got):\n%s", diff)
			}
			if escalated := strings.Contains(out.Detail, "object store changed"); escalated != tt.escal {
				t.Errorf("run ended %s: %q; want it to escalate over the object store: %t", out.Status, out.Detail, tt.escal)
			}
		})
	}
}

// rootObjectFiles names, relative to root, dir/b.txt's object (OBJ) and
// dir/sub/c.txt's (OTHER) when loose, the pack and its index (PACK, IDX)
// when packed, and the first file the blob "planted\n" would add
// (PLANTED: its object, or the fan-out directory it would create).
func rootObjectFiles(t *testing.T, root string, packed bool) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, rev := range map[string]string{"OBJ": "HEAD:dir/b.txt", "OTHER": "HEAD:dir/sub/c.txt"} {
		id := strings.TrimSpace(rootGit(t, root, "rev-parse", rev))
		out[k] = filepath.Join(".git", "objects", id[:2], id[2:])
	}
	cmd := exec.Command("git", "hash-object", "--stdin")
	cmd.Stdin = strings.NewReader("planted\n")
	b, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(b))
	out["PLANTED"] = filepath.Join(".git", "objects", id[:2])
	if _, err := os.Lstat(filepath.Join(root, out["PLANTED"])); err == nil {
		out["PLANTED"] = filepath.Join(out["PLANTED"], id[2:])
	}
	if !packed {
		return out
	}
	packs, err := filepath.Glob(filepath.Join(root, ".git", "objects", "pack", "pack-*.pack"))
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs %q, %v; want one", packs, err)
	}
	rel, err := filepath.Rel(root, packs[0])
	if err != nil {
		t.Fatal(err)
	}
	out["PACK"], out["IDX"] = rel, strings.TrimSuffix(rel, ".pack")+".idx"
	return out
}

// recompressed is the loose object at obj compressed at another level:
// other bytes, the same object.
func recompressed(t *testing.T, obj string) []byte {
	t.Helper()
	b, err := os.ReadFile(obj)
	if err != nil {
		t.Fatal(err)
	}
	r, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var raw, out bytes.Buffer
	if _, err := raw.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	w, err := zlib.NewWriterLevel(&out, zlib.NoCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(raw.Bytes())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out.Bytes(), b) {
		t.Fatal("recompressing gave the same bytes")
	}
	return out.Bytes()
}
