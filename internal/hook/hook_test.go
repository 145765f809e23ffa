package hook

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// gitRepo makes a repository with one commit of files and returns it
// opened, and the commit.
func gitRepo(t testing.TB, files map[string]string) (*Repo, string) {
	t.Helper()
	dir := t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	run := func(args ...string) string {
		t.Helper()
		out, err := git(context.Background(), dir, CleanEnv(env), nil, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	run("init", "-q", "-b", "main")
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run("add", "-A")
	run("commit", "-q", "-m", "one")
	r, err := Open(context.Background(), dir, env)
	if err != nil {
		t.Fatal(err)
	}
	return r, run("rev-parse", "HEAD")
}

func TestPushTargets(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r, head := gitRepo(t, map[string]string{"a.txt": "a"})
	zero := strings.Repeat("0", 40)
	tree, err := r.git(context.Background(), "rev-parse", head+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		input   string
		want    []Target
		wantErr string
	}{
		{"nothing", "", nil, ""},
		{"a deletion", "(delete) " + zero + " refs/heads/x " + head + "\n", nil, ""},
		{"one tip pushed to two refs", "refs/heads/main " + head + " refs/heads/main " + zero + "\n\nrefs/heads/b " + head + " refs/heads/b " + zero + "\n",
			[]Target{{Refs: []string{"refs/heads/main", "refs/heads/b"}, Commit: head, Tree: strings.TrimSpace(tree)}}, ""},
		{"a short line", "refs/heads/main " + head + "\n", nil, "pre-push input line 1 is not"},
		{"not an object id", "refs/heads/main HEAD refs/heads/main " + zero + "\n", nil, "pre-push input line 1 is not"},
		{"an unknown commit", "refs/heads/main " + strings.Repeat("1", 40) + " refs/heads/main " + zero + "\n", nil, "cannot be gated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := r.PushTargets(context.Background(), strings.NewReader(tt.input))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckoutIsIncremental: a second checkout rewrites only what
// changed, and removes what the last checks left.
func TestCheckoutIsIncremental(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	r, first := gitRepo(t, map[string]string{"same.txt": "same", "changes.txt": "one"})
	dir, err := r.checkout(ctx, first, false)
	if err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(filepath.Join(dir, "same.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "left-by-a-check.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Top, "changes.txt"), []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.git(ctx, "commit", "-q", "-am", "two"); err != nil {
		t.Fatal(err)
	}
	second, err := r.git(ctx, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.checkout(ctx, strings.TrimSpace(second), false); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(filepath.Join(dir, "same.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Error("an unchanged file was written again")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "changes.txt")); string(b) != "two" {
		t.Errorf("changes.txt is %q, want %q", b, "two")
	}
	if _, err := os.Lstat(filepath.Join(dir, "left-by-a-check.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("what a check left is still there: %v", err)
	}
}

// TestCheckoutRecovers: a checkout whose directory was removed (rm -rf
// .loop) is made again, though git still lists the worktree.
func TestCheckoutRecovers(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	r, head := gitRepo(t, map[string]string{"a.txt": "a"})
	if _, err := r.checkout(ctx, head, false); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(r.Top, ".loop")); err != nil {
		t.Fatal(err)
	}
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a" {
		t.Errorf("a.txt is %q after the checkout was made again", b)
	}
}

func TestLockExcludes(t *testing.T) {
	t.Parallel()
	r := &Repo{Top: t.TempDir()}
	release, err := r.lock()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.lock(); !errors.Is(err, errBusy) {
		t.Fatalf("a second lock: %v, want %v", err, errBusy)
	}
	release()
	again, err := r.lock()
	if err != nil {
		t.Fatalf("the lock after a release: %v", err)
	}
	again()
}

// TestSettledCheckout: a checkout left clean is not checked out again for
// the same commit, but whatever changes it afterwards is still reported
// (never measured as the commit), and the next checkout discards it.
func TestSettledCheckout(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	r, head := gitRepo(t, map[string]string{"a.txt": "a"})
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	if changed, err := r.settle(ctx, dir, head); err != nil || len(changed) != 0 {
		t.Fatalf("a fresh checkout: changed %v, %v", changed, err)
	}
	for _, f := range []string{"a.txt", "new.txt"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("tampered"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.checkout(ctx, head, false); err != nil { // settled: nothing checked out
		t.Fatal(err)
	}
	changed, err := r.settle(ctx, dir, head)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "new.txt"}, changed); diff != "" {
		t.Errorf("changes after a settled checkout (-want +got):\n%s", diff)
	}
	if _, err := r.checkout(ctx, head, false); err != nil {
		t.Fatal(err)
	}
	if changed, err := r.settle(ctx, dir, head); err != nil || len(changed) != 0 {
		t.Errorf("the checkout after a tampered one: changed %v, %v", changed, err)
	}
}

// TestCheckoutFresh: ignored files an earlier measurement built stay in
// the checkout as a build cache, unless [hook] clean_ignored asks for a
// checkout as fresh as CI's, where nothing built for another commit can
// stand in for this one's.
func TestCheckoutFresh(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	r, head := gitRepo(t, map[string]string{".gitignore": "build/\n", "a.txt": "a"})
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "build", "out")
	for _, fresh := range []bool{false, true} {
		if err := os.MkdirAll(filepath.Dir(built), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(built, []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := r.settle(ctx, dir, head); err != nil {
			t.Fatal(err)
		}
		if _, err := r.checkout(ctx, head, fresh); err != nil {
			t.Fatal(err)
		}
		_, err := os.Stat(built)
		if kept := err == nil; kept == fresh {
			t.Errorf("fresh=%v: the ignored build output kept: %v", fresh, kept)
		}
	}
}
