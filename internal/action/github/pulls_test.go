package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// TestPulls: the client opens a pull request, finds it again by its head
// (the fork's pull request from a branch of the same name is not it), and
// edits it; a body over the limit is ErrBodyTooLong.
func TestPulls(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	ctx := context.Background()
	srv.AddPull("o", "r", githubfake.Pull{Number: 5, HeadRef: "loop/demo", HeadRepo: "mallory/r", HeadSHA: "f0", BaseSHA: "b0"})
	if n, err := c.OpenPullFor(ctx, "o", "r", "loop/demo"); err != nil || n != 0 {
		t.Fatalf("before: pull %d, %v; want none", n, err)
	}
	n, err := c.CreatePull(ctx, "o", "r", "loop/demo", "main", "loop demo", "report 1")
	if err != nil || n != 6 {
		t.Fatalf("CreatePull: %d, %v", n, err)
	}
	if got, err := c.OpenPullFor(ctx, "o", "r", "loop/demo"); err != nil || got != n {
		t.Errorf("OpenPullFor: %d, %v; want %d", got, err, n)
	}
	if err := c.EditPull(ctx, "o", "r", n, "loop demo", "report 2"); err != nil {
		t.Fatal(err)
	}
	if body := srv.Pulls("o", "r")[2].Body; body != "report 2" {
		t.Errorf("body after the edit: %q", body)
	}
	err = c.EditPull(ctx, "o", "r", n, "loop demo", strings.Repeat("x", 65537))
	if !errors.Is(err, github.ErrBodyTooLong) {
		t.Errorf("an over-long body: %v, want ErrBodyTooLong", err)
	}
	if _, err := c.CreatePull(ctx, "o", "r", "loop/demo", "main", "again", "x"); err == nil || !strings.Contains(err.Error(), "open a pull request from loop/demo into main of o/r") {
		t.Errorf("a second pull request for the head: %v", err)
	}
	noToken(t, err)
}
