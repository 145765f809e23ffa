package github

import (
	"context"
	"fmt"

	gh "github.com/google/go-github/v62/github"
)

// OpenPullFor is the number of the oldest open pull request whose head is
// the branch head of owner/repo itself (never a fork's), or 0 when there
// is none: the action updates that one rather than open another.
func (c *Client) OpenPullFor(ctx context.Context, owner, repo, head string) (int, error) {
	opts := &gh.PullRequestListOptions{State: "open", Head: owner + ":" + head, ListOptions: gh.ListOptions{PerPage: 100}}
	prs, _, err := c.gh.PullRequests.List(ctx, owner, repo, opts)
	if err != nil {
		return 0, fail(fmt.Sprintf("list the open pull requests from %s of %s/%s", head, owner, repo), err)
	}
	n := 0
	for _, p := range prs {
		if p.GetHead().GetRef() == head && (n == 0 || p.GetNumber() < n) {
			n = p.GetNumber()
		}
	}
	return n, nil
}

// CreatePull opens a pull request from the branch head into base, both of
// owner/repo, and returns its number.
func (c *Client) CreatePull(ctx context.Context, owner, repo, head, base, title, body string) (int, error) {
	p, _, err := c.gh.PullRequests.Create(ctx, owner, repo, &gh.NewPullRequest{
		Title: gh.String(title), Head: gh.String(head), Base: gh.String(base), Body: gh.String(body),
	})
	if err != nil {
		return 0, fail(fmt.Sprintf("open a pull request from %s into %s of %s/%s", head, base, owner, repo), err)
	}
	return p.GetNumber(), nil
}

// EditPull replaces the title and body of pull request n.
func (c *Client) EditPull(ctx context.Context, owner, repo string, n int, title, body string) error {
	_, _, err := c.gh.PullRequests.Edit(ctx, owner, repo, n, &gh.PullRequest{Title: gh.String(title), Body: gh.String(body)})
	if err != nil {
		return fail(fmt.Sprintf("edit pull request %s/%s#%d", owner, repo, n), err)
	}
	return nil
}
