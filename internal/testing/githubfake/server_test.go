package githubfake_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

const token = "ghs_fake"

func start(t *testing.T) *githubfake.Server {
	t.Helper()
	s := githubfake.New()
	t.Cleanup(s.Close)
	s.SetToken(token, "github-actions[bot]")
	s.AddPull("o", "r", githubfake.Pull{Number: 1, HeadSHA: "abc", HeadRef: "feature", BaseRef: "main", BaseSHA: "def"})
	return s
}

type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, s *githubfake.Server, method, path, body string) answer {
	t.Helper()
	return doAuth(t, s, "Bearer "+token, method, path, body)
}

func doAuth(t *testing.T, s *githubfake.Server, auth, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func decode[T any](t *testing.T, a answer) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(a.body), &v); err != nil {
		t.Fatalf("decode %q: %v", a.body, err)
	}
	return v
}

func TestAuth(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{"token " + token, http.StatusOK},
		{"Bearer " + token, http.StatusOK},
	} {
		if got := doAuth(t, s, tc.auth, "GET", "/repos/o/r/pulls/1", "").status; got != tc.want {
			t.Errorf("Authorization %q: status %d, want %d", tc.auth, got, tc.want)
		}
	}
	if got := do(t, s, "GET", "/repos/o/missing/pulls/1", "").status; got != http.StatusNotFound {
		t.Errorf("unknown repo: %d, want 404", got)
	}
}

