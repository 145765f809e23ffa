package github_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

const (
	token = "ghs_s3cr3t-token-never-shown"
	bot   = "github-actions[bot]"
)

// waits records the waits between retries instead of sleeping them.
type waits struct {
	mu sync.Mutex
	ds []time.Duration
}

func (w *waits) wait(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ds = append(w.ds, d)
}

func (w *waits) got() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.ds...)
}

// setup starts a fake with o/r#1 and a client acting as the Actions bot.
func setup(t *testing.T, opts ...github.Option) (*githubfake.Server, *github.Client, *waits) {
	t.Helper()
	srv := githubfake.New()
	t.Cleanup(srv.Close)
	srv.SetToken(token, bot)
	srv.AddPull("o", "r", githubfake.Pull{Number: 1, HeadSHA: "abc123", HeadRef: "feature", BaseRef: "main", BaseSHA: "def456"})
	w := &waits{}
	c, err := github.New(srv.URL(), token, append([]github.Option{github.WithWait(w.wait)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c, w
}

// noToken fails the test if err shows the token.
func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("error shows the token: %v", err)
	}
}

// count is how many logged requests start with prefix.
func count(srv *githubfake.Server, prefix string) int {
	n := 0
	for _, r := range srv.Requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, token string }{
		{"https://api.github.com", ""},
		{"ftp://example.com", "t"},
		{"api.github.com", "t"},
		{"https://user:pw@api.github.com", "t"},
	} {
		if _, err := github.New(tc.url, tc.token); err == nil {
			t.Errorf("New(%q, %q) succeeded", tc.url, tc.token)
		}
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	srv, _, w := setup(t)
	c, err := github.New(srv.URL(), "wrong-"+token, github.WithWait(w.wait))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.PullRequest(context.Background(), "o", "r", 1)
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "get pull request o/r#1") {
		t.Errorf("wrong token: %v", err)
	}
	noToken(t, err)
	if len(w.got()) != 0 || count(srv, "GET") != 1 {
		t.Errorf("a 401 was retried: waits %v, requests %v", w.got(), srv.Requests())
	}
}

func TestPullRequest(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	srv.AddPull("o", "r", githubfake.Pull{Number: 2, HeadSHA: "f00", HeadRef: "patch-1", HeadRepo: "mallory/r", BaseSHA: "def456", Author: "mallory"})
	srv.AddPull("o", "r", githubfake.Pull{Number: 3, HeadSHA: "f01", HeadRef: "gone", HeadRepo: "eve/r", HeadRepoDeleted: true})
	for _, tc := range []struct {
		n    int
		want github.PR
	}{
		{1, github.PR{Number: 1, Title: "Pull request 1", Author: "octocat", State: "open", HeadSHA: "abc123", HeadRef: "feature",
			HeadRepo: "o/r", BaseRef: "main", BaseSHA: "def456", BaseRepo: "o/r"}},
		{2, github.PR{Number: 2, Title: "Pull request 2", Author: "mallory", State: "open", HeadSHA: "f00", HeadRef: "patch-1",
			HeadRepo: "mallory/r", BaseRef: "main", BaseSHA: "def456", BaseRepo: "o/r", Fork: true}},
		{3, github.PR{Number: 3, Title: "Pull request 3", Author: "octocat", State: "open", HeadSHA: "f01", HeadRef: "gone",
			BaseRef: "main", BaseRepo: "o/r", Fork: true}},
	} {
		got, err := c.PullRequest(context.Background(), "o", "r", tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("PR %d (-want +got):\n%s", tc.n, diff)
		}
	}
	_, err := c.PullRequest(context.Background(), "o", "r", 99)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("missing PR: %v", err)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	for level, want := range map[string]string{
		"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none",
	} {
		srv.SetPermission("o", "r", "u-"+level, level)
		got, err := c.Permission(context.Background(), "o", "r", "u-"+level)
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", level, got, err, want)
		}
	}
	if got, err := c.Permission(context.Background(), "o", "r", "stranger"); err != nil || got != "none" {
		t.Errorf("non-collaborator (404): %q, %v; want none", got, err)
	}
	srv.FailNext("GET", "/repos/o/r/collaborators/*/permission", 500, nil, "")
	srv.FailNext("GET", "/repos/o/r/collaborators/*/permission", 500, nil, "")
	srv.FailNext("GET", "/repos/o/r/collaborators/*/permission", 500, nil, "")
	srv.FailNext("GET", "/repos/o/r/collaborators/*/permission", 500, nil, "")
	if got, err := c.Permission(context.Background(), "o", "r", "u-admin"); err == nil || got != "" {
		t.Errorf("after four 500s: %q, %v; want an error, not a level", got, err)
	}
}

