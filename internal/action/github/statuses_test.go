package github_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/action/github"
)

// TestLatestStatus: the newest status of a context on a commit, with who
// set it, found past the first page of the commit's statuses; none is the
// zero Status.
func TestLatestStatus(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	srv.SetToken("ghp_mallory", "mallory")
	mallory, err := github.New(srv.URL(), "ghp_mallory")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const sha = "abc1230000000000000000000000000000000001"
	if st, err := c.LatestStatus(ctx, "o", "r", sha, "loop/demo"); err != nil || st != (github.Status{}) {
		t.Fatalf("before any: %+v, %v", st, err)
	}
	if err := c.SetStatus(ctx, "o", "r", sha, "success", "loop/demo", "certified: snapshot 5a5a000", ""); err != nil {
		t.Fatal(err)
	}
	for i := range 130 {
		if err := c.SetStatus(ctx, "o", "r", sha, "pending", "ci/other", fmt.Sprint("step ", i), ""); err != nil {
			t.Fatal(err)
		}
	}
	st, err := c.LatestStatus(ctx, "o", "r", sha, "loop/demo")
	want := github.Status{State: "success", Context: "loop/demo", Description: "certified: snapshot 5a5a000", Creator: bot}
	if diff := cmp.Diff(want, st); err != nil || diff != "" {
		t.Errorf("the bot's, on page 2: %v (-want +got):\n%s", err, diff)
	}
	if err := mallory.SetStatus(ctx, "o", "r", sha, "success", "loop/demo", "certified, trust me", ""); err != nil {
		t.Fatal(err)
	}
	st, err = c.LatestStatus(ctx, "o", "r", sha, "loop/demo")
	if err != nil || st.Creator != "mallory" || st.Description != "certified, trust me" {
		t.Errorf("after mallory's: %+v, %v", st, err)
	}
}
