package githubfake

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
)

// Status is a commit status as recorded.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
	Creator     string
	CreatedAt   time.Time
}

// Statuses are the statuses set on sha in owner/repo, oldest first.
func (s *Server) Statuses(owner, repo, sha string) []Status {
	return slices.DeleteFunc(s.AllStatuses(owner, repo), func(st Status) bool { return st.SHA != sha })
}

// AllStatuses are every status set in owner/repo, on any commit, oldest
// first.
func (s *Server) AllStatuses(owner, repo string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Status(nil), s.repo(owner, repo).statuses...)
}

// AddStatus records a status on st.SHA as if st.Creator set it through
// the API with a token of their own; its ID and CreatedAt are the fake's.
func (s *Server) AddStatus(owner, repo string, st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(owner, repo)
	st.ID, st.CreatedAt, st.Context = s.id(), s.now(), cmp.Or(st.Context, "default")
	rs.statuses = append(rs.statuses, st)
}

func (s statusesAPI) json(base, full string, st Status) *github.RepoStatus {
	opt := func(v string) *string {
		if v == "" {
			return nil
		}
		return &v
	}
	return &github.RepoStatus{
		URL: ptr(fmt.Sprintf("%s/repos/%s/statuses/%s", base, full, st.SHA)), ID: ptr(st.ID),
		AvatarURL: ptr("https://avatars.githubusercontent.com/u/0?v=4"), NodeID: ptr(fmt.Sprintf("SC_%d", st.ID)),
		State: ptr(st.State), Description: opt(st.Description), TargetURL: opt(st.TargetURL), Context: ptr(st.Context),
		CreatedAt: stamp(st.CreatedAt), UpdatedAt: stamp(st.CreatedAt), Creator: s.user(st.Creator, "").json(base),
	}
}

var states = map[string]bool{"pending": true, "success": true, "failure": true, "error": true}

// create is POST /repos/{owner}/{repo}/statuses/{sha}.
func (s statusesAPI) create(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	var in struct {
		State       string `json:"state"`
		TargetURL   string `json:"target_url"`
		Description string `json:"description"`
		Context     string `json:"context"`
	}
	if !c.decode(&in) {
		return
	}
	if !states[in.State] {
		invalid(c.w, "Status", "custom", "state", "state is not included in the list")
		return
	}
	if utf8.RuneCountInString(in.Description) > 140 {
		invalid(c.w, "Status", "custom", "description", "description is too long (maximum is 140 characters)")
		return
	}
	in.Context = cmp.Or(in.Context, "default")
	st := Status{
		ID: s.id(), SHA: c.p["sha"], State: in.State, Context: in.Context, Description: in.Description,
		TargetURL: in.TargetURL, Creator: c.login, CreatedAt: s.now(),
	}
	rs.statuses = append(rs.statuses, st)
	c.json(http.StatusCreated, s.json(c.base(), rs.owner+"/"+rs.name, st))
}

// combined is GET /repos/{owner}/{repo}/commits/{ref}/status: the
// latest status per context, and their sum: failure if any failed or
// errored, pending if any is pending or there are none, else success.
func (s statusesAPI) combined(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	sha := rs.resolve(c.p["ref"])
	full := rs.owner + "/" + rs.name
	latest := map[string]int{}
	var order []string
	for i, st := range rs.statuses {
		if st.SHA != sha {
			continue
		}
		if _, seen := latest[st.Context]; !seen {
			order = append(order, st.Context)
		}
		latest[st.Context] = i
	}
	list := []*github.RepoStatus{}
	state := "success"
	for _, ctx := range order {
		st := rs.statuses[latest[ctx]]
		list = append(list, s.json(c.base(), full, st))
		switch {
		case st.State == "failure" || st.State == "error":
			state = "failure"
		case st.State == "pending" && state != "failure":
			state = "pending"
		}
	}
	if len(list) == 0 {
		state = "pending"
	}
	c.json(http.StatusOK, map[string]any{
		"state": state, "statuses": list, "sha": sha, "total_count": len(list),
		"repository": s.repoJSON(c.base(), full, rs.id, false),
		"commit_url": fmt.Sprintf("%s/repos/%s/commits/%s", c.base(), full, sha),
		"url":        fmt.Sprintf("%s/repos/%s/commits/%s/status", c.base(), full, sha),
	})
}

// list is GET /repos/{owner}/{repo}/commits/{ref}/statuses: every
// status set on the commit, newest first, with who set it (creator), in
// pages (per_page default 30, at most 100).
func (s statusesAPI) list(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	sha := rs.resolve(c.p["ref"])
	full := rs.owner + "/" + rs.name
	all := []*github.RepoStatus{}
	for i := len(rs.statuses) - 1; i >= 0; i-- {
		if st := rs.statuses[i]; st.SHA == sha {
			all = append(all, s.json(c.base(), full, st))
		}
	}
	paged(c, all)
}

// resolve turns a branch name a pull request knows into its SHA; anything
// else is taken to be a SHA.
func (rs *repoState) resolve(ref string) string {
	ref = strings.TrimPrefix(ref, "heads/")
	for _, pr := range rs.pulls {
		switch ref {
		case pr.HeadRef:
			if pr.HeadRepo == "" {
				return pr.HeadSHA
			}
		case pr.BaseRef:
			return pr.BaseSHA
		}
	}
	return ref
}