func TestPaginationAndSince(t *testing.T) {
	t.Parallel()
	s := start(t)
	clock := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return clock })
	var ids []int64
	for i := range 250 {
		clock = clock.Add(time.Second)
		ids = append(ids, s.AddComment("o", "r", 1, "alice", "User", fmt.Sprintf("c%d", i)))
	}
	a := do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=100&page=2", "")
	page := decode[[]struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
	}](t, a)
	if len(page) != 100 || page[0].ID != ids[100] || page[99].Body != "c199" {
		t.Errorf("page 2: %d comments, first %d, last %q", len(page), page[0].ID, page[99].Body)
	}
	base := s.URL() + "/repos/o/r/issues/1/comments?"
	wantLink := fmt.Sprintf(`<%spage=1&per_page=100>; rel="prev", <%spage=3&per_page=100>; rel="next", `+
		`<%spage=3&per_page=100>; rel="last", <%spage=1&per_page=100>; rel="first"`, base, base, base, base)
	if diff := cmp.Diff(wantLink, a.header.Get("Link")); diff != "" {
		t.Errorf("Link (-want +got):\n%s", diff)
	}
	if n := len(decode[[]any](t, do(t, s, "GET", "/repos/o/r/issues/1/comments", ""))); n != 30 {
		t.Errorf("default page size %d, want 30", n)
	}
	if n := len(decode[[]any](t, do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=500&page=3", ""))); n != 50 {
		t.Errorf("per_page=500 page 3: %d, want 50 (100 a page at most)", n)
	}
	since := time.Date(2024, 6, 1, 0, 3, 30, 0, time.UTC).Format(time.RFC3339) // comment 209 on
	got := decode[[]any](t, do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=100&since="+since, ""))
	if len(got) != 41 {
		t.Errorf("since %s: %d comments, want 41", since, len(got))
	}
	if link := do(t, s, "GET", "/repos/o/r/issues/1/comments?per_page=100&since="+since, "").header.Get("Link"); link != "" {
		t.Errorf("one page carries a Link: %s", link)
	}
}

func TestCommentLifecycle(t *testing.T) {
	t.Parallel()
	s := start(t)
	a := do(t, s, "POST", "/repos/o/r/issues/1/comments", `{"body":"hello"}`)
	if a.status != http.StatusCreated {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	created := decode[struct {
		ID   int64 `json:"id"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	}](t, a)
	if created.User.Login != "github-actions[bot]" || created.User.Type != "Bot" || created.ID <= 1<<31 {
		t.Errorf("created %+v", created)
	}
	path := fmt.Sprintf("/repos/o/r/issues/comments/%d", created.ID)
	if a := do(t, s, "PATCH", path, `{"body":"edited"}`); a.status != http.StatusOK {
		t.Errorf("edit: %d %s", a.status, a.body)
	}
	if got := s.Comments("o", "r", 1); len(got) != 1 || got[0].Body != "edited" || got[0].UserType != "Bot" {
		t.Errorf("after edit: %+v", got)
	}
	for _, step := range []struct {
		method, body string
		want         int
	}{
		{"DELETE", "", http.StatusNoContent},
		{"DELETE", "", http.StatusNotFound},
		{"GET", "", http.StatusNotFound},
		{"PATCH", `{"body":"x"}`, http.StatusNotFound},
	} {
		if got := do(t, s, step.method, path, step.body).status; got != step.want {
			t.Errorf("%s: %d, want %d", step.method, got, step.want)
		}
	}
	if got := do(t, s, "POST", "/repos/o/r/issues/99/comments", `{"body":"x"}`).status; got != http.StatusNotFound {
		t.Errorf("comment on a missing issue: %d, want 404", got)
	}
}

// TestEditComment: an edit seen by the API moves updated_at to the
// clock's time and leaves created_at.
func TestEditComment(t *testing.T) {
	t.Parallel()
	s := start(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	id := s.AddComment("o", "r", 1, "alice", "User", "first")
	now = now.Add(time.Minute)
	if !s.EditComment("o", "r", id, "second") || s.EditComment("o", "r", id+1000, "x") {
		t.Fatal("EditComment found the wrong comments")
	}
	got := decode[struct {
		Body      string `json:"body"`
		CreatedAt string `json:"created_at"`
		UpdatedAt string `json:"updated_at"`
	}](t, do(t, s, "GET", fmt.Sprintf("/repos/o/r/issues/comments/%d", id), ""))
	if got.Body != "second" || got.CreatedAt != "2026-11-29T12:00:00Z" || got.UpdatedAt != "2026-11-29T12:01:00Z" {
		t.Errorf("after the edit: %+v", got)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		n    int
		want int
	}{{githubfake.BodyLimit, http.StatusCreated}, {githubfake.BodyLimit + 1, http.StatusUnprocessableEntity}} {
		body, _ := json.Marshal(map[string]string{"body": strings.Repeat("é", tc.n)})
		a := do(t, s, "POST", "/repos/o/r/issues/1/comments", string(body))
		if a.status != tc.want {
			t.Errorf("%d characters: %d, want %d", tc.n, a.status, tc.want)
		}
		if tc.want == http.StatusUnprocessableEntity {
			want := `{"message":"Validation Failed","errors":[{"resource":"IssueComment","code":"custom","field":"body","message":"body is too long (maximum is 65536 characters)"}],"documentation_url":"https://docs.github.com/rest","status":"422"}` + "\n"
			if diff := cmp.Diff(want, a.body); diff != "" {
				t.Errorf("422 body (-want +got):\n%s", diff)
			}
		}
	}
}

func TestReactions(t *testing.T) {
	t.Parallel()
	s := start(t)
	id := s.AddComment("o", "r", 1, "alice", "User", "/loop run")
	path := fmt.Sprintf("/repos/o/r/issues/comments/%d/reactions", id)
	for _, tc := range []struct {
		content string
		want    int
	}{{"eyes", 201}, {"eyes", 200}, {"+1", 201}, {"party", 422}} {
		if got := do(t, s, "POST", path, `{"content":"`+tc.content+`"}`).status; got != tc.want {
			t.Errorf("react %q: %d, want %d", tc.content, got, tc.want)
		}
	}
	if diff := cmp.Diff([]string{"eyes", "+1"}, s.Reactions("o", "r", id)); diff != "" {
		t.Errorf("reactions (-want +got):\n%s", diff)
	}
	if got := do(t, s, "POST", "/repos/o/r/issues/comments/1/reactions", `{"content":"eyes"}`).status; got != 404 {
		t.Errorf("react to a missing comment: %d, want 404", got)
	}
}

func TestPermission(t *testing.T) {
	t.Parallel()
	s := start(t)
	for level, want := range map[string]string{"admin": "admin", "maintain": "write", "write": "write", "triage": "read", "read": "read", "none": "none"} {
		s.SetPermission("o", "r", "u-"+level, level)
		a := do(t, s, "GET", "/repos/o/r/collaborators/u-"+level+"/permission", "")
		got := decode[struct {
			Permission string `json:"permission"`
			User       struct {
				Login string `json:"login"`
			} `json:"user"`
		}](t, a)
		if got.Permission != want || got.User.Login != "u-"+level {
			t.Errorf("%s: %+v, want permission %q", level, got, want)
		}
	}
	if got := do(t, s, "GET", "/repos/o/r/collaborators/stranger/permission", "").status; got != 404 {
		t.Errorf("stranger: %d, want 404", got)
	}
}

func TestStatuses(t *testing.T) {
	t.Parallel()
	s := start(t)
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"state":"pending","context":"loop/a"}`, 201},
		{`{"state":"success","context":"loop/a","description":"ok"}`, 201},
		{`{"state":"failure","context":"loop/b"}`, 201},
		{`{"state":"done","context":"loop/b"}`, 422},
		{`{"state":"success","description":"` + strings.Repeat("é", 141) + `"}`, 422},
		{`{"state":"success","description":"` + strings.Repeat("é", 140) + `"}`, 201},
	} {
		if got := do(t, s, "POST", "/repos/o/r/statuses/abc", tc.body).status; got != tc.want {
			t.Errorf("%s: %d, want %d", tc.body, got, tc.want)
		}
	}
	if n := len(s.Statuses("o", "r", "abc")); n != 4 {
		t.Errorf("%d statuses recorded, want 4", n)
	}
	for _, ref := range []string{"abc", "feature"} {
		got := decode[struct {
			State    string `json:"state"`
			SHA      string `json:"sha"`
			Total    int    `json:"total_count"`
			Statuses []struct {
				State   string `json:"state"`
				Context string `json:"context"`
			} `json:"statuses"`
		}](t, do(t, s, "GET", "/repos/o/r/commits/"+ref+"/status", ""))
		if got.State != "failure" || got.SHA != "abc" || got.Total != 3 || got.Statuses[0].State != "success" {
			t.Errorf("combined status of %s: %+v", ref, got)
		}
	}
}

func TestFailNext(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.FailNext("GET", "/repos/o/r/pulls/*", 403, map[string]string{"Retry-After": "1"}, "")
	s.FailNext("*", "/repos/o/r/pulls/1", 500, nil, "")
	a := do(t, s, "GET", "/repos/o/r/pulls/1", "")
	if a.status != 403 || a.header.Get("Retry-After") != "1" || !strings.Contains(a.body, "secondary-rate-limits") {
		t.Errorf("first: %d %v %s", a.status, a.header, a.body)
	}
	if a := do(t, s, "GET", "/repos/o/r/pulls/1", ""); a.status != 500 {
		t.Errorf("second: %d", a.status)
	}
	if a := do(t, s, "GET", "/repos/o/r/pulls/1", ""); a.status != 200 {
		t.Errorf("third: %d", a.status)
	}
	if a := doAuth(t, s, "", "GET", "/repos/o/r/pulls/1", ""); a.status != 401 {
		t.Errorf("bad token: %d", a.status)
	}
	want := []string{"GET /repos/o/r/pulls/1", "GET /repos/o/r/pulls/1", "GET /repos/o/r/pulls/1", "GET /repos/o/r/pulls/1"}
	if diff := cmp.Diff(want, s.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

// TestFailEvery: a standing fault answers every matching request, and
// only those.
func TestFailEvery(t *testing.T) {
	t.Parallel()
	s := start(t)
	s.FailEvery("GET", "/repos/o/r/pulls/*", http.StatusBadGateway)
	for range 2 {
		if a := do(t, s, "GET", "/repos/o/r/pulls/1", ""); a.status != http.StatusBadGateway || !strings.Contains(a.body, "Bad Gateway") {
			t.Errorf("GET: %d %s", a.status, a.body)
		}
	}
	if a := do(t, s, "PATCH", "/repos/o/r/pulls/1", `{"body":"x"}`); a.status != http.StatusOK {
		t.Errorf("PATCH: %d", a.status)
	}
}

// TestAddStatus: a status set by someone else is listed, newest first,
// with its creator, as one set through the API is.
func TestAddStatus(t *testing.T) {
	t.Parallel()
	s := start(t)
	do(t, s, "POST", "/repos/o/r/statuses/abc", `{"state":"pending","context":"loop/a"}`)
	s.AddStatus("o", "r", githubfake.Status{SHA: "abc", State: "success", Context: "loop/a", Creator: "mallory"})
	type status struct {
		State   string `json:"state"`
		Creator struct {
			Login string `json:"login"`
		} `json:"creator"`
	}
	got := decode[[]status](t, do(t, s, "GET", "/repos/o/r/commits/abc/statuses", ""))
	want := make([]status, 2)
	want[0].State, want[0].Creator.Login = "success", "mallory"
	want[1].State, want[1].Creator.Login = "pending", "github-actions[bot]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
}

func TestUser(t *testing.T) {
	t.Parallel()
	s := start(t)
	if got := do(t, s, "GET", "/user", "").status; got != http.StatusForbidden {
		t.Errorf("GET /user as a bot: %d, want 403", got)
	}
	s.SetToken("ghp_user", "alice")
	if a := doAuth(t, s, "token ghp_user", "GET", "/user", ""); !strings.Contains(a.body, `"login":"alice"`) {
		t.Errorf("GET /user as alice: %d %s", a.status, a.body)
	}
}

// testClient has a transport of its own: a parallel test's server Close
// closes http.DefaultTransport's idle connections, which would break
// requests in flight here.
var testClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
