package runner

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/storage/memory"
	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

func TestParseCheckout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		out     string
		want    workspace.Checkout
		wantErr string
	}{
		{"", workspace.Checkout{}, ""},
		{"core.autocrlf\ntrue\x00", workspace.Checkout{AutoCRLF: "true"}, ""},
		{"core.autocrlf\nInput\x00", workspace.Checkout{AutoCRLF: "input"}, ""},
		{"core.autocrlf\x00", workspace.Checkout{AutoCRLF: "true"}, ""}, // set without a value
		{"core.autocrlf\nyes\x00core.eol\nCRLF\x00", workspace.Checkout{AutoCRLF: "true", EOL: "crlf"}, ""},
		{"core.autocrlf\ntrue\x00core.autocrlf\noff\x00", workspace.Checkout{AutoCRLF: "false"}, ""}, // the last wins
		{"core.autocrlf\n0\x00core.eol\nnative\x00", workspace.Checkout{AutoCRLF: "false", EOL: "native"}, ""},
		{"core.autocrlf\nsometimes\x00", workspace.Checkout{}, `core.autocrlf: "sometimes" is not a boolean`},
		{"core.eol\ncr\x00", workspace.Checkout{}, `core.eol: "cr" is not lf, crlf or native`},
	}
	for _, tt := range tests {
		got, err := parseCheckout([]byte(tt.out))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseCheckout(%q) = %v, want an error saying %q", tt.out, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("parseCheckout(%q): %v", tt.out, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseCheckout(%q) (-want +got):\n%s", tt.out, diff)
		}
	}
}

// isolatedGit is an environment whose git reads no configuration but the
// repository's and, when system is not "", that system file.
func isolatedGit(system string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_GLOBAL=/dev/null"}
	if system == "" {
		return append(env, "GIT_CONFIG_NOSYSTEM=1")
	}
	return append(env, "GIT_CONFIG_SYSTEM="+system)
}

// crlfCheckout is a clone made by a git whose system configuration says
// core.autocrlf=true, as a Windows runner's does: every text file is
// checked out with CRLF line endings. It returns the clone, the commit's
// tree and the environment of that git.
func crlfCheckout(t *testing.T) (root, tree string, env []string) {
	t.Helper()
	base := t.TempDir()
	seed := filepath.Join(base, "seed")
	gitIn(t, base, "init", "-q", "-b", "main", seed)
	mustWrite(t, filepath.Join(seed, "calc.txt"), "one\ntwo\n")
	mustWrite(t, filepath.Join(seed, "src", "main.go"), "package main\n\nfunc main() {}\n")
	mustWrite(t, filepath.Join(seed, ".gitignore"), ".loop/\n")
	gitIn(t, seed, "add", "-A")
	gitIn(t, seed, "commit", "-q", "-m", "project")
	tree = strings.TrimSpace(gitIn(t, seed, "rev-parse", "HEAD^{tree}"))
	system := filepath.Join(base, "gitconfig")
	mustWrite(t, system, "[core]\n\tautocrlf = true\n")
	env = isolatedGit(system)
	root = filepath.Join(base, "clone")
	runGitEnv(t, base, env, "clone", "-q", seed, root)
	b, err := os.ReadFile(filepath.Join(root, "calc.txt"))
	if err != nil || string(b) != "one\r\ntwo\r\n" {
		t.Fatalf("the checkout wrote calc.txt %q, %v; want CRLF line endings", b, err)
	}
	return root, tree, env
}

// TestCheckoutSettingsReachTheSnapshot: in a checkout that git made with
// core.autocrlf=true (the system's configuration, as on a Windows runner),
// ReadCheckout reads the setting, and with it the snapshot equals the
// commit's tree (without it, every CRLF file differs), a run certifies
// the head it started from, and Restore writes CRLF as the checkout did.
func TestCheckoutSettingsReachTheSnapshot(t *testing.T) {
	t.Parallel()
	root, tree, env := crlfCheckout(t)
	k, err := ReadCheckout(t.Context(), root, env)
	if err != nil {
		t.Fatal(err)
	}
	if k.AutoCRLF != "true" {
		t.Fatalf("ReadCheckout = %+v, want core.autocrlf true", k)
	}
	if plain, err := ReadCheckout(t.Context(), root, isolatedGit("")); err != nil || plain != (workspace.Checkout{}) {
		t.Errorf("ReadCheckout without the system's configuration = %+v, %v; want the zero value", plain, err)
	}

	got, err := workspace.NewHasherWith(root, k).Certify(t.Context())
	if err != nil || string(got) != tree {
		t.Errorf("snapshot with the checkout's settings = %s, %v; want the commit's tree %s", got, err, tree)
	}
	if without, _ := workspace.NewHasher(root).Snapshot(t.Context()); string(without) == tree {
		t.Errorf("the snapshot without the settings equals the tree too: the test proves nothing")
	}

	// A run on that checkout certifies the commit's tree at iteration 0.
	cfg, err := loop.Parse("loop.toml", []byte(strings.Replace(fixLoop, `run = "grep -q fixed calc.txt"`, `run = "grep -q two calc.txt"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	store, err := state.OpenDir(filepath.Join(root, ".loop", "state"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	head := strings.TrimSpace(gitIn(t, root, "rev-parse", "HEAD"))
	out, err := Run(t.Context(), Options{Config: cfg, Root: root, RunID: "fix/crlf", Store: store, Env: env, Commit: head, Checkout: k})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := store.Load(t.Context(), "fix/crlf")
	if err != nil || out.Status != state.Success || out.Iteration != 0 || cp.Snapshot != tree {
		t.Fatalf("run: %s at %d, snapshot %s (%v); want success at 0 on the commit's tree %s", out.Status, out.Iteration, cp.Snapshot, err, tree)
	}

	// Restore writes a changed file as the checkout would: CRLF.
	mustWrite(t, filepath.Join(root, "calc.txt"), "one\r\ntwo\r\nthree\r\n")
	mem := memory.NewStorage()
	snap, err := workspace.NewHasherWith(root, k).WriteObjects(t.Context(), mem)
	if err != nil {
		t.Fatal(err)
	}
	for settings, want := range map[string]string{"the checkout's": "one\r\ntwo\r\nthree\r\n", "none": "one\ntwo\nthree\n"} {
		mustWrite(t, filepath.Join(root, "calc.txt"), "elsewhere\n")
		use := k
		if settings == "none" {
			use = workspace.Checkout{}
		}
		if _, err := workspace.RestoreWith(context.Background(), root, mem, snap, use); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "calc.txt")); string(b) != want {
			t.Errorf("Restore with %s settings wrote %q, want %q", settings, b, want)
		}
	}
}

// runGitEnv runs git in dir with exactly env (and an author).
func runGitEnv(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