func TestReact(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	id := srv.AddComment("o", "r", 1, "alice", "User", "/loop run")
	ctx := context.Background()
	for _, content := range []string{"eyes", "eyes", "+1"} {
		if err := c.React(ctx, "o", "r", id, content); err != nil {
			t.Fatalf("react %q: %v", content, err)
		}
	}
	if diff := cmp.Diff([]string{"eyes", "+1"}, srv.Reactions("o", "r", id)); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
	if err := c.React(ctx, "o", "r", id, "party"); err == nil || !strings.Contains(err.Error(), "422") {
		t.Errorf("bad content: %v", err)
	}
	if err := c.React(ctx, "o", "r", 42, "eyes"); err == nil || !strings.Contains(err.Error(), "comment 42") {
		t.Errorf("missing comment: %v", err)
	}
}

func TestSetStatus(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	ctx := context.Background()
	long := strings.Repeat("é", 200)
	if err := c.SetStatus(ctx, "o", "r", "abc123", "failure", "loop/lint", long, "https://example.com/run/1"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetStatus(ctx, "o", "r", "abc123", "success", "loop/test", "all good", ""); err != nil {
		t.Fatal(err)
	}
	got := srv.Statuses("o", "r", "abc123")
	want := []githubfake.Status{
		{State: "failure", Context: "loop/lint", Description: strings.Repeat("é", 139) + "…", TargetURL: "https://example.com/run/1", Creator: bot},
		{State: "success", Context: "loop/test", Description: "all good", Creator: bot},
	}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		name := p.Last().String()
		return name == ".ID" || name == ".SHA" || name == ".CreatedAt"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, got, ignore); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	err := c.SetStatus(ctx, "o", "r", "abc123", "done", "loop/x", "", "")
	if err == nil || !strings.Contains(err.Error(), `set status "loop/x" on o/r@abc123`) || !strings.Contains(err.Error(), "422") {
		t.Errorf("bad state: %v", err)
	}
}

func TestErrBodyTooLongIsDistinct(t *testing.T) {
	t.Parallel()
	_, c, _ := setup(t)
	_, err := c.Comment(context.Background(), "o", "r", 99, "hi")
	if err == nil || errors.Is(err, github.ErrBodyTooLong) {
		t.Errorf("comment on a missing PR: %v", err)
	}
}

func TestFileAt(t *testing.T) {
	t.Parallel()
	srv := githubfake.New()
	defer srv.Close()
	srv.SetToken("tok", "github-actions[bot]")
	srv.AddFile("o", "r", "abc123", ".github/loop.toml", []byte("name = \"x\"\n"))
	c, err := github.New(srv.URL(), "tok")
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.FileAt(context.Background(), "o", "r", ".github/loop.toml", "abc123")
	if err != nil || string(b) != "name = \"x\"\n" {
		t.Fatalf("FileAt = %q, %v", b, err)
	}
	if _, err := c.FileAt(context.Background(), "o", "r", ".github/loop.toml", "other"); err == nil {
		t.Fatal("a file missing at a ref was read")
	}
}
