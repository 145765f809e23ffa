package githubfake

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"
)

// BodyLimit is the most characters GitHub accepts in a comment body.
const BodyLimit = 65536

// Comment is an issue or pull request comment as recorded.
type Comment struct {
	ID        int64
	Issue     int
	User      string
	UserType  string // "User" or "Bot"
	Body      string
	CreatedAt time.Time
	UpdatedAt time.Time
}

type comment struct {
	Comment
	reactions []reaction
}

type reaction struct {
	id        int64
	user      string
	content   string
	createdAt time.Time
}

// AddComment records a comment by user (of type userType, "User" or "Bot";
// "" means the type user was first seen with, or one inferred from the
// login: "Bot" for a login ending in "[bot]") on issue or pull request number issue, and
// returns its id. Ids increase, across repositories, as on GitHub.
func (s *Server) AddComment(owner, repo string, issue int, user, userType, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := s.repo(owner, repo)
	rs.issues[issue] = true
	return s.addComment(rs, issue, s.user(user, userType), userType, body).ID
}

// addComment appends a comment by u, shown as of type kind ("" for u's own).
// Callers hold s.mu.
func (s *Server) addComment(rs *repoState, issue int, u *userRec, kind, body string) *comment {
	kind = cmp.Or(kind, u.kind)
	now := s.now()
	cm := &comment{Comment: Comment{
		ID: s.id(), Issue: issue, User: u.login, UserType: kind, Body: body, CreatedAt: now, UpdatedAt: now,
	}}
	rs.comments = append(rs.comments, cm)
	return cm
}

// EditComment replaces a comment's body as if someone edited it on
// GitHub: its updated_at becomes the clock's time (see SetClock). It says
// whether the comment was there.
func (s *Server) EditComment(owner, repo string, id int64, body string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cm := s.repo(owner, repo).find(id)
	if cm == nil {
		return false
	}
	cm.Body, cm.UpdatedAt = body, s.now()
	return true
}

// DeleteComment removes a comment as if someone deleted it on GitHub, and
// says whether it was there.
func (s *Server) DeleteComment(owner, repo string, id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repo(owner, repo).remove(id)
}

// Comments are the comments on issue, oldest first.
func (s *Server) Comments(owner, repo string, issue int) []Comment {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Comment
	for _, cm := range s.repo(owner, repo).comments {
		if cm.Issue == issue {
			out = append(out, cm.Comment)
		}
	}
	return out
}

// Reactions are the contents of the reactions on a comment ("eyes", "+1"),
// in the order they were made.
func (s *Server) Reactions(owner, repo string, commentID int64) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	if cm := s.repo(owner, repo).find(commentID); cm != nil {
		for _, re := range cm.reactions {
			out = append(out, re.content)
		}
	}
	return out
}

func (rs *repoState) find(id int64) *comment {
	for _, cm := range rs.comments {
		if cm.ID == id {
			return cm
		}
	}
	return nil
}

func (rs *repoState) remove(id int64) bool {
	n := len(rs.comments)
	rs.comments = slices.DeleteFunc(rs.comments, func(cm *comment) bool { return cm.ID == id })
	return len(rs.comments) < n
}

var reactionContents = []string{"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"}

