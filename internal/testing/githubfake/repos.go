package githubfake

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Pull is a pull request as set up by a test.
type Pull struct {
	Number          int
	Title           string // default "Pull request N"
	Author          string // login; default "octocat"
	HeadSHA         string
	HeadRef         string // default "feature"
	HeadRepo        string // "owner/repo" of the head; "" means the base repository
	HeadRepoDeleted bool   // the fork is gone: head.repo is null, as GitHub sends it
	BaseRef         string // default "main"
	BaseSHA         string
	Draft           bool
	State           string // default "open"
	Body            string
	Creator         string // who opened it through the API; "" for a pull request set up by a test
}

type repoState struct {
	owner, name string
	id          int64
	pulls       map[int]Pull
	issues      map[int]bool // numbers that take comments (pulls and issues share them)
	comments    []*comment   // in id order
	perms       map[string]string
	statuses    []Status
	files       map[string][]byte // "ref:path" → content
}

// AddRepo creates owner/repo. The other setup methods create it as needed.
func (s *Server) AddRepo(owner, repo string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, repo)
}

// repo finds or creates owner/repo. Callers hold s.mu.
func (s *Server) repo(owner, name string) *repoState {
	key := strings.ToLower(owner + "/" + name)
	if rs, ok := s.repos[key]; ok {
		return rs
	}
	rs := &repoState{
		owner: owner, name: name, id: int64(500 + len(s.repos)),
		pulls: map[int]Pull{}, issues: map[int]bool{}, perms: map[string]string{},
	}
	s.repos[key] = rs
	s.user(owner, "")
	return rs
}

// lookup is the repository named in the path, or a 404 answered. Callers hold s.mu.
func (s *Server) lookup(c *call) (*repoState, bool) {
	rs, ok := s.repos[strings.ToLower(c.p["owner"]+"/"+c.p["repo"])]
	if !ok {
		notFound(c.w)
	}
	return rs, ok
}

