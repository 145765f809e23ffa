package hook

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// repoState is what git says of where the user's work stands: every ref
// with its reflog, HEAD, what is staged, the stash.
func repoState(t *testing.T, r *Repo) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	state := map[string]string{}
	for name, args := range map[string][]string{
		"refs":    {"for-each-ref", "--format=%(objectname) %(refname)"},
		"HEAD":    {"rev-parse", "--symbolic-full-name", "HEAD", "HEAD"},
		"staged":  {"diff", "--cached", "--name-status"},
		"stash":   {"stash", "list"},
		"reflogs": {"log", "-g", "--all", "--format=%gd %H %gs"},
		"HEADlog": {"reflog", "show", "--format=%gd %H %gs", "HEAD"},
	} {
		out, err := r.git(ctx, args...)
		if err != nil && name != "reflogs" {
			t.Fatalf("git %s: %v", strings.Join(args, " "), err)
		}
		state[name] = out
	}
	return state
}

// agentGit runs script with sh in dir as an ordinary agent would: git
// finds the repository from dir.
func agentGit(t *testing.T, ctx context.Context, dir, script string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, "sh", "-c", "set -e\n"+script)
	cmd.Dir = dir
	cmd.Env = append(CleanEnv(os.Environ()), "GIT_CONFIG_NOSYSTEM=1", "HOME="+t.TempDir(),
		"GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the agent: %v\n%s", err, out)
	}
}