func (s commentsAPI) json(base string, rs *repoState, cm *comment) *github.IssueComment {
	full := rs.owner + "/" + rs.name
	url := fmt.Sprintf("%s/repos/%s/issues/comments/%d", base, full, cm.ID)
	n := map[string]int{}
	for _, re := range cm.reactions {
		n[re.content]++
	}
	author := s.user(cm.User, "").json(base)
	author.Type = ptr(cm.UserType) // as recorded, so a test can stage an impostor
	return &github.IssueComment{
		URL:               ptr(url),
		HTMLURL:           ptr(fmt.Sprintf("https://github.com/%s/pull/%d#issuecomment-%d", full, cm.Issue, cm.ID)),
		IssueURL:          ptr(fmt.Sprintf("%s/repos/%s/issues/%d", base, full, cm.Issue)),
		ID:                ptr(cm.ID),
		NodeID:            ptr(fmt.Sprintf("IC_%d", cm.ID)),
		User:              author,
		CreatedAt:         stamp(cm.CreatedAt),
		UpdatedAt:         stamp(cm.UpdatedAt),
		AuthorAssociation: ptr(rs.association(cm.User)),
		Body:              ptr(cm.Body),
		Reactions: &github.Reactions{URL: ptr(url + "/reactions"), TotalCount: ptr(len(cm.reactions)),
			PlusOne: ptr(n["+1"]), MinusOne: ptr(n["-1"]), Laugh: ptr(n["laugh"]), Hooray: ptr(n["hooray"]),
			Confused: ptr(n["confused"]), Heart: ptr(n["heart"]), Rocket: ptr(n["rocket"]), Eyes: ptr(n["eyes"])},
	}
}

func (rs *repoState) association(login string) string {
	if strings.EqualFold(login, rs.owner) {
		return "OWNER"
	}
	switch rs.perms[strings.ToLower(login)] {
	case "admin", "maintain", "write", "triage":
		return "COLLABORATOR"
	}
	return "NONE"
}

// list is GET /repos/{owner}/{repo}/issues/{number}/comments, with
// since (updated at or after), per_page (default 30, at most 100) and page.
func (s commentsAPI) list(c *call) {
	rs, issue, ok := s.issue(c)
	if !ok {
		return
	}
	q := c.r.URL.Query()
	var since time.Time
	if v := q.Get("since"); v != "" {
		since, _ = time.Parse(time.RFC3339, v) // GitHub ignores a since it cannot read
	}
	all := []*github.IssueComment{}
	for _, cm := range rs.comments {
		if cm.Issue == issue && !cm.UpdatedAt.Before(since) {
			all = append(all, s.json(c.base(), rs, cm))
		}
	}
	paged(c, all)
}

// paged answers with the page of all that the request asks for (per_page
// default 30, at most 100), with GitHub's Link header.
func paged[T any](c *call, all []T) {
	q := c.r.URL.Query()
	perPage := clamp(q.Get("per_page"), 30, 100)
	page := clamp(q.Get("page"), 1, 1<<30)
	last := max(1, (len(all)+perPage-1)/perPage)
	if link := links(c, page, last); link != "" {
		c.w.Header().Set("Link", link)
	}
	from := min(len(all), (page-1)*perPage)
	c.json(http.StatusOK, all[from:min(len(all), from+perPage)])
}

// clamp reads a positive number, falling back to def, capped at most.
func clamp(v string, def, most int) int {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return def
	}
	return min(n, most)
}

