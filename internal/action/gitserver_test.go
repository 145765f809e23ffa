package action

import (
	"bytes"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// httpTestServer serves git repositories under root over smart HTTP with
// git http-backend, for the tokens given only.
type httpTestServer struct {
	URL string
	srv *http.Server
	ln  net.Listener

	mu         sync.Mutex
	beforePush func(body []byte) // called with each push's request before git sees it
	pushes     []gitPush         // in the order received
}

// gitPush is one push received: the refs it asked to update, and the
// token it came with.
type gitPush struct {
	Refs  []string
	Token string
}

// onPush sets what happens before each push reaches git.
func (s *httpTestServer) onPush(f func(body []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beforePush = f
}

// pushed is how many pushes the server received for other refs than the
// state branch.
func (s *httpTestServer) pushed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.pushes {
		if !slices.Equal(p.Refs, []string{"refs/heads/loop-state"}) {
			n++
		}
	}
	return n
}

// received are the pushes the server received.
func (s *httpTestServer) received() []gitPush {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pushes)
}

// pushedRefs are the refs a receive-pack request's commands update: the
// pkt-lines "old new ref\x00caps" before the first flush.
func pushedRefs(body []byte) []string {
	var refs []string
	for len(body) >= 4 {
		n, err := strconv.ParseUint(string(body[:4]), 16, 16)
		if err != nil || n < 4 || int(n) > len(body) {
			break
		}
		line, _, _ := strings.Cut(string(body[4:n]), "\x00")
		if f := strings.Fields(line); len(f) == 3 {
			refs = append(refs, f[2])
		}
		body = body[n:]
	}
	return refs
}

// intercept runs the push hook on a receive-pack request.
func (s *httpTestServer) intercept(r *http.Request, token string) error {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
		return nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.pushes = append(s.pushes, gitPush{Refs: pushedRefs(body), Token: token})
	f := s.beforePush
	s.mu.Unlock()
	if f != nil {
		f(body)
	}
	return nil
}

func serveGit(t *testing.T, dir string, tokens ...string) *httpTestServer {
	t.Helper()
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Join(dir, "git"), "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	want := map[string]string{} // Authorization → token
	for _, token := range tokens {
		want["Basic "+base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))] = token
	}
	s := &httpTestServer{}
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		token, ok := want[r.Header.Get("Authorization")]
		if !ok {
			rw.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(rw, "authentication required", http.StatusUnauthorized)
			return
		}
		if err := s.intercept(r, token); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		backend.ServeHTTP(rw, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.URL, s.srv, s.ln = "http://"+ln.Addr().String(), &http.Server{Handler: h}, ln
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}