// AddPull adds (or replaces) a pull request; its number also takes comments.
func (s *Server) AddPull(owner, repo string, pr Pull) {
	if pr.Number <= 0 {
		panic(fmt.Sprintf("githubfake: AddPull %s/%s: number %d", owner, repo, pr.Number))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(owner, repo)
	rs.pulls[pr.Number] = pr
	rs.issues[pr.Number] = true
}

// levels maps what SetPermission accepts to what the permission endpoint
// reports, as GitHub does: maintain reads as write, triage as read.
var levels = map[string]string{
	"admin": "admin", "maintain": "write", "write": "write",
	"triage": "read", "read": "read", "none": "none",
}

// SetPermission makes user a collaborator on owner/repo at level: "admin",
// "maintain", "write", "triage", "read" or "none". Users never set answer 404.
func (s *Server) SetPermission(owner, repo, user, level string) {
	if _, ok := levels[level]; !ok {
		panic(fmt.Sprintf("githubfake: SetPermission %s: unknown level %q", user, level))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(owner, repo).perms[strings.ToLower(user)] = level
	s.user(user, "")
}

type repoJSON struct {
	ID            int64    `json:"id"`
	NodeID        string   `json:"node_id"`
	Name          string   `json:"name"`
	FullName      string   `json:"full_name"`
	Private       bool     `json:"private"`
	Owner         userJSON `json:"owner"`
	HTMLURL       string   `json:"html_url"`
	Fork          bool     `json:"fork"`
	URL           string   `json:"url"`
	DefaultBranch string   `json:"default_branch"`
}

func (s *Server) repoJSON(base, fullName string, id int64, fork bool) repoJSON {
	owner, name, _ := strings.Cut(fullName, "/")
	return repoJSON{
		ID: id, NodeID: fmt.Sprintf("R_%d", id), Name: name, FullName: fullName,
		Owner: s.user(owner, "").json(base), HTMLURL: "https://github.com/" + fullName,
		Fork: fork, URL: base + "/repos/" + fullName, DefaultBranch: "main",
	}
}

type branchJSON struct {
	Label string    `json:"label"`
	Ref   string    `json:"ref"`
	SHA   string    `json:"sha"`
	User  userJSON  `json:"user"`
	Repo  *repoJSON `json:"repo"`
}

type pullJSON struct {
	URL       string     `json:"url"`
	ID        int64      `json:"id"`
	NodeID    string     `json:"node_id"`
	HTMLURL   string     `json:"html_url"`
	IssueURL  string     `json:"issue_url"`
	Number    int        `json:"number"`
	State     string     `json:"state"`
	Locked    bool       `json:"locked"`
	Title     string     `json:"title"`
	User      userJSON   `json:"user"`
	Body      string     `json:"body"`
	CreatedAt string     `json:"created_at"`
	UpdatedAt string     `json:"updated_at"`
	Draft     bool       `json:"draft"`
	Merged    bool       `json:"merged"`
	Head      branchJSON `json:"head"`
	Base      branchJSON `json:"base"`
}

// get is GET /repos/{owner}/{repo}/pulls/{number}.
func (s pullsAPI) get(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	pr, ok := rs.pulls[int(c.intParam("number"))]
	if !ok {
		notFound(c.w)
		return
	}
	c.json(http.StatusOK, s.json(c.base(), rs, withDefaults(pr)))
}

func withDefaults(pr Pull) Pull {
	pr.Title = cmp.Or(pr.Title, fmt.Sprintf("Pull request %d", pr.Number))
	pr.Author = cmp.Or(pr.Author, "octocat")
	pr.HeadRef = cmp.Or(pr.HeadRef, "feature")
	pr.BaseRef = cmp.Or(pr.BaseRef, "main")
	pr.State = cmp.Or(pr.State, "open")
	return pr
}

func (s pullsAPI) json(base string, rs *repoState, pr Pull) pullJSON {
	full := rs.owner + "/" + rs.name
	baseRepo := s.repoJSON(base, full, rs.id, false)
	headFull := cmp.Or(pr.HeadRepo, full)
	headOwner, _, _ := strings.Cut(headFull, "/")
	var headRepo *repoJSON
	if !pr.HeadRepoDeleted {
		hr := baseRepo
		if !strings.EqualFold(headFull, full) {
			hr = s.repoJSON(base, headFull, rs.id+100000, true)
		}
		headRepo = &hr
	}
	created := stamp(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	id := int64(pr.Number) + rs.id*100000
	return pullJSON{
		URL: fmt.Sprintf("%s/repos/%s/pulls/%d", base, full, pr.Number), ID: id,
		NodeID: fmt.Sprintf("PR_%d", id), HTMLURL: fmt.Sprintf("https://github.com/%s/pull/%d", full, pr.Number),
		IssueURL: fmt.Sprintf("%s/repos/%s/issues/%d", base, full, pr.Number),
		Number:   pr.Number, State: pr.State, Title: pr.Title, User: s.user(pr.Author, "").json(base),
		CreatedAt: created, UpdatedAt: created, Draft: pr.Draft, Body: pr.Body,
		Head: branchJSON{Label: headOwner + ":" + pr.HeadRef, Ref: pr.HeadRef, SHA: pr.HeadSHA,
			User: s.user(headOwner, "").json(base), Repo: headRepo},
		Base: branchJSON{Label: rs.owner + ":" + pr.BaseRef, Ref: pr.BaseRef, SHA: pr.BaseSHA,
			User: s.user(rs.owner, "").json(base), Repo: &baseRepo},
	}
}

type permissionJSON struct {
	Permission string         `json:"permission"`
	RoleName   string         `json:"role_name"`
	User       permissionUser `json:"user"`
}

type permissionUser struct {
	userJSON
	Permissions map[string]bool `json:"permissions"`
	RoleName    string          `json:"role_name"`
}

// permission is GET /repos/{owner}/{repo}/collaborators/{user}/permission.
func (s reposAPI) permission(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	role, ok := rs.perms[strings.ToLower(c.p["user"])]
	if !ok {
		notFound(c.w)
		return
	}
	rank := map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
	c.json(http.StatusOK, permissionJSON{
		Permission: levels[role],
		RoleName:   role,
		User: permissionUser{
			userJSON: s.user(c.p["user"], "").json(c.base()),
			Permissions: map[string]bool{
				"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5,
			},
			RoleName: role,
		},
	})
}
