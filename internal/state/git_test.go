package state_test

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

// newBare creates an empty bare repository that accepts pushes over HTTP.
func newBare(t testing.TB, dir, name string) string {
	t.Helper()
	bare := filepath.Join(dir, name)
	runGit(t, "", "init", "-q", "--bare", bare)
	runGit(t, "", "--git-dir="+bare, "config", "http.receivepack", "true")
	return bare
}

// fsck runs git fsck --strict on a bare repository and fails the test on
// any error.
func fsck(t testing.TB, bare string) {
	t.Helper()
	runGit(t, "", "--git-dir="+bare, "fsck", "--strict", "--no-dangling")
}

// gitServer serves the bare repositories of a directory over git's smart
// HTTP protocol (git http-backend behind net/http/cgi) on 127.0.0.1, to
// clients that authenticate as GitHub's do: basic auth with the user
// x-access-token and the token as password.
type gitServer struct {
	dir      string
	url      string
	requests atomic.Int64
	inflight atomic.Int64
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
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		user, pass, ok := r.BasicAuth()
		if !ok || user != "x-access-token" || subtle.ConstantTimeCompare([]byte(pass), []byte(token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// repo creates a bare repository on the server and returns its URL and path.
func (s *gitServer) repo(t testing.TB, name string) (url, bare string) {
	t.Helper()
	return s.url + "/" + name, newBare(t, s.dir, name)
}

// settle waits until the server has answered every request it received,
// such as the push of a client that was killed while the server worked.
func (s *gitServer) settle(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.inflight.Load() > 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the git server is still serving %d requests", s.inflight.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
