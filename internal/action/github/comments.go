package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	gh "github.com/google/go-github/v62/github"
)

// Comment is an issue or pull request comment.
type Comment struct {
	ID                int64
	Body              string
	Author            string // login
	AuthorType        string // "User", "Bot", …
	AuthorAssociation string // "OWNER", "MEMBER", "COLLABORATOR", "NONE", …
	CreatedAt         time.Time
	UpdatedAt         time.Time
	URL               string // the comment on github.com
}

func fromGitHub(c *gh.IssueComment) Comment {
	return Comment{
		ID:                c.GetID(),
		Body:              c.GetBody(),
		Author:            c.GetUser().GetLogin(),
		AuthorType:        c.GetUser().GetType(),
		AuthorAssociation: c.GetAuthorAssociation(),
		CreatedAt:         c.GetCreatedAt().Time,
		UpdatedAt:         c.GetUpdatedAt().Time,
		URL:               c.GetHTMLURL(),
	}
}

// maxPages stops a listing that never ends (100 per page: 100,000 comments).
const maxPages = 1000

// comments lists every comment on issue or pull request n, 100 a page,
// in id order (the order they were made).
func (c *Client) comments(ctx context.Context, owner, repo string, n int) ([]*gh.IssueComment, error) {
	opts := &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	var all []*gh.IssueComment
	for range maxPages {
		page, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, n, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if resp.NextPage <= max(opts.Page, 1) {
			break
		}
		opts.Page = resp.NextPage
	}
	slices.SortStableFunc(all, func(a, b *gh.IssueComment) int { return cmp.Compare(a.GetID(), b.GetID()) })
	return all, nil
}

// Edited reports whether the comment was changed after it was written:
// GitHub moves updated_at when a comment is edited (by its author or by
// anyone allowed to edit it) and when it is hidden. GitHub sometimes stamps
// a new comment's updated_at a second after its created_at; such a comment
// counts as edited too — the safe side for a command.
func (c Comment) Edited() bool { return c.UpdatedAt.After(c.CreatedAt) }

// Comments is every comment on issue or pull request n, oldest first.
func (c *Client) Comments(ctx context.Context, owner, repo string, n int) ([]Comment, error) {
	all, err := c.comments(ctx, owner, repo, n)
	if err != nil {
		return nil, fail(fmt.Sprintf("list comments on %s/%s#%d", owner, repo, n), err)
	}
	out := make([]Comment, len(all))
	for i, cm := range all {
		out[i] = fromGitHub(cm)
	}
	return out, nil
}

// Comment posts body on issue or pull request n and returns the new id.
// A body over GitHub's limit fails with ErrBodyTooLong.
func (c *Client) Comment(ctx context.Context, owner, repo string, n int, body string) (int64, error) {
	id, err := c.create(ctx, owner, repo, n, body)
	if err != nil {
		return 0, fail(fmt.Sprintf("comment on %s/%s#%d", owner, repo, n), err)
	}
	return id, nil
}

func (c *Client) create(ctx context.Context, owner, repo string, n int, body string) (int64, error) {
	cm, _, err := c.gh.Issues.CreateComment(ctx, owner, repo, n, &gh.IssueComment{Body: gh.String(body)})
	return cm.GetID(), err
}

// React adds a reaction ("eyes", "+1", "-1", …) to a comment; reacting
// twice the same way is harmless.
func (c *Client) React(ctx context.Context, owner, repo string, commentID int64, content string) error {
	if _, _, err := c.gh.Reactions.CreateIssueCommentReaction(ctx, owner, repo, commentID, content); err != nil {
		return fail(fmt.Sprintf("react %q to comment %d in %s/%s", content, commentID, owner, repo), err)
	}
	return nil
}

// UpsertSticky keeps one comment on n that starts with marker and was
// written by botLogin, and makes its body body (marker is put first if body
// does not start with it). It edits the oldest such comment, deletes the
// others, and creates one when there is none or the ones found vanish
// before the edit. Comments with the marker by anyone else are left alone:
// a marker proves nothing, the author does. A login ending in "[bot]" must
// also be of type Bot.
//
// It returns the sticky comment's id. If only deleting duplicates failed,
// the id is still good and the error names what is left.
func (c *Client) UpsertSticky(ctx context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error) {
	op := fmt.Sprintf("update sticky comment on %s/%s#%d", owner, repo, n)
	if strings.TrimSpace(marker) == "" || botLogin == "" {
		return 0, fmt.Errorf("%s: a marker and the bot's login are required", op)
	}
	if !strings.HasPrefix(body, marker) {
		body = marker + "\n" + body
	}
	all, err := c.comments(ctx, owner, repo, n)
	if err != nil {
		return 0, fail(op, err)
	}
	var mine []*gh.IssueComment
	for _, cm := range all {
		if sticky(cm, marker, botLogin) {
			mine = append(mine, cm)
		}
	}
	id, rest, err := c.editOldest(ctx, owner, repo, mine, body)
	if err != nil {
		return 0, fail(op, err)
	}
	if id == 0 {
		if id, err = c.create(ctx, owner, repo, n, body); err != nil {
			return 0, fail(op, err)
		}
	}
	if err := c.deleteAll(ctx, owner, repo, rest); err != nil {
		return id, fail(op, err)
	}
	return id, nil
}

func sticky(cm *gh.IssueComment, marker, botLogin string) bool {
	return strings.HasPrefix(cm.GetBody(), marker) && fromGitHub(cm).WrittenBy(botLogin)
}

// WrittenBy reports whether login wrote c: its author, and for a "[bot]"
// login of type Bot too, so that no user can pass as the bot.
func (c Comment) WrittenBy(login string) bool {
	if !strings.EqualFold(c.Author, login) {
		return false
	}
	return !strings.HasSuffix(strings.ToLower(login), "[bot]") || c.AuthorType == "Bot"
}

// editOldest puts body in the oldest of mine still there, skipping the edit
// when it already has it, and returns its id and the comments after it. An
// id of 0 means none was left.
func (c *Client) editOldest(ctx context.Context, owner, repo string, mine []*gh.IssueComment, body string) (int64, []*gh.IssueComment, error) {
	for i, cm := range mine {
		if cm.GetBody() == body {
			return cm.GetID(), mine[i+1:], nil
		}
		_, _, err := c.gh.Issues.EditComment(ctx, owner, repo, cm.GetID(), &gh.IssueComment{Body: gh.String(body)})
		switch {
		case err == nil:
			return cm.GetID(), mine[i+1:], nil
		case status(err) != http.StatusNotFound:
			return 0, nil, fmt.Errorf("edit comment %d: %w", cm.GetID(), err)
		}
	}
	return 0, nil, nil
}

// deleteAll deletes comments; ones already gone are fine.
func (c *Client) deleteAll(ctx context.Context, owner, repo string, comments []*gh.IssueComment) error {
	var errs []error
	for _, cm := range comments {
		_, err := c.gh.Issues.DeleteComment(ctx, owner, repo, cm.GetID())
		if err != nil && status(err) != http.StatusNotFound {
			errs = append(errs, fmt.Errorf("delete duplicate comment %d: %w", cm.GetID(), err))
		}
	}
	return errors.Join(errs...)
}
