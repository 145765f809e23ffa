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
// Every method names the repository and means what the client's method
// of that name documents. What it reads
// (the pull request, the base's loop config, comments, permissions) is
// data to the action, never instructions: the decisions on it are the
// action's, and an implementation adds none.
type githubAPI interface {
	// What it reads.
	PullRequest(ctx context.Context, owner, repo string, n int) (github.PR, error)
	FileAt(ctx context.Context, owner, repo, path, ref string) ([]byte, error)
	Permission(ctx context.Context, owner, repo, user string) (string, error)
	Comments(ctx context.Context, owner, repo string, n int) ([]github.Comment, error) // oldest (lowest id) first
	LatestStatus(ctx context.Context, owner, repo, sha, statusContext string) (github.Status, error)

	// What it writes.
	Comment(ctx context.Context, owner, repo string, n int, body string) (int64, error)
	React(ctx context.Context, owner, repo string, commentID int64, content string) error
	UpsertSticky(ctx context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error)
	SetStatus(ctx context.Context, owner, repo, sha, state, statusContext, description, targetURL string) error
	OpenPullFor(ctx context.Context, owner, repo, head string) (int, error)
	CreatePull(ctx context.Context, owner, repo, head, base, title, body string) (int, error)
	EditPull(ctx context.Context, owner, repo string, n int, title, body string) error
}

var _ githubAPI = (*github.Client)(nil)
