package githubfake

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
)

// Pulls are the pull requests of owner/repo, by number.
func (s *Server) Pulls(owner, repo string) []Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(owner, repo)
	out := make([]Pull, 0, len(rs.pulls))
	for _, n := range slices.Sorted(maps.Keys(rs.pulls)) {
		out = append(out, withDefaults(rs.pulls[n]))
	}
	return out
}

// list is GET /repos/{owner}/{repo}/pulls with state (default open)
// and head ("owner:branch") filters, oldest first, in one page.
func (s pullsAPI) list(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	q := c.r.URL.Query()
	state := cmp.Or(q.Get("state"), "open")
	headOwner, headRef, byHead := strings.Cut(q.Get("head"), ":")
	list := []*github.PullRequest{}
	for _, n := range slices.Sorted(maps.Keys(rs.pulls)) {
		pr := withDefaults(rs.pulls[n])
		owner, _, _ := strings.Cut(cmp.Or(pr.HeadRepo, rs.owner+"/"+rs.name), "/")
		switch {
		case state != "all" && pr.State != state:
		case byHead && (!strings.EqualFold(owner, headOwner) || pr.HeadRef != headRef):
		default:
			list = append(list, s.json(c.base(), rs, pr))
		}
	}
	c.json(http.StatusOK, list)
}

type pullInput struct {
	Title *string `json:"title"`
	Head  string  `json:"head"`
	Base  string  `json:"base"`
	Body  *string `json:"body"`
}

// create is POST /repos/{owner}/{repo}/pulls: a pull request from a
// branch of this repository. As GitHub does, it refuses a second open one
// for the same head and base, and a body over BodyLimit characters.
func (s pullsAPI) create(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	var in pullInput
	if !c.decode(&in) || !validPull(c, in.Title, in.Body) {
		return
	}
	head := in.Head
	if o, ref, ok := strings.Cut(head, ":"); ok && strings.EqualFold(o, rs.owner) {
		head = ref
	}
	if head == "" || in.Base == "" {
		invalid(c.w, "PullRequest", "missing_field", "head", "head and base are required")
		return
	}
	for _, pr := range rs.pulls {
		if pr.HeadRepo == "" && pr.HeadRef == head && withDefaults(pr).BaseRef == in.Base && withDefaults(pr).State == "open" {
			invalid(c.w, "PullRequest", "custom", "", fmt.Sprintf("A pull request already exists for %s:%s.", rs.owner, head))
			return
		}
	}
	n := 1
	for k := range rs.pulls {
		n = max(n, k+1)
	}
	pr := Pull{Number: n, Title: *in.Title, Author: c.login, Creator: c.login, HeadRef: head, BaseRef: in.Base, State: "open", Body: deref(in.Body)}
	rs.pulls[n], rs.issues[n] = pr, true
	c.json(http.StatusCreated, s.json(c.base(), rs, pr))
}

// edit is PATCH /repos/{owner}/{repo}/pulls/{number}: title and body.
func (s pullsAPI) edit(c *call) {
	rs, ok := s.lookup(c)
	if !ok {
		return
	}
	n := int(c.intParam("number"))
	pr, ok := rs.pulls[n]
	if !ok {
		notFound(c.w)
		return
	}
	var in pullInput
	if !c.decode(&in) || !validPull(c, in.Title, in.Body) {
		return
	}
	if in.Title != nil {
		pr.Title = *in.Title
	}
	if in.Body != nil {
		pr.Body = *in.Body
	}
	rs.pulls[n] = pr
	c.json(http.StatusOK, s.json(c.base(), rs, withDefaults(pr)))
}

// validPull answers 422 for an empty title or a body over BodyLimit.
func validPull(c *call, title, body *string) bool {
	switch {
	case c.r.Method == http.MethodPost && (title == nil || strings.TrimSpace(*title) == ""):
		invalid(c.w, "PullRequest", "missing_field", "title", "title is required")
	case body != nil && utf8.RuneCountInString(*body) > BodyLimit:
		invalid(c.w, "PullRequest", "custom", "body", fmt.Sprintf("body is too long (maximum is %d characters)", BodyLimit))
	default:
		return true
	}
	return false
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
