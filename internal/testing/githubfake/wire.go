package githubfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
)

// route is one REST path. Segments in braces are parameters; routes are
// tried in order, so a literal segment must come before a parameter that
// would also match it (issues/comments/{id} before issues/{number}/...).
type route struct {
	method string
	segs   []string
	handle func(*Server, *call)
}

var routes = []route{
	on("GET", "/user", usersAPI.get),
	on("GET", "/repos/{owner}/{repo}/pulls/{number}", pullsAPI.get),
	on("PATCH", "/repos/{owner}/{repo}/pulls/{number}", pullsAPI.edit),
	on("GET", "/repos/{owner}/{repo}/pulls", pullsAPI.list),
	on("POST", "/repos/{owner}/{repo}/pulls", pullsAPI.create),
	on("GET", "/repos/{owner}/{repo}/issues/comments/{id}", commentsAPI.get),
	on("PATCH", "/repos/{owner}/{repo}/issues/comments/{id}", commentsAPI.edit),
	on("DELETE", "/repos/{owner}/{repo}/issues/comments/{id}", commentsAPI.delete),
	on("POST", "/repos/{owner}/{repo}/issues/comments/{id}/reactions", commentsAPI.react),
	on("GET", "/repos/{owner}/{repo}/issues/{number}/comments", commentsAPI.list),
	on("POST", "/repos/{owner}/{repo}/issues/{number}/comments", commentsAPI.create),
	on("GET", "/repos/{owner}/{repo}/collaborators/{user}/permission", reposAPI.permission),
	on("POST", "/repos/{owner}/{repo}/statuses/{sha}", statusesAPI.create),
	on("GET", "/repos/{owner}/{repo}/commits/{ref}/status", statusesAPI.combined),
	on("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses", statusesAPI.list),
	on("GET", "/repos/{owner}/{repo}/contents/{path...}", contentsAPI.get),
}

// The handlers are grouped by resource, each group a type over the one
// Server, so that Server's own methods are the API tests set up and read
// the fake with, and each group's helpers (json, say) stay with it.
type (
	commentsAPI struct{ *Server }
	pullsAPI    struct{ *Server }
	statusesAPI struct{ *Server }
	reposAPI    struct{ *Server }
	contentsAPI struct{ *Server }
	usersAPI    struct{ *Server }
)

func on[H ~struct{ *Server }](method, pattern string, h func(H, *call)) route {
	return route{method, strings.Split(strings.Trim(pattern, "/"), "/"), func(s *Server, c *call) { h(H{s}, c) }}
}

func (rt route) match(method, urlPath string) (map[string]string, bool) {
	segs := strings.Split(strings.Trim(urlPath, "/"), "/")
	if n := len(rt.segs); n > 0 && rt.segs[n-1] == "{path...}" && len(segs) >= n {
		segs = append(segs[:n-1], strings.Join(segs[n-1:], "/")) // the rest of the path
	}
	if method != rt.method || len(segs) != len(rt.segs) {
		return nil, false
	}
	p := map[string]string{}
	for i, want := range rt.segs {
		if strings.HasPrefix(want, "{") {
			if segs[i] == "" {
				return nil, false
			}
			p[strings.Trim(want, "{}")] = segs[i]
		} else if segs[i] != want {
			return nil, false
		}
	}
	return p, true
}

// call is one request being answered.
type call struct {
	w     http.ResponseWriter
	r     *http.Request
	p     map[string]string
	login string // who the token acts as
}

// base is the API root as the client reached it, for url fields and links.
func (c *call) base() string { return "http://" + c.r.Host }

func (c *call) json(status int, v any) { writeJSON(c.w, status, v) }

// decode reads a JSON request body into v, answering 400 when it is not JSON.
func (c *call) decode(v any) bool {
	if err := json.NewDecoder(c.r.Body).Decode(v); err != nil {
		writeError(c.w, http.StatusBadRequest, "Problems parsing JSON", "https://docs.github.com/rest")
		return false
	}
	return true
}

// intParam is the path parameter name as a positive number, or 0.
func (c *call) intParam(name string) int64 {
	n, err := strconv.ParseInt(c.p[name], 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

type errorBody struct {
	Message          string       `json:"message"`
	Errors           []fieldError `json:"errors,omitempty"`
	DocumentationURL string       `json:"documentation_url"`
	Status           string       `json:"status"`
}

type fieldError struct {
	Resource string `json:"resource"`
	Code     string `json:"code"`
	Field    string `json:"field"`
	Message  string `json:"message,omitempty"`
}

func writeError(w http.ResponseWriter, status int, msg, doc string) {
	writeJSON(w, status, errorBody{Message: msg, DocumentationURL: doc, Status: strconv.Itoa(status)})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "Not Found", "https://docs.github.com/rest")
}

// invalid answers 422 Validation Failed for one field.
func invalid(w http.ResponseWriter, resource, code, field, msg string) {
	writeJSON(w, http.StatusUnprocessableEntity, errorBody{
		Message:          "Validation Failed",
		Errors:           []fieldError{{Resource: resource, Code: code, Field: field, Message: msg}},
		DocumentationURL: "https://docs.github.com/rest",
		Status:           "422",
	})
}

// userRec is a GitHub account the fake knows.
type userRec struct {
	login, kind string // kind: "User" or "Bot"
	id          int64
}

// user finds or registers login; kind "" means infer it from the login.
// A known login keeps the kind it was registered with.
// Callers hold s.mu.
func (s *Server) user(login, kind string) *userRec {
	key := strings.ToLower(login)
	if u, ok := s.users[key]; ok {
		return u
	}
	if kind == "" {
		kind = "User"
		if strings.HasSuffix(login, "[bot]") {
			kind = "Bot"
		}
	}
	u := &userRec{login: login, kind: kind, id: int64(1000 + len(s.users))}
	s.users[key] = u
	return u
}

func (u *userRec) json(base string) *github.User {
	return &github.User{
		Login: ptr(u.login), ID: ptr(u.id), NodeID: ptr(fmt.Sprintf("U_%d", u.id)),
		AvatarURL: ptr(fmt.Sprintf("https://avatars.githubusercontent.com/u/%d?v=4", u.id)),
		URL:       ptr(base + "/users/" + u.login), HTMLURL: ptr("https://github.com/" + u.login),
		Type: ptr(u.kind), SiteAdmin: ptr(false),
	}
}

// get is GET /user. Installation tokens (GITHUB_TOKEN, app tokens) may
// not read it, so a Bot gets GitHub's 403.
func (s usersAPI) get(c *call) {
	u := s.user(c.login, "")
	if u.kind == "Bot" {
		writeError(c.w, http.StatusForbidden, "Resource not accessible by integration",
			"https://docs.github.com/rest/users/users#get-the-authenticated-user")
		return
	}
	c.json(http.StatusOK, u.json(c.base()))
}

// stamp is t as go-github sends and reads it: RFC 3339, as GitHub shows it.
func stamp(t time.Time) *github.Timestamp { return &github.Timestamp{Time: t.UTC()} }

func ptr[T any](v T) *T { return &v }
