package runner

import (
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
)

// isoScripted is a loop with one isolated builder, a scripted agent of
// testdata/agents run by the command provider ($AGENT, output to $SEEN).
const isoScripted = `name = "isogit"
[stop]
max_iterations = 1
[providers.a]
command = ["sh", "-c", 'cat >/dev/null; "$AGENT" >"$SEEN" 2>&1']
[[node]]
name = "coder"
provider = "a"
goals = ["g"]
isolate = true
[[goal]]
name = "g"
  [[goal.check]]
  type = "file_exists"
  path = "never.txt"
`

// isoGitHarness is a loop root that is a repository holding a.txt, whose
// isolated builder runs the scripted agent agent with env.
func isoGitHarness(t *testing.T, agent string, env ...string) (*harness, string) {
	t.Helper()
	h := newHarness(t, isoScripted, nil)
	if err := os.WriteFile(filepath.Join(h.root, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitRepo(t, h.root)
	rootGit(t, h.root, "add", "a.txt")
	rootGit(t, h.root, "commit", "-qm", "add a.txt")
	seen := filepath.Join(t.TempDir(), "seen")
	script, err := filepath.Abs(filepath.Join("..", "..", "testdata", "agents", agent))
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Env = append(os.Environ(), append(env, "AGENT="+script, "SEEN="+seen, "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir())...)
	return h, seen
}

// rootGit runs git in the loop root and returns its output.
func rootGit(t *testing.T, root string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestIsolatedAgentSeesItsChangeThroughGit(t *testing.T) {
	t.Parallel()
	h, seen := isoGitHarness(t, "git-look.sh")
	h.run(context.Background())
	got, err := os.ReadFile(seen)
	if err != nil {
		t.Fatal(err)
	}
	want := "== status\n M a.txt\n?? new.txt\n== diff\na.txt\n== log\nloop: base of node coder\nadd a.txt\ninit\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("what git showed the isolated agent (-want +got):\n%s", diff)
	}
	if b, err := os.ReadFile(filepath.Join(h.root, "new.txt")); err != nil || string(b) != "new\n" {
		t.Errorf("new.txt in the loop root = %q, %v; want it published", b, err)
	}
}

// TestIsolatedAgentCannotReachTheRootRepository: an isolated agent that
// commits, tags, configures and hooks its own repository, then turns its
// .git into a link to the root's and creates a branch and sets config
// through it, leaves the root's refs and config as they were; the
// branch is put back and logged, and its working tree is published.
func TestIsolatedAgentCannotReachTheRootRepository(t *testing.T) {
	t.Parallel()
	h, seen := isoGitHarness(t, "git-hostile.sh", "HOSTILE=through")
	refs := rootGit(t, h.root, "for-each-ref")
	config, err := os.ReadFile(filepath.Join(h.root, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	objects := listObjects(t, h.root)
	h.run(context.Background())
	if out, _ := os.ReadFile(seen); len(out) > 0 {
		t.Logf("agent output:\n%s", out)
	}
	if diff := cmp.Diff(objects, listObjects(t, h.root)); diff != "" {
		t.Errorf("the root's object store changed (-before +after):\n%s", diff)
	}
	if got := rootGit(t, h.root, "diff", "--cached", "--name-only"); got != "" {
		t.Errorf("the root's index stages %q, want nothing", got)
	}
	if got := rootGit(t, h.root, "for-each-ref"); got != refs {
		t.Errorf("the root's refs = %q, want them as before: %q", got, refs)
	}
	if got, _ := os.ReadFile(filepath.Join(h.root, ".git", "config")); string(got) != string(config) {
		t.Errorf("the root's config = %q, want it as before", got)
	}
	if b, _ := os.ReadFile(filepath.Join(h.root, "a.txt")); string(b) != "working tree of the node\n" {
		t.Errorf("a.txt in the loop root = %q, want the node's working tree", b)
	}
	var reverted []string
	objectsRemoved := 0
	for _, e := range h.events() {
		switch {
		case e.Type == ledger.GitReverted && strings.HasPrefix(e.Path, ".git/objects/") && e.Reason == "created":
			objectsRemoved++
		case e.Type == ledger.GitReverted:
			reverted = append(reverted, fmt.Sprintf("%s %s", e.Path, e.Reason))
		}
	}
	if objectsRemoved == 0 {
		t.Error("no object the node wrote into the root's store was logged as removed")
	}
	want := []string{".git/config modified", ".git/index modified", ".git/refs/heads/evil-through-link created"}
	if diff := cmp.Diff(want, reverted); diff != "" {
		t.Errorf("git paths put back (-want +got):\n%s", diff)
	}
}

// listObjects lists the files of the root's object store.
func listObjects(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	base := filepath.Join(root, ".git", "objects")
	err := filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(base, p)
			out = append(out, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestIsolatedAgentCorruptingARootObjectEscalates: an isolated agent that
// rewrites an object file of the root's store by its path (content the
// runner did not keep, so it cannot be put back) has that logged, and the
// run escalates instead of measuring a root whose history changed.
func TestIsolatedAgentCorruptingARootObjectEscalates(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "corrupt.sh")
	body := "#!/bin/sh\nchmod u+w \"$OBJ\" && printf garbage >\"$OBJ\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := isoGitHarness(t, "git-look.sh")
	id := strings.TrimSpace(rootGit(t, h.root, "rev-parse", "HEAD"))
	obj := filepath.Join(h.root, ".git", "objects", id[:2], id[2:])
	h.opts.Env = append(h.opts.Env, "AGENT="+script, "OBJ="+obj)
	out := h.run(context.Background())
	var reasons []string
	for _, e := range h.events() {
		if e.Type == ledger.GitReverted && strings.HasPrefix(e.Path, ".git/objects/") {
			reasons = append(reasons, e.Path+" "+e.Reason)
		}
	}
	want := []string{".git/objects/" + id[:2] + "/" + id[2:] + " modified; it cannot be put back"}
	if diff := cmp.Diff(want, reasons); diff != "" {
		t.Errorf("object events (-want +got):\n%s", diff)
	}
	if !strings.Contains(out.Detail, "object store changed") {
		t.Errorf("run ended %s: %q; want it to escalate over the root's object store", out.Status, out.Detail)
	}
}

// BenchmarkRepoGuard10k measures what keeping the root repository costs
// around a wave of isolated nodes (refs and index recorded before and
// compared after, the object store listed by lstat before and after), in
// a repository of 10,000 committed files left loose (no gc): the worst
// case for the object store's listing.
func BenchmarkRepoGuard10k(b *testing.B) {
	root := benchRoot(b, 10_000)
	cmd := exec.Command("sh", "-c", "git init -q && git add -A && git -c gc.auto=0 -c user.name=b -c user.email=b@b commit -qm init")
	cmd.Dir, cmd.Env = root, append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%v\n%s", err, out)
	}
	for b.Loop() {
		refs := scanRefs(b.Context(), root)
		objs, err := scanObjects(root)
		if err != nil || refs.err != nil || len(objs) < 10_000 {
			b.Fatalf("scan: %d objects, %v, %v", len(objs), err, refs.err)
		}
		if again := scanRefs(b.Context(), root); len(again.files) != len(refs.files) {
			b.Fatal("refs changed")
		}
		if _, err := scanObjects(root); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIsolatedAgentFIFOForRootObjects: an isolated agent that replaces
// the root's object directory by a named pipe must not stall the runner
// that lists the store after the wave: the run escalates at once.
func TestIsolatedAgentFIFOForRootObjects(t *testing.T) {
	t.Parallel()
	script := filepath.Join(t.TempDir(), "fifo.sh")
	body := "#!/bin/sh\nrm -rf \"$OBJS\" && mkfifo \"$OBJS\"\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	h, _ := isoGitHarness(t, "git-look.sh")
	objs := filepath.Join(h.root, ".git", "objects")
	h.opts.Env = append(h.opts.Env, "AGENT="+script, "OBJS="+objs)
	type result struct {
		out Outcome
		err error
	}
	done := make(chan result, 1)
	go func() { out, err := Run(context.Background(), h.opts); done <- result{out, err} }()
	select {
	case r := <-done:
		if out := r.out; r.err != nil || !strings.Contains(out.Detail, "object store changed") {
			t.Errorf("run ended %s: %q, %v; want it to escalate over the root's object store", out.Status, out.Detail, r.err)
		}
	case <-time.After(2 * time.Minute):
		os.WriteFile(objs, nil, 0) // let a stuck open return before failing
		t.Fatal("the run blocked on a named pipe in place of the root's objects")
	}
}
