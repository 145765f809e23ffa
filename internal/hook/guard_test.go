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

// TestGuardOutsidePutsBackYourRepository: whatever an agent that walks up
// to the user's repository does to its refs (loose and packed), HEAD,
// index, stash and reflogs is put back, and named in the refusal.
func TestGuardOutsidePutsBackYourRepository(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tests := []struct {
		name  string
		agent string // sh, in the user's working tree
		named []string
	}{
		{"main moved", `git update-ref -m agent refs/heads/main "$evil"`, []string{".git/refs/heads/main", ".git/logs/refs/heads/main"}},
		{"tag force-moved", `git tag -f v1 "$evil"`, []string{".git/refs/tags/v1"}},
		{"a branch made", `git branch backdoor "$evil"`, []string{".git/refs/heads/backdoor"}},
		{"a branch deleted", `git branch -D other`, []string{".git/refs/heads/other", ".git/logs/refs/heads/other"}},
		{"refs packed", `git pack-refs --all`, []string{".git/packed-refs", ".git/refs/heads/main"}},
		{"HEAD detached", `git update-ref --no-deref HEAD "$evil"`, []string{".git/HEAD", ".git/logs/HEAD"}},
		{"HEAD at another branch", `git symbolic-ref HEAD refs/heads/other`, []string{".git/HEAD"}},
		{"a file staged", `git update-index --add --cacheinfo "100644,$blob,staged.sh"`, []string{".git/index"}},
		{"a stash pushed", `echo stashed > a.txt && git stash push -q`, []string{".git/refs/stash", ".git/logs/refs/stash"}},
		{"the reflog expired", `git reflog expire --expire=now --all`, []string{".git/logs/refs/heads/main"}},
		{"an index lock left", `: > .git/index.lock`, []string{".git/index.lock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, head := gitRepo(t, map[string]string{"a.txt": "a\n"})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if _, err := r.checkout(ctx, head, false); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"tag", "v1"}, {"branch", "other"}} {
				if _, err := r.git(ctx, args...); err != nil {
					t.Fatal(err)
				}
			}
			before := repoState(t, r)
			check, err := r.guardOutside(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			script := `set -e
blob=$(echo 'echo pwned' | git hash-object -w --stdin)
tree=$(printf '100644 blob %s\tbackdoor.sh\n' "$blob" | git mktree)
evil=$(echo 'add backdoor' | git commit-tree "$tree" -p HEAD)
` + tt.agent
			cmd := exec.CommandContext(ctx, "sh", "-c", script)
			cmd.Dir, cmd.Env = r.Top, CleanEnv(os.Environ())
			cmd.Env = append(cmd.Env, "GIT_AUTHOR_NAME=agent", "GIT_AUTHOR_EMAIL=agent@example.com", "GIT_COMMITTER_NAME=agent", "GIT_COMMITTER_EMAIL=agent@example.com")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the agent: %v\n%s", err, out)
			}
			err = check()
			if err == nil {
				t.Fatal("check passed an agent that changed your repository")
			}
			for _, want := range append([]string{"wrote outside its checkout", "put back; its work is refused"}, tt.named...) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the refusal does not name %q: %v", want, err)
				}
			}
			if diff := cmp.Diff(before, repoState(t, r)); diff != "" {
				t.Errorf("your repository after the check (-before +after):\n%s", diff)
			}
			if _, err := os.Lstat(filepath.Join(r.GitDir, "index.lock")); !os.IsNotExist(err) {
				t.Errorf("the index lock is still there: %v", err)
			}
		})
	}
}

// TestGuardOutsideQuiet: a loop that touches nothing of the user's passes
// the check, though it ran git in its own checkout.
func TestGuardOutsideQuiet(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, head := gitRepo(t, map[string]string{"a.txt": "a\n"})
	dir, err := r.checkout(ctx, head, false)
	if err != nil {
		t.Fatal(err)
	}
	check, err := r.guardOutside(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	agentGit(t, ctx, dir, `echo b > a.txt && git commit -q -am b && git checkout -q -b work && git tag t1 && echo c > a.txt && git stash push -q`)
	if err := check(); err != nil {
		t.Errorf("an agent that kept to its checkout: %v", err)
	}
}

// TestRepoGuarded: which paths of a git directory guardOutside records
// (keep) and enters (descend): never the object store, which is not
// entered at all.
func TestRepoGuarded(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rel           string
		keep, descend bool
	}{
		{"HEAD", true, true},
		{"ORIG_HEAD", true, true},
		{"FETCH_HEAD", true, true},
		{"index", true, true},
		{"index.lock", true, true},
		{"sharedindex.0123abcd", true, true},
		{"packed-refs", true, true},
		{"packed-refs.lock", true, true},
		{"shallow", true, true},
		{"config", true, true},
		{"hooks/pre-push", true, true},
		{"info/exclude", true, true},
		{"refs", true, true},
		{"refs/heads/objects", true, true},
		{"refs/stash", true, true},
		{"logs/refs/stash", true, true},
		{"reftable/tables.list", true, true},
		{"worktrees/w/HEAD", true, true},
		{"worktrees/w/logs/HEAD", true, true},
		{"description", false, true},
		{"objects", false, false},
		{"modules/sub/objects", false, false},
		{"lfs", false, false},
	}
	for _, tt := range tests {
		if got := repoGuarded(tt.rel); got != tt.keep {
			t.Errorf("repoGuarded(%q) = %v, want %v", tt.rel, got, tt.keep)
		}
		if got := repoDescend(tt.rel); got != tt.descend {
			t.Errorf("repoDescend(%q) = %v, want %v", tt.rel, got, tt.descend)
		}
	}
}
