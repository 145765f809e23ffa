package delivery

import (
	"crypto/subtle"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// gitEnv isolates a git command from the user's and the system's
// configuration.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com")
}

// runGit runs git in dir and returns its standard output.
func runGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(t.TempDir())
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// files are a tree's content by path; a value starting with "->" is a
// symbolic link to the rest, one starting with "x:" an executable file.
type files map[string]string

// write creates files under dir.
func write(t testing.TB, dir string, fs files) {
	t.Helper()
	for rel, body := range fs {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(p)
		var err error
		switch {
		case strings.HasPrefix(body, "->"):
			err = os.Symlink(body[2:], p)
		case strings.HasPrefix(body, "x:"):
			err = os.WriteFile(p, []byte(body[2:]), 0o755)
		default:
			err = os.WriteFile(p, []byte(body), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// origin makes a bare repository holding one commit of fs on main, with
// the paths of force added although ignored, and returns its path and
// the commit.
func origin(t testing.TB, fs files, force ...string) (bare, head string) {
	t.Helper()
	dir := t.TempDir()
	bare = filepath.Join(dir, "origin.git")
	runGit(t, "", "init", "-q", "--bare", "-b", "main", bare)
	runGit(t, "", "--git-dir="+bare, "config", "http.receivepack", "true")
	seed := filepath.Join(dir, "seed")
	runGit(t, "", "init", "-q", "-b", "main", seed)
	write(t, seed, fs)
	runGit(t, seed, "add", "-A")
	for _, p := range force {
		runGit(t, seed, "add", "-f", p)
	}
	runGit(t, seed, "commit", "-q", "-m", "base")
	runGit(t, seed, "push", "-q", bare, "main")
	return bare, strings.TrimSpace(runGit(t, seed, "rev-parse", "HEAD"))
}

// clone makes a depth-1 clone of url, as actions/checkout does.
func clone(t testing.TB, url string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "root")
	runGit(t, "", "clone", "-q", "--depth=1", "--no-local", url, root)
	return root
}

// fsck runs git fsck --strict on a bare repository.
func fsck(t testing.TB, bare string) {
	t.Helper()
	runGit(t, "", "--git-dir="+bare, "fsck", "--strict", "--no-dangling")
}

// objectCount counts the objects of a bare repository.
func objectCount(t testing.TB, bare string) int {
	t.Helper()
	n := 0
	for line := range strings.SplitSeq(runGit(t, "", "--git-dir="+bare, "count-objects", "-v"), "\n") {
		for _, key := range []string{"count: ", "in-pack: "} {
			if v, ok := strings.CutPrefix(line, key); ok {
				var k int
				for _, c := range v {
					k = k*10 + int(c-'0')
				}
				n += k
			}
		}
	}
	return n
}

// gitServer serves the bare repositories of a directory over git's smart
// HTTP protocol (git http-backend behind net/http/cgi) on 127.0.0.1, to
// clients that authenticate as GitHub's do: basic auth with the user
// x-access-token and the token as password. beforePush, when set, runs
// before each receive-pack request is served: the moment between a
// push's advertisement and its update.
type gitServer struct {
	dir        string
	url        string
	beforePush atomic.Pointer[func()]
}

func startGitServer(t testing.TB, token string) *gitServer {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git:", err)
	}
	s := &gitServer{dir: t.TempDir()}
	backend := &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + s.dir, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + s.dir,
		},
		Stderr: io.Discard,
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || user != "x-access-token" || subtle.ConstantTimeCompare([]byte(pass), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if f := s.beforePush.Load(); f != nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			(*f)()
		}
		backend.ServeHTTP(w, r)
	}))
	srv.Config.ReadHeaderTimeout = 10 * time.Second
	srv.Start()
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// host moves the bare repository bare onto the server and returns its URL
// and new path.
func (s *gitServer) host(t testing.TB, bare, name string) (url, path string) {
	t.Helper()
	path = filepath.Join(s.dir, name)
	if err := os.Rename(bare, path); err != nil {
		t.Fatal(err)
	}
	return s.url + "/" + name, path
}
