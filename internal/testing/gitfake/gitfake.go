// Package gitfake is the tests' git remote: bare repositories served over
// git's smart HTTP protocol by git itself (git http-backend behind
// net/http/cgi) on 127.0.0.1, to clients that authenticate as GitHub's do
// (basic auth, user x-access-token, the token as password), and git run
// isolated from the user's and the system's configuration. It records the
// pushes it receives and lets a test act between a push's advertisement
// and its update.
//
// It is a test helper: no code that runs in a job may import it (see
// internal/testing/imports_test.go).
package gitfake

import (
	"bytes"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/protocol/packp"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// Env is the environment of a git command isolated from the user's and
// the system's configuration, with home as its home and a fixed identity.
func Env(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com")
}

// Git runs git in dir (the current directory when empty) with Env, and
// returns its standard output; it fails the test, with git's standard
// error, if git fails.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := subprocess.ForTest(tb, "git", args...)
	cmd.Dir = dir
	cmd.Env = Env(tb.TempDir())
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// InitBare creates an empty bare repository at path, with main as its
// initial branch, that accepts pushes over HTTP.
func InitBare(tb testing.TB, path string) string {
	tb.Helper()
	Git(tb, "", "init", "-q", "--bare", "-b", "main", path)
	Git(tb, "", "--git-dir="+path, "config", "http.receivepack", "true")
	return path
}

// Fsck runs git fsck --strict on a bare repository and fails the test on
// any error.
func Fsck(tb testing.TB, bare string) {
	tb.Helper()
	Git(tb, "", "--git-dir="+bare, "fsck", "--strict", "--no-dangling")
}

// Push is one push a Server received: the refs its commands update, and
// the token it came with.
type Push struct {
	Refs  []string
	Token string
}

// Options are what a Server serves.
type Options struct {
	// Dir holds the repositories (GIT_PROJECT_ROOT); empty is a new
	// temporary directory.
	Dir string
	// Tokens are the tokens it accepts; any request without one of them
	// is answered 401 with a challenge, as GitHub answers.
	Tokens []string
	// Public are handlers served without authentication, by path prefix
	// (release downloads, as github.com serves them).
	Public map[string]http.Handler
}

// Server serves the bare repositories under its Dir at URL/<path>.
type Server struct {
	Dir, URL string

	mu         sync.Mutex
	beforePush func(Push)
	pushes     []Push

	requests, inflight atomic.Int64
}

// Start serves o's repositories until the test ends. It skips the test
// when git is not installed.
func Start(tb testing.TB, o Options) *Server {
	tb.Helper()
	s := &Server{Dir: o.Dir}
	if s.Dir == "" {
		s.Dir = tb.TempDir()
	}
	backend := backendAt(tb, s.Dir)
	want := map[string]string{} // Authorization → token
	for _, token := range o.Tokens {
		want["Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))] = token
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.requests.Add(1)
			s.inflight.Add(1)
			defer s.inflight.Add(-1)
			s.serve(w, r, o.Public, want, backend)
		})}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	s.URL = "http://" + ln.Addr().String()
	return s
}

// backendAt is git http-backend serving the repositories under root.
func backendAt(tb testing.TB, root string) *cgi.Handler {
	tb.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		tb.Skip("no git:", err)
	}
	return &cgi.Handler{
		Path: git,
		Args: []string{"http-backend"},
		Env: []string{
			"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=" + root,
		},
		Stderr: io.Discard,
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, public map[string]http.Handler, want map[string]string, backend http.Handler) {
	for prefix, h := range public {
		if strings.HasPrefix(r.URL.Path, prefix) {
			h.ServeHTTP(w, r)
			return
		}
	}
	token, ok := want[r.Header.Get("Authorization")]
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	if err := s.intercept(r, token); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	backend.ServeHTTP(w, r)
}

// intercept records a receive-pack request and runs the push hook on it
// before git sees it.
func (s *Server) intercept(r *http.Request, token string) error {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	p := Push{Refs: pushedRefs(body), Token: token}
	s.mu.Lock()
	s.pushes = append(s.pushes, p)
	f := s.beforePush
	s.mu.Unlock()
	if f != nil {
		f(p)
	}
	return nil
}

// pushedRefs are the refs a receive-pack request's commands update; none
// when git would refuse the request as malformed.
func pushedRefs(body []byte) []string {
	req := packp.NewReferenceUpdateRequest()
	if req.Decode(bytes.NewReader(body)) != nil {
		return nil
	}
	refs := make([]string, len(req.Commands))
	for i, c := range req.Commands {
		refs[i] = c.Name.String()
	}
	return refs
}

// OnPush sets what runs before each push reaches git (nil: nothing): the
// moment between a push's advertisement and its update.
func (s *Server) OnPush(f func(Push)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforePush = f
}

// Pushes are the pushes received, in order.
func (s *Server) Pushes() []Push {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pushes)
}

// Requests is how many HTTP requests the server received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// InFlight is how many requests the server is answering now.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// Settle waits, up to 10 s, until the server has answered every request
// it received, such as the push of a client that was killed meanwhile.
func (s *Server) Settle(tb testing.TB) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); s.inflight.Load() > 0; {
		if time.Now().After(deadline) {
			tb.Fatalf("the git server is still serving %d requests", s.inflight.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Repo creates an empty bare repository name on the server and returns
// its URL and path.
func (s *Server) Repo(tb testing.TB, name string) (url, bare string) {
	tb.Helper()
	return s.URL + "/" + name, InitBare(tb, filepath.Join(s.Dir, name))
}

// Host moves the bare repository bare onto the server as name and returns
// its URL and new path.
func (s *Server) Host(tb testing.TB, bare, name string) (url, path string) {
	tb.Helper()
	path = filepath.Join(s.Dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(bare, path); err != nil {
		tb.Fatal(err)
	}
	return s.URL + "/" + name, path
}
