package action

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/loop-action/loop-action/internal/action/github"
)

// memGitHub is one repository on GitHub, in memory, for the decision
// tests: what the action reads comes from maps a test fills, and what it
// writes is recorded. It answers as *github.Client does (comments oldest
// first, "none" for a stranger, an error for what is not there, one
// reaction of a kind per comment) and decides nothing. The token writes as
// botLogin, of type Bot. TestMemGitHubAnswersAsTheClient holds it to the
// client over the HTTP fake.
type memGitHub struct {
	mu          sync.Mutex
	owner, repo string
	bot         string
	clock       time.Time // moves on a second at every stamp
	lastID      int64
	comments    map[int][]github.Comment // by issue or pull request number
	perms       map[string]string        // by lower-case login
	pulls       map[int]github.PR
	files       map[string][]byte  // "ref:path"
	reactions   map[int64][]string // by comment id, in the order made
	statuses    []memStatus        // in the order set
	failing     map[string]error   // by method name: every call fails
	calls       []string           // "Method arg", in order
}

// memStatus is a commit status as set.
type memStatus struct {
	SHA, State, Context, Description, TargetURL string
	Creator                                     string // who set it: the bot, unless a test says otherwise
}

func newMemGitHub(owner, repo, botLogin string) *memGitHub {
	return &memGitHub{
		owner: owner, repo: repo, bot: botLogin, clock: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), lastID: 1000,
		comments: map[int][]github.Comment{}, perms: map[string]string{}, pulls: map[int]github.PR{},
		files: map[string][]byte{}, reactions: map[int64][]string{}, failing: map[string]error{},
	}
}

// enter starts a call: it is recorded, then refused if the repository is
// another or the method is made to fail. Callers hold m.mu.
func (m *memGitHub) enter(method, owner, repo string, arg any) error {
	m.calls = append(m.calls, fmt.Sprint(method, " ", arg))
	if !strings.EqualFold(owner, m.owner) || !strings.EqualFold(repo, m.repo) {
		return fmt.Errorf("%s: repository %s/%s: not found", method, owner, repo)
	}
	return m.failing[method]
}

func (m *memGitHub) stamp() time.Time {
	m.clock = m.clock.Add(time.Second)
	return m.clock
}

// Setting the scene.

// add writes a comment on pull request n as author, of type typ ("User",
// "Bot"), and returns its id; ids grow with time.
func (m *memGitHub) add(n int, author, typ, body string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.post(n, author, typ, body)
}

func (m *memGitHub) post(n int, author, typ, body string) int64 {
	m.lastID++
	at := m.stamp()
	m.comments[n] = append(m.comments[n], github.Comment{ID: m.lastID, Body: body, Author: author, AuthorType: typ, CreatedAt: at, UpdatedAt: at})
	return m.lastID
}

// edit changes a comment's body as an edit on GitHub does, moving its
// updated_at on.
func (m *memGitHub) edit(id int64, body string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.find(id)
	if c == nil {
		panic(fmt.Sprintf("memGitHub: no comment %d", id))
	}
	c.Body, c.UpdatedAt = body, m.stamp()
}

func (m *memGitHub) find(id int64) *github.Comment {
	for n := range m.comments {
		for i := range m.comments[n] {
			if m.comments[n][i].ID == id {
				return &m.comments[n][i]
			}
		}
	}
	return nil
}

// remove deletes a comment.
func (m *memGitHub) remove(id int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for n, cs := range m.comments {
		m.comments[n] = slices.DeleteFunc(cs, func(c github.Comment) bool { return c.ID == id })
	}
}

// permit gives login a permission as the API reports it: "admin", "write",
// "read" or "none".
func (m *memGitHub) permit(login, perm string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.perms[strings.ToLower(login)] = perm
}

// fail makes every call of method fail with err (nil: succeed again).
func (m *memGitHub) fail(method string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failing[method] = err
}

// Reading back.

// list is every comment on n, oldest first.
func (m *memGitHub) list(n int) []github.Comment {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.comments[n])
}

// reactionsTo are the reactions to comment id, sorted.
func (m *memGitHub) reactionsTo(id int64) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Sorted(slices.Values(m.reactions[id]))
}

// setStatuses are the statuses set, oldest first.
func (m *memGitHub) setStatuses() []memStatus {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.statuses)
}

// made are the calls made, oldest first.
func (m *memGitHub) made() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.calls)
}

// The API, as githubAPI declares it.

var _ githubAPI = (*memGitHub)(nil)

func (m *memGitHub) PullRequest(_ context.Context, owner, repo string, n int) (github.PR, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("PullRequest", owner, repo, n); err != nil {
		return github.PR{}, err
	}
	pr, ok := m.pulls[n]
	if !ok {
		return github.PR{}, fmt.Errorf("get pull request %s/%s#%d: not found", owner, repo, n)
	}
	return pr, nil
}

func (m *memGitHub) FileAt(_ context.Context, owner, repo, path, ref string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("FileAt", owner, repo, ref+":"+path); err != nil {
		return nil, err
	}
	b, ok := m.files[ref+":"+path]
	if !ok {
		return nil, fmt.Errorf("read %s at %s of %s/%s: not found", path, ref, owner, repo)
	}
	return slices.Clone(b), nil
}

func (m *memGitHub) Permission(_ context.Context, owner, repo, user string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("Permission", owner, repo, user); err != nil {
		return "", err
	}
	if perm, ok := m.perms[strings.ToLower(user)]; ok {
		return perm, nil
	}
	return "none", nil
}

