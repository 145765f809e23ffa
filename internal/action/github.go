package action

import (
	"context"

	"github.com/loop-action/loop-action/internal/action/github"
)

// githubAPI is all the action asks of GitHub's REST API: the seam between
// its decisions and GitHub. *github.Client implements it over HTTP; the
// decision tests hold an in-memory stand-in, so that who may command the
// loop, which comments count and what a run reports are tested without a
// server, while the client's own tests hold it to GitHub's wire format.
//
// Every method names the repository, as the client's do. What it reads
// (the pull request, the base's loop config, comments, permissions) is
// data to the action, never instructions: the decisions on it are the
// action's, and an implementation adds none.
type githubAPI interface {
	// PullRequest reads pull request n.
	PullRequest(ctx context.Context, owner, repo string, n int) (github.PR, error)
	// FileAt reads the file at path as of ref (a branch or a commit sha).
	FileAt(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	// Permission is user's permission: "admin", "write" (maintain too),
	// "read" (triage too) or "none" (no collaborator at all).
	Permission(ctx context.Context, owner, repo, user string) (string, error)
	// Comments is every comment on issue or pull request n, oldest (lowest
	// id) first.
	Comments(ctx context.Context, owner, repo string, n int) ([]github.Comment, error)

	// Comment posts body on n as the token's identity and returns its id.
	Comment(ctx context.Context, owner, repo string, n int, body string) (int64, error)
	// React adds a reaction ("eyes", "+1", "-1", …) to a comment.
	React(ctx context.Context, owner, repo string, commentID int64, content string) error
	// UpsertSticky keeps one comment on n by botLogin that starts with
	// marker, with body; see github.Client.UpsertSticky.
	UpsertSticky(ctx context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error)
	// SetStatus sets the commit status statusContext on sha to state.
	SetStatus(ctx context.Context, owner, repo, sha, state, statusContext, description, targetURL string) error
	// LatestStatus is the newest status statusContext on sha, with who
	// set it; the zero Status when there is none.
	LatestStatus(ctx context.Context, owner, repo, sha, statusContext string) (github.Status, error)

	// OpenPullFor is the oldest open pull request from the repository's
	// own branch head, or 0.
	OpenPullFor(ctx context.Context, owner, repo, head string) (int, error)
	// CreatePull opens a pull request from branch head into base.
	CreatePull(ctx context.Context, owner, repo, head, base, title, body string) (int, error)
	// EditPull replaces pull request n's title and body.
	EditPull(ctx context.Context, owner, repo string, n int, title, body string) error
}

var _ githubAPI = (*github.Client)(nil)
