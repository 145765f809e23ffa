package github

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/loop-action/loop-action/internal/phrase"
)

// PR is what the action needs to know about a pull request.
type PR struct {
	Number   int
	Title    string
	Body     string
	Author   string
	State    string // "open" or "closed"
	HeadSHA  string
	HeadRef  string
	HeadRepo string // "owner/repo" of the head; "" when that fork was deleted
	BaseRef  string
	BaseSHA  string
	BaseRepo string
	// Fork is true when the head lives in another repository than the base
	// (or in one since deleted): such a PR runs with a read-only token and
	// no secrets, and its code is never to be trusted.
	Fork bool
}

// PullRequest reads pull request n.
func (c *Client) PullRequest(ctx context.Context, owner, repo string, n int) (PR, error) {
	p, _, err := c.gh.PullRequests.Get(ctx, owner, repo, n)
	if err != nil {
		return PR{}, fail(fmt.Sprintf("get pull request %s/%s#%d", owner, repo, n), err)
	}
	pr := PR{
		Number:   p.GetNumber(),
		Title:    p.GetTitle(),
		Body:     p.GetBody(),
		Author:   p.GetUser().GetLogin(),
		State:    p.GetState(),
		HeadSHA:  p.GetHead().GetSHA(),
		HeadRef:  p.GetHead().GetRef(),
		HeadRepo: p.GetHead().GetRepo().GetFullName(),
		BaseRef:  p.GetBase().GetRef(),
		BaseSHA:  p.GetBase().GetSHA(),
		BaseRepo: p.GetBase().GetRepo().GetFullName(),
	}
	pr.Fork = pr.HeadRepo == "" || !strings.EqualFold(pr.HeadRepo, pr.BaseRepo)
	return pr, nil
}

// Permission is user's permission on owner/repo as GitHub's permission
// endpoint reports it: "admin", "write" (which includes maintain), "read"
// (which includes triage) or "none". Someone who is no collaborator at all
// (404) has "none"; so has any level this client does not know.
func (c *Client) Permission(ctx context.Context, owner, repo, user string) (string, error) {
	p, _, err := c.gh.Repositories.GetPermissionLevel(ctx, owner, repo, user)
	if status(err) == http.StatusNotFound {
		return "none", nil
	}
	if err != nil {
		return "", fail(fmt.Sprintf("get permission of %q on %s/%s", user, owner, repo), err)
	}
	switch level := p.GetPermission(); level {
	case "admin", "write", "read":
		return level, nil
	case "maintain":
		return "write", nil
	case "triage":
		return "read", nil
	}
	return "none", nil
}

// DescriptionLimit is the most characters GitHub takes in a status description.
const DescriptionLimit = 140

// SetStatus sets the commit status named statusContext on sha to state ("pending",
// "success", "failure" or "error"). A description longer than GitHub takes
// is one line (phrase.Line), cut on a character boundary and ending "…".
func (c *Client) SetStatus(ctx context.Context, owner, repo, sha, state, statusContext, description, targetURL string) error {
	st := &gh.RepoStatus{State: gh.String(state), Context: gh.String(statusContext)}
	if description != "" {
		st.Description = gh.String(phrase.Line(description, DescriptionLimit))
	}
	if targetURL != "" {
		st.TargetURL = gh.String(targetURL)
	}
	if _, _, err := c.gh.Repositories.CreateStatus(ctx, owner, repo, sha, st); err != nil {
		return fail(fmt.Sprintf("set status %q on %s/%s@%s", statusContext, owner, repo, sha), err)
	}
	return nil
}

// Status is a commit status as GitHub lists it.
type Status struct {
	State       string // "pending", "success", "failure" or "error"
	Context     string
	Description string
	Creator     string // the login that set it
}

// maxStatusPages bounds a listing of statuses (100 per page; GitHub keeps
// at most 1,000 per commit and context).
const maxStatusPages = 20

// LatestStatus is the newest status named statusContext on sha, with who
// set it; the zero Status when there is none.
func (c *Client) LatestStatus(ctx context.Context, owner, repo, sha, statusContext string) (Status, error) {
	opts := &gh.ListOptions{PerPage: 100}
	for range maxStatusPages {
		page, resp, err := c.gh.Repositories.ListStatuses(ctx, owner, repo, sha, opts)
		if err != nil {
			return Status{}, fail(fmt.Sprintf("list the statuses of %s/%s@%s", owner, repo, sha), err)
		}
		for _, st := range page { // newest first
			if st.GetContext() == statusContext {
				return Status{State: st.GetState(), Context: st.GetContext(), Description: st.GetDescription(), Creator: st.GetCreator().GetLogin()}, nil
			}
		}
		if resp.NextPage <= max(opts.Page, 1) {
			break
		}
		opts.Page = resp.NextPage
	}
	return Status{}, nil
}

// FileAt reads the file at path as of ref (a branch or a commit sha): the
// action reads a pull request's loop config from its base this way, never
// from the head.
func (c *Client) FileAt(ctx context.Context, owner, repo, path, ref string) ([]byte, error) {
	fc, _, _, err := c.gh.Repositories.GetContents(ctx, owner, repo, path, &gh.RepositoryContentGetOptions{Ref: ref})
	if err != nil {
		return nil, fail(fmt.Sprintf("read %s at %s of %s/%s", path, ref, owner, repo), err)
	}
	if fc == nil {
		return nil, fmt.Errorf("read %s at %s of %s/%s: not a file", path, ref, owner, repo)
	}
	s, err := fc.GetContent()
	if err != nil {
		return nil, fmt.Errorf("read %s at %s of %s/%s: %w", path, ref, owner, repo, err)
	}
	return []byte(s), nil
}
