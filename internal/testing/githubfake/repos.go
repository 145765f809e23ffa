package githubfake

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v62/github"
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
		pulls: map[int]Pull{}, issues: map[int]bool{}, perms: map[string]string{}, files: map[string][]byte{},
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

func (s *Server) repoJSON(base, fullName string, id int64, fork bool) *github.Repository {
	owner, name, _ := strings.Cut(fullName, "/")
	return &github.Repository{
		ID: ptr(id), NodeID: ptr(fmt.Sprintf("R_%d", id)), Name: ptr(name), FullName: ptr(fullName),
		Private: ptr(false), Owner: s.user(owner, "").json(base), HTMLURL: ptr("https://github.com/" + fullName),
		Fork: ptr(fork), URL: ptr(base + "/repos/" + fullName), DefaultBranch: ptr("main"),
	}
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

func (s pullsAPI) json(base string, rs *repoState, pr Pull) *github.PullRequest {
	full := rs.owner + "/" + rs.name
	baseRepo := s.repoJSON(base, full, rs.id, false)
	headFull := cmp.Or(pr.HeadRepo, full)
	headOwner, _, _ := strings.Cut(headFull, "/")
	headRepo := baseRepo
	switch {
	case pr.HeadRepoDeleted:
		headRepo = nil
	case !strings.EqualFold(headFull, full):
		headRepo = s.repoJSON(base, headFull, rs.id+100000, true)
	}
	created := stamp(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	id := int64(pr.Number) + rs.id*100000
	return &github.PullRequest{
		URL: ptr(fmt.Sprintf("%s/repos/%s/pulls/%d", base, full, pr.Number)), ID: ptr(id),
		NodeID: ptr(fmt.Sprintf("PR_%d", id)), HTMLURL: ptr(fmt.Sprintf("https://github.com/%s/pull/%d", full, pr.Number)),
		IssueURL: ptr(fmt.Sprintf("%s/repos/%s/issues/%d", base, full, pr.Number)),
		Number:   ptr(pr.Number), State: ptr(pr.State), Locked: ptr(false), Title: ptr(pr.Title),
		User: s.user(pr.Author, "").json(base), Body: ptr(pr.Body), CreatedAt: created, UpdatedAt: created,
		Draft: ptr(pr.Draft), Merged: ptr(false),
		Head: &github.PullRequestBranch{Label: ptr(headOwner + ":" + pr.HeadRef), Ref: ptr(pr.HeadRef), SHA: ptr(pr.HeadSHA),
			User: s.user(headOwner, "").json(base), Repo: headRepo},
		Base: &github.PullRequestBranch{Label: ptr(rs.owner + ":" + pr.BaseRef), Ref: ptr(pr.BaseRef), SHA: ptr(pr.BaseSHA),
			User: s.user(rs.owner, "").json(base), Repo: baseRepo},
	}
}

// permissionJSON adds what go-github does not read to its type.
type permissionJSON struct {
	*github.RepositoryPermissionLevel
	RoleName string `json:"role_name"`
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
	user := s.user(c.p["user"], "").json(c.base())
	user.RoleName = ptr(role)
	user.Permissions = map[string]bool{
		"pull": rank >= 1, "triage": rank >= 2, "push": rank >= 3, "maintain": rank >= 4, "admin": rank >= 5,
	}
	c.json(http.StatusOK, permissionJSON{
		RepositoryPermissionLevel: &github.RepositoryPermissionLevel{Permission: ptr(levels[role]), User: user},
		RoleName:                  role,
	})
}