// yours is the user's repository as files: every ref, HEAD, the index, the
// config and the stash, byte for byte, and what git says of them.
func yours(t *testing.T, r *Repo) map[string]string {
	t.Helper()
	state := repoState(t, r)
	for _, name := range []string{"HEAD", "index", "config", "packed-refs"} {
		b, err := os.ReadFile(filepath.Join(r.GitDir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		state[".git/"+name] = string(b)
	}
	return state
}

// TestCheckoutIsItsOwnRepository: an agent's ordinary git in the isolated
// checkout — a commit, a branch, a tag, a stash, a config setting — writes
// the checkout's own repository, never the user's; and the next checkout
// leaves none of it there: HEAD at the commit, no refs, no objects of its
// own, the hook's config.
func TestCheckoutIsItsOwnRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, head := gitRepo(t, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	before := yours(t, r)
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	agentGit(t, ctx, dir, `git log --oneline | grep -q one
echo changed > a.txt && git commit -q -am 'agent commit'
git checkout -q -b agent/work && git tag agent-tag
echo scratch > scratch.txt && git stash push -q -u
git config core.fsmonitor 'echo pwned > pwned.txt'
cd sub && git branch from-a-subdirectory`)
	if diff := cmp.Diff(before, yours(t, r)); diff != "" {
		t.Errorf("your repository after an agent's git in the checkout (-before +after):\n%s", diff)
	}

	if _, err := r.checkout(ctx, head, false); err != nil {
		t.Fatal(err)
	}
	refs, err := r.coGit(ctx, dir, nil, "for-each-ref")
	if err != nil || refs != "" {
		t.Errorf("the checkout's refs after the next checkout: %q, %v", refs, err)
	}
	if got, err := r.coGit(ctx, dir, nil, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(got) != head {
		t.Errorf("the checkout's HEAD: %q, %v; want %s", got, err, head)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a\n" {
		t.Errorf("a.txt is %q", b)
	}
	if cfg, _ := os.ReadFile(filepath.Join(dir, ".git", "config")); string(cfg) != r.checkoutConfig() {
		t.Errorf("the checkout's config:\n%s", cfg)
	}
	objects, err := os.ReadDir(filepath.Join(dir, ".git", "objects"))
	if err != nil || len(objects) != 1 || objects[0].Name() != "info" {
		t.Errorf("the checkout's own objects: %v, %v", objects, err)
	}
	if changed, err := r.settle(ctx, dir, head); err != nil || len(changed) != 0 {
		t.Errorf("the checkout after an agent: changed %v, %v", changed, err)
	}
}

// TestCheckoutRedirected: a checkout whose .git, or which itself, an
// agent turned into a way to the user's repository (a link to its git
// directory, a gitdir: file, a commondir, the checkout a link to the
// working tree) is made again: the next checkout writes none of the
// user's repository or working tree.
func TestCheckoutRedirected(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name     string
		redirect func(r *Repo, dir string) error
	}{
		{".git a link to yours", func(r *Repo, dir string) error {
			return replace(filepath.Join(dir, ".git"), func(p string) error { return os.Symlink(r.GitDir, p) })
		}},
		{".git a gitdir: file", func(r *Repo, dir string) error {
			return replace(filepath.Join(dir, ".git"), func(p string) error { return os.WriteFile(p, []byte("gitdir: "+r.GitDir+"\n"), 0o644) })
		}},
		{"a commondir to yours", func(r *Repo, dir string) error {
			return os.WriteFile(filepath.Join(dir, ".git", "commondir"), []byte(r.common+"\n"), 0o644)
		}},
		{"the checkout a link to your working tree", func(r *Repo, dir string) error {
			return replace(dir, func(p string) error { return os.Symlink(r.Top, p) })
		}},
		{".git/refs a link to yours", func(r *Repo, dir string) error {
			return replace(filepath.Join(dir, ".git", "refs"), func(p string) error { return os.Symlink(filepath.Join(r.common, "refs"), p) })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r, first := gitRepo(t, map[string]string{"a.txt": "a\n"})
			dir, err := r.checkout(ctx, first, false)
			if err != nil {
				t.Fatal(err)
			}
			// A second commit, which your branch does not have.
			out := filepath.Join(t.TempDir(), "second")
			agentGit(t, ctx, r.Top, `blob=$(echo two | git hash-object -w --stdin)
tree=$(printf '100644 blob %s\ta.txt\n' "$blob" | git mktree)
c=$(git commit-tree "$tree" -p HEAD -m two)
git update-ref refs/keep/second "$c"
echo "$c" > `+out)
			second, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.git(ctx, "pack-refs", "--all"); err != nil {
				t.Fatal(err)
			}
			before := yours(t, r)
			if err := tt.redirect(r, dir); err != nil {
				t.Fatal(err)
			}
			if _, err := r.checkout(ctx, strings.TrimSpace(string(second)), false); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, yours(t, r)); diff != "" {
				t.Errorf("your repository after the checkout (-before +after):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(r.Top, "a.txt")); string(b) != "a\n" {
				t.Errorf("your a.txt is %q", b)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "two\n" {
				t.Errorf("the checkout's a.txt is %q", b)
			}
			if fi, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !fi.IsDir() {
				t.Errorf("the checkout's .git: %v, %v", fi, err)
			}
		})
	}
}

// replace makes p what make makes, whatever was there.
func replace(p string, make func(string) error) error {
	if err := os.RemoveAll(p); err != nil {
		return err
	}
	return make(p)
}

// TestCheckoutLeavesTheLinkedWorktree: a checkout of the layout before
// this one, a linked worktree of the user's repository, becomes a
// repository of its own, and git no longer lists it among the worktrees.
func TestCheckoutLeavesTheLinkedWorktree(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, head := gitRepo(t, map[string]string{"a.txt": "a\n"})
	if _, err := r.ownDir(); err != nil {
		t.Fatal(err)
	}
	dir := r.loopDir("checkout")
	if _, err := r.git(ctx, "worktree", "add", "-f", "--detach", dir, head); err != nil {
		t.Fatal(err)
	}
	if _, err := r.checkout(ctx, head, false); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err != nil || !fi.IsDir() {
		t.Errorf("the checkout's .git: %v, %v", fi, err)
	}
	list, err := r.git(ctx, "worktree", "list", "--porcelain")
	if err != nil || strings.Count(list, "worktree ") != 1 {
		t.Errorf("git worktree list: %q, %v", list, err)
	}
}

// TestCommitFixLeavesLoopOut: the fix holds what the loop changed and
// nothing of .loop — untracked there, or tracked and changed — whether
// .gitignore lists .loop/ (git 2.39's add refuses a pathspec naming an
// ignored path, even to exclude it) or not.
func TestCommitFixLeavesLoopOut(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name  string
		files map[string]string
	}{
		{".loop/ ignored", map[string]string{".gitignore": ".loop/\n", "a.txt": "a\n"}},
		{".loop/ not ignored", map[string]string{"a.txt": "a\n"}},
		{"a file tracked in .loop", map[string]string{"a.txt": "a\n", ".loop/tracked.txt": "kept\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			r, head := gitRepo(t, tt.files)
			tree, err := r.git(ctx, "rev-parse", head+"^{tree}")
			if err != nil {
				t.Fatal(err)
			}
			target := Target{Refs: []string{"refs/heads/main"}, Commit: head, Tree: strings.TrimSpace(tree)}
			dir, err := r.checkout(ctx, head, false)
			if err != nil {
				t.Fatal(err)
			}
			for name, text := range map[string]string{"a.txt": "fixed\n", "new/b.txt": "b\n", ".loop/history/x.md": "history\n", ".loop/tracked.txt": "changed\n"} {
				if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			commit, err := r.commitFix(ctx, dir, "demo", target)
			if err != nil {
				t.Fatal(err)
			}
			if parent, err := r.git(ctx, "rev-parse", commit+"^"); err != nil || strings.TrimSpace(parent) != head {
				t.Errorf("the fix's parent: %q, %v; want %s", parent, err, head)
			}
			changed, err := r.git(ctx, "diff", "--name-only", head, commit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("a.txt\nnew/b.txt\n", changed); diff != "" {
				t.Errorf("what the fix changes (-want +got):\n%s", diff)
			}
			if got, err := r.coGit(ctx, dir, nil, "rev-parse", "HEAD"); err != nil || strings.TrimSpace(got) != commit {
				t.Errorf("the checkout's HEAD: %q, %v; want the fix %s", got, err, commit)
			}
			if paths, err := r.settle(ctx, dir, commit); err != nil || len(paths) != 0 {
				t.Errorf("the checkout at the fix: changed %v, %v", paths, err)
			}
		})
	}
}

// TestCheckoutBorrows: the checkout's repository borrows the objects of
// repositories git makes in other shapes — a shallow clone (its shallow
// list goes along, so a check's git log ends where the clone does) and a
// SHA-256 one — and a fix commits from it.
func TestCheckoutBorrows(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name string
		make func(t *testing.T, ctx context.Context, dir string)
	}{
		{"shallow", func(t *testing.T, ctx context.Context, dir string) {
			src := t.TempDir()
			agentGit(t, ctx, src, `git init -q -b main . && echo one > a.txt && git add a.txt && git commit -qm one && echo two > a.txt && git commit -qam two`)
			agentGit(t, ctx, dir, `git clone -q --depth=1 file://`+src+` .`)
		}},
		{"sha256", func(t *testing.T, ctx context.Context, dir string) {
			agentGit(t, ctx, dir, `git init -q -b main --object-format=sha256 . && echo two > a.txt && git add a.txt && git commit -qm two`)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			dir := t.TempDir()
			tt.make(t, ctx, dir)
			// The user's identity, which a machine without a git config
			// (CI's) does not have: the fix is committed as the user.
			r, err := Open(ctx, dir, CleanEnv(append(os.Environ(), "GIT_AUTHOR_NAME=dev", "GIT_AUTHOR_EMAIL=dev@example.com",
				"GIT_COMMITTER_NAME=dev", "GIT_COMMITTER_EMAIL=dev@example.com")))
			if err != nil {
				t.Fatal(err)
			}
			ids, err := r.git(ctx, "rev-parse", "HEAD", "HEAD^{tree}")
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(ids)
			target := Target{Refs: []string{"refs/heads/main"}, Commit: f[0], Tree: f[1]}
			co, err := r.checkout(ctx, target.Commit, false)
			if err != nil {
				t.Fatal(err)
			}
			if log, err := r.coGit(ctx, co, nil, "log", "--format=%s"); err != nil || log != "two\n" {
				t.Errorf("git log in the checkout: %q, %v", log, err)
			}
			if err := os.WriteFile(filepath.Join(co, "a.txt"), []byte("fixed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			commit, err := r.commitFix(ctx, co, "demo", target)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := r.git(ctx, "show", commit+":a.txt"); err != nil || got != "fixed\n" {
				t.Errorf("the fix's a.txt: %q, %v", got, err)
			}
		})
	}
}

// TestCommitFixSigns: with commit.gpgSign, the fix is signed, as git
// commit would sign it (commit-tree does not read the setting itself).
// The signer is a script standing in for gpg.
func TestCommitFixSigns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, head := gitRepo(t, map[string]string{"a.txt": "a\n"})
	signer := filepath.Join(t.TempDir(), "sign.sh")
	script := "#!/bin/sh\ncat >/dev/null\necho '-----BEGIN PGP SIGNATURE-----'\necho 'c2lnbmVk'\necho '-----END PGP SIGNATURE-----'\necho '[GNUPG:] SIG_CREATED D 1 8 00 0 0' >&2\n"
	if err := os.WriteFile(signer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"commit.gpgSign", "true"}, {"gpg.program", signer}, {"user.signingKey", "loop-test"}} {
		if _, err := r.git(ctx, "config", kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	tree, err := r.git(ctx, "rev-parse", head+"^{tree}")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("fixed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	commit, err := r.commitFix(ctx, dir, "demo", Target{Refs: []string{"refs/heads/main"}, Commit: head, Tree: strings.TrimSpace(tree)})
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := r.git(ctx, "cat-file", "commit", commit); err != nil || !strings.Contains(raw, "gpgsig -----BEGIN PGP SIGNATURE-----") {
		t.Errorf("the fix is not signed: %v\n%s", err, raw)
	}
}
