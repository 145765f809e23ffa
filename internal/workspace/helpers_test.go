package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// op creates one thing in a test tree rooted at root.
type op func(t *testing.T, root string)

// file creates a regular file with mode 0644.
func file(path, content string) op {
	return fileMode(path, content, 0o644)
}

// fileMode creates a regular file and chmods it to mode (ignoring umask).
func fileMode(path, content string, mode os.FileMode) op {
	return func(t *testing.T, root string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		mkdirAll(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// link creates a symbolic link at path pointing to target (verbatim).
func link(path, target string) op {
	return func(t *testing.T, root string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(path))
		mkdirAll(t, filepath.Dir(p))
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
}

// dir creates a (possibly empty) directory.
func dir(path string) op {
	return func(t *testing.T, root string) {
		t.Helper()
		mkdirAll(t, filepath.Join(root, filepath.FromSlash(path)))
	}
}

func mkdirAll(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// build creates a fresh tree from ops and returns its root.
func build(t *testing.T, ops ...op) string {
	t.Helper()
	root := t.TempDir()
	for _, o := range ops {
		o(t, root)
	}
	return root
}

// oracle asks git for the tree id and file list of root: `git add -A` then
// `git write-tree` and `git ls-files`, with a separate git directory so root
// is left untouched. Its info/exclude holds /.loop/ and root's own
// .git/info/exclude, if any, so git ignores exactly what we ignore; global
// and system configuration (including the default global ignore file) are
// switched off.
func oracle(t *testing.T, root string) (tree string, files []string) {
	t.Helper()
	gitDir := filepath.Join(t.TempDir(), "oracle.git")
	runGit(t, "", "init", "-q", "--bare", gitDir)
	exclude, err := os.ReadFile(filepath.Join(root, ".git", "info", "exclude"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	exclude = append([]byte("/.loop/\n"), exclude...)
	if err := os.WriteFile(filepath.Join(gitDir, "info", "exclude"), exclude, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--git-dir=" + gitDir, "--work-tree=" + root}
	runGit(t, root, append(args, "add", "-A")...)
	tree = strings.TrimSpace(runGit(t, root, append(args, "write-tree")...))
	out := strings.TrimSuffix(runGit(t, root, append(args, "ls-files", "-z")...), "\x00")
	files = []string{}
	if out != "" {
		files = strings.Split(out, "\x00")
	}
	return tree, files
}

// runGit runs git in dir with an isolated configuration and returns stdout.
func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// lstat returns the status of the entry name of l, never following a link.
func (l *dirList) lstat(name string) (fileStat, error) {
	fi, err := l.r.Lstat(name)
	if err != nil {
		return fileStat{}, err
	}
	return statOf(fi), nil
}