func (m *memGitHub) Comments(_ context.Context, owner, repo string, n int) ([]github.Comment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("Comments", owner, repo, n); err != nil {
		return nil, err
	}
	return slices.Clone(m.comments[n]), nil
}

func (m *memGitHub) Comment(_ context.Context, owner, repo string, n int, body string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("Comment", owner, repo, n); err != nil {
		return 0, err
	}
	return m.post(n, m.bot, "Bot", body), nil
}

// reactionKinds are the reactions GitHub takes.
var reactionKinds = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (m *memGitHub) React(_ context.Context, owner, repo string, id int64, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("React", owner, repo, fmt.Sprint(id, " ", content)); err != nil {
		return err
	}
	switch {
	case m.find(id) == nil:
		return fmt.Errorf("react %q to comment %d: not found", content, id)
	case !slices.Contains(reactionKinds, content):
		return fmt.Errorf("react %q to comment %d: not a reaction", content, id)
	case !slices.Contains(m.reactions[id], content):
		m.reactions[id] = append(m.reactions[id], content)
	}
	return nil
}

// UpsertSticky edits the oldest comment on n by botLogin (of type Bot
// when the login ends in "[bot]") that starts with marker, deletes the
// others, or posts one.
func (m *memGitHub) UpsertSticky(_ context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("UpsertSticky", owner, repo, n); err != nil {
		return 0, err
	}
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	mine := func(c github.Comment) bool {
		return strings.HasPrefix(c.Body, marker) && strings.EqualFold(c.Author, botLogin) &&
			(!strings.HasSuffix(strings.ToLower(botLogin), "[bot]") || c.AuthorType == "Bot")
	}
	var id int64
	var kept []github.Comment
	for _, c := range m.comments[n] {
		switch {
		case !mine(c):
		case id != 0:
			continue // a later one of ours: deleted
		case c.Body != body:
			id, c.Body, c.UpdatedAt = c.ID, body, m.stamp()
		default:
			id = c.ID
		}
		kept = append(kept, c)
	}
	m.comments[n] = kept
	if id == 0 {
		id = m.post(n, m.bot, "Bot", body)
	}
	return id, nil
}

var statusStates = []string{"pending", "success", "failure", "error"}

func (m *memGitHub) SetStatus(_ context.Context, owner, repo, sha, state, statusContext, description, targetURL string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("SetStatus", owner, repo, sha); err != nil {
		return err
	}
	if !slices.Contains(statusStates, state) {
		return fmt.Errorf("set status %q on %s: state %q is not one GitHub takes", statusContext, sha, state)
	}
	m.statuses = append(m.statuses, memStatus{SHA: sha, State: state, Context: statusContext, Description: description, TargetURL: targetURL, Creator: m.bot})
	return nil
}

func (m *memGitHub) LatestStatus(_ context.Context, owner, repo, sha, statusContext string) (github.Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("LatestStatus", owner, repo, sha); err != nil {
		return github.Status{}, err
	}
	for i := len(m.statuses) - 1; i >= 0; i-- {
		if st := m.statuses[i]; st.SHA == sha && st.Context == statusContext {
			return github.Status{State: st.State, Context: st.Context, Description: st.Description, Creator: st.Creator}, nil
		}
	}
	return github.Status{}, nil
}

// setStatusAs sets a status as login would, through the API with a token
// of their own.
func (m *memGitHub) setStatusAs(login, sha, state, statusContext, description string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.statuses = append(m.statuses, memStatus{SHA: sha, State: state, Context: statusContext, Description: description, Creator: login})
}

func (m *memGitHub) OpenPullFor(_ context.Context, owner, repo, head string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("OpenPullFor", owner, repo, head); err != nil {
		return 0, err
	}
	n := 0
	for _, pr := range m.pulls {
		if pr.State == "open" && pr.HeadRef == head && strings.EqualFold(pr.HeadRepo, owner+"/"+repo) && (n == 0 || pr.Number < n) {
			n = pr.Number
		}
	}
	return n, nil
}

func (m *memGitHub) CreatePull(_ context.Context, owner, repo, head, base, title, body string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("CreatePull", owner, repo, head+" → "+base); err != nil {
		return 0, err
	}
	n := 1
	for k, pr := range m.pulls {
		n = max(n, k+1)
		if pr.State == "open" && pr.HeadRef == head && pr.BaseRef == base && strings.EqualFold(pr.HeadRepo, owner+"/"+repo) {
			return 0, fmt.Errorf("open a pull request from %s into %s of %s/%s: a pull request already exists", head, base, owner, repo)
		}
	}
	if len([]rune(body)) > CommentLimit {
		return 0, fmt.Errorf("open a pull request from %s into %s of %s/%s: %w", head, base, owner, repo, github.ErrBodyTooLong)
	}
	full := m.owner + "/" + m.repo
	m.pulls[n] = github.PR{Number: n, Title: title, Body: body, Author: m.bot, State: "open", HeadRef: head, HeadRepo: full, BaseRef: base, BaseRepo: full}
	return n, nil
}

func (m *memGitHub) EditPull(_ context.Context, owner, repo string, n int, title, body string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.enter("EditPull", owner, repo, n); err != nil {
		return err
	}
	pr, ok := m.pulls[n]
	switch {
	case !ok:
		return fmt.Errorf("edit pull request %s/%s#%d: not found", owner, repo, n)
	case len([]rune(body)) > CommentLimit:
		return fmt.Errorf("edit pull request %s/%s#%d: %w", owner, repo, n, github.ErrBodyTooLong)
	}
	pr.Title, pr.Body = title, body
	m.pulls[n] = pr
	return nil
}