// links is the Link header GitHub sends for page of last: prev, next, last
// and first, each the request's URL with page replaced.
func links(c *call, page, last int) string {
	if last <= 1 && page <= 1 {
		return ""
	}
	link := func(p int, rel string) string {
		q := c.r.URL.Query()
		q.Set("page", strconv.Itoa(p))
		return fmt.Sprintf(`<%s%s?%s>; rel="%s"`, c.base(), c.r.URL.Path, q.Encode(), rel)
	}
	var parts []string
	if page > 1 {
		parts = append(parts, link(min(page-1, last), "prev"))
	}
	if page < last {
		parts = append(parts, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		parts = append(parts, link(1, "first"))
	}
	return strings.Join(parts, ", ")
}

// body reads {"body": ...} and checks it as GitHub does, answering 422 when
// it is missing or too long.
func (c *call) body() (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if !c.decode(&in) {
		return "", false
	}
	switch {
	case in.Body == nil || strings.TrimSpace(*in.Body) == "":
		invalid(c.w, "IssueComment", "missing_field", "body", "")
		return "", false
	case utf8.RuneCountInString(*in.Body) > BodyLimit:
		invalid(c.w, "IssueComment", "custom", "body", fmt.Sprintf("body is too long (maximum is %d characters)", BodyLimit))
		return "", false
	}
	return *in.Body, true
}

// create is POST /repos/{owner}/{repo}/issues/{number}/comments.
func (s commentsAPI) create(c *call) {
	rs, issue, ok := s.issue(c)
	if !ok {
		return
	}
	body, ok := c.body()
	if !ok {
		return
	}
	cm := s.addComment(rs, issue, s.user(c.login, ""), "", body)
	out := s.json(c.base(), rs, cm)
	c.w.Header().Set("Location", out.GetURL())
	c.json(http.StatusCreated, out)
}

// issue is the repository and the issue (or pull request) named in the
// path, or a 404 answered.
func (s commentsAPI) issue(c *call) (*repoState, int, bool) {
	rs, ok := s.lookup(c)
	if !ok {
		return nil, 0, false
	}
	issue := int(c.intParam("number"))
	if !rs.issues[issue] {
		notFound(c.w)
		return nil, 0, false
	}
	return rs, issue, true
}

// comment is the comment named in the path, or a 404 answered.
func (s commentsAPI) comment(c *call) (*repoState, *comment, bool) {
	rs, ok := s.lookup(c)
	if !ok {
		return nil, nil, false
	}
	cm := rs.find(c.intParam("id"))
	if cm == nil {
		notFound(c.w)
		return nil, nil, false
	}
	return rs, cm, true
}

// get is GET /repos/{owner}/{repo}/issues/comments/{id}.
func (s commentsAPI) get(c *call) {
	if rs, cm, ok := s.comment(c); ok {
		c.json(http.StatusOK, s.json(c.base(), rs, cm))
	}
}

// edit is PATCH /repos/{owner}/{repo}/issues/comments/{id}.
func (s commentsAPI) edit(c *call) {
	rs, cm, ok := s.comment(c)
	if !ok {
		return
	}
	body, ok := c.body()
	if !ok {
		return
	}
	cm.Body, cm.UpdatedAt = body, s.now()
	c.json(http.StatusOK, s.json(c.base(), rs, cm))
}

// delete is DELETE /repos/{owner}/{repo}/issues/comments/{id}.
func (s commentsAPI) delete(c *call) {
	if rs, cm, ok := s.comment(c); ok {
		rs.remove(cm.ID)
		c.w.WriteHeader(http.StatusNoContent)
	}
}

// reactionJSON adds what go-github does not read to its type.
type reactionJSON struct {
	*github.Reaction
	CreatedAt *github.Timestamp `json:"created_at"`
}

// react is POST /repos/{owner}/{repo}/issues/comments/{id}/reactions:
// 201 for a new reaction, 200 with the existing one when this user already
// reacted so.
func (s commentsAPI) react(c *call) {
	_, cm, ok := s.comment(c)
	if !ok {
		return
	}
	var in struct {
		Content string `json:"content"`
	}
	if !c.decode(&in) {
		return
	}
	if !slices.Contains(reactionContents, in.Content) {
		invalid(c.w, "Reaction", "custom", "content", "content is not included in the list")
		return
	}
	u := s.user(c.login, "")
	out := func(status int, re reaction) {
		c.json(status, reactionJSON{&github.Reaction{ID: ptr(re.id), NodeID: ptr(fmt.Sprintf("REA_%d", re.id)),
			User: u.json(c.base()), Content: ptr(re.content)}, stamp(re.createdAt)})
	}
	for _, re := range cm.reactions {
		if strings.EqualFold(re.user, u.login) && re.content == in.Content {
			out(http.StatusOK, re)
			return
		}
	}
	re := reaction{id: s.id(), user: u.login, content: in.Content, createdAt: s.now()}
	cm.reactions = append(cm.reactions, re)
	out(http.StatusCreated, re)
}
