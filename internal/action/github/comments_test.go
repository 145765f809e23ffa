package github_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/action/github"
	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

const marker = "<!-- loop-action:sticky loop=ci -->"

// chatter adds n comments by alice.
func chatter(srv *githubfake.Server, n int) {
	for i := range n {
		srv.AddComment("o", "r", 1, "alice", "User", fmt.Sprintf("comment %d", i))
	}
}

func bodies(cs []githubfake.Comment) map[int64]string {
	m := map[int64]string{}
	for _, c := range cs {
		m[c.ID] = c.Body
	}
	return m
}

func TestUpsertStickyOnPageThree(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	chatter(srv, 10)
	spoof := srv.AddComment("o", "r", 1, "mallory", "User", marker+"\nall green, merge me")
	chatter(srv, 200)
	sticky := srv.AddComment("o", "r", 1, bot, "Bot", marker+"\nold report")
	chatter(srv, 30)
	dup := srv.AddComment("o", "r", 1, bot, "Bot", marker+"\nduplicate")
	other := srv.AddComment("o", "r", 1, bot, "Bot", "<!-- loop-action:sticky loop=other -->\nanother loop")
	chatter(srv, 6) // 250 in all; the sticky is the 212th, on page 3

	id, err := c.UpsertSticky(context.Background(), "o", "r", 1, marker, marker+"\nnew report", bot)
	if err != nil {
		t.Fatal(err)
	}
	if id != sticky {
		t.Errorf("upserted %d, want the oldest sticky %d", id, sticky)
	}
	got := bodies(srv.Comments("o", "r", 1))
	if got[sticky] != marker+"\nnew report" {
		t.Errorf("sticky body %q", got[sticky])
	}
	if _, ok := got[dup]; ok {
		t.Errorf("duplicate %d not deleted", dup)
	}
	if got[spoof] != marker+"\nall green, merge me" || got[other] != "<!-- loop-action:sticky loop=other -->\nanother loop" {
		t.Errorf("touched comments that are not this loop's sticky: %q, %q", got[spoof], got[other])
	}
	if len(got) != 249 {
		t.Errorf("%d comments, want 249", len(got))
	}
	want := []string{
		"GET /repos/o/r/issues/1/comments?per_page=100",
		"GET /repos/o/r/issues/1/comments?page=2&per_page=100",
		"GET /repos/o/r/issues/1/comments?page=3&per_page=100",
		fmt.Sprintf("PATCH /repos/o/r/issues/comments/%d", sticky),
		fmt.Sprintf("DELETE /repos/o/r/issues/comments/%d", dup),
	}
	if diff := cmp.Diff(want, srv.Requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestUpsertStickyIgnoresSpoofs(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	human := srv.AddComment("o", "r", 1, "mallory", "User", marker+"\nfake")
	// An account named like the bot but not of type Bot cannot exist on
	// GitHub; the check is there all the same.
	lookalike := srv.AddComment("o", "r", 1, bot, "User", marker+"\nfake too")

	id, err := c.UpsertSticky(context.Background(), "o", "r", 1, marker, "report", bot)
	if err != nil {
		t.Fatal(err)
	}
	if id == human || id == lookalike {
		t.Fatalf("upserted a spoof, %d", id)
	}
	want := []githubfake.Comment{
		{ID: human, User: "mallory", UserType: "User", Body: marker + "\nfake"},
		{ID: lookalike, User: bot, UserType: "User", Body: marker + "\nfake too"},
		{ID: id, User: bot, UserType: "Bot", Body: marker + "\nreport"}, // marker put first
	}
	if diff := cmp.Diff(want, srv.Comments("o", "r", 1), ignoreTimes); diff != "" {
		t.Errorf("comments (-want +got):\n%s", diff)
	}
}

var ignoreTimes = cmp.FilterPath(func(p cmp.Path) bool {
	name := p.Last().String()
	return name == ".CreatedAt" || name == ".UpdatedAt" || name == ".Issue"
}, cmp.Ignore())

func TestUpsertStickyCreatesThenEdits(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	ctx := context.Background()
	first, err := c.UpsertSticky(ctx, "o", "r", 1, marker, marker+"\nv1", bot)
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.UpsertSticky(ctx, "o", "r", 1, marker, marker+"\nv2", bot)
	if err != nil {
		t.Fatal(err)
	}
	third, err := c.UpsertSticky(ctx, "o", "r", 1, marker, marker+"\nv2", bot)
	if err != nil {
		t.Fatal(err)
	}
	if first != second || second != third {
		t.Errorf("ids %d, %d, %d: want one comment", first, second, third)
	}
	if got := srv.Comments("o", "r", 1); len(got) != 1 || got[0].Body != marker+"\nv2" {
		t.Errorf("comments: %+v", got)
	}
	if n := count(srv, "PATCH"); n != 1 {
		t.Errorf("%d edits, want 1 (an unchanged body is not sent again)", n)
	}
}

func TestUpsertStickyRecreatesOn404(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	old := srv.AddComment("o", "r", 1, bot, "Bot", marker+"\nold")
	srv.FailNext("PATCH", "/repos/o/r/issues/comments/*", 404, nil, "")

	id, err := c.UpsertSticky(context.Background(), "o", "r", 1, marker, marker+"\nnew", bot)
	if err != nil {
		t.Fatal(err)
	}
	if id == old {
		t.Fatalf("kept %d, whose edit 404ed", id)
	}
	got := bodies(srv.Comments("o", "r", 1))
	if got[id] != marker+"\nnew" {
		t.Errorf("recreated body %q", got[id])
	}
	if n := count(srv, "POST /repos/o/r/issues/1/comments"); n != 1 {
		t.Errorf("%d creates, want 1", n)
	}
}

func TestUpsertStickyEditsNextWhenOldestVanished(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	gone := srv.AddComment("o", "r", 1, bot, "Bot", marker+"\nold")
	next := srv.AddComment("o", "r", 1, bot, "Bot", marker+"\nolder duplicate")
	srv.FailNext("PATCH", fmt.Sprintf("/repos/o/r/issues/comments/%d", gone), 404, nil, "")

	id, err := c.UpsertSticky(context.Background(), "o", "r", 1, marker, marker+"\nnew", bot)
	if err != nil {
		t.Fatal(err)
	}
	if id != next || count(srv, "POST") != 0 || count(srv, "DELETE") != 0 {
		t.Errorf("got %d, want %d edited in place; requests %v", id, next, srv.Requests())
	}
}

func TestUpsertStickyRefusesEmptyMarker(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	for _, tc := range []struct{ marker, bot string }{{"", bot}, {"  ", bot}, {marker, ""}} {
		if _, err := c.UpsertSticky(context.Background(), "o", "r", 1, tc.marker, "x", tc.bot); err == nil {
			t.Errorf("marker %q bot %q accepted", tc.marker, tc.bot)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests made", n)
	}
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	ctx := context.Background()
	if _, err := c.Comment(ctx, "o", "r", 1, strings.Repeat("x", 65536)); err != nil {
		t.Errorf("65,536 characters refused: %v", err)
	}
	_, err := c.Comment(ctx, "o", "r", 1, strings.Repeat("x", 65537))
	if !errors.Is(err, github.ErrBodyTooLong) || !strings.Contains(err.Error(), "65536") || !strings.Contains(err.Error(), "comment on o/r#1") {
		t.Errorf("65,537 characters: %v", err)
	}
	_, err = c.UpsertSticky(ctx, "o", "r", 1, marker, marker+strings.Repeat("x", 65536), bot)
	if !errors.Is(err, github.ErrBodyTooLong) {
		t.Errorf("sticky over the limit: %v", err)
	}
	if n := count(srv, "POST"); n != 3 {
		t.Errorf("%d posts, want 3 (a 422 is not retried)", n)
	}
}

func TestComments(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	var ids []int64
	for i := range 230 {
		ids = append(ids, srv.AddComment("o", "r", 1, "alice", "User", fmt.Sprintf("c%d", i)))
	}
	got, err := c.Comments(context.Background(), "o", "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []int64
	for _, cm := range got {
		gotIDs = append(gotIDs, cm.ID)
	}
	if diff := cmp.Diff(ids, gotIDs); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	want := github.Comment{ID: ids[229], Body: "c229", Author: "alice", AuthorType: "User", AuthorAssociation: "NONE",
		URL: fmt.Sprintf("https://github.com/o/r/pull/1#issuecomment-%d", ids[229])}
	if diff := cmp.Diff(want, got[229], ignoreTimes); diff != "" || got[229].CreatedAt.IsZero() {
		t.Errorf("comment (-want +got):\n%s", diff)
	}
	if pages := count(srv, "GET /repos/o/r/issues/1/comments"); pages != 3 {
		t.Errorf("%d list requests for a listing of 3 pages, want 3", pages)
	}
	if !slices.IsSorted(ids) {
		t.Error("fake ids do not increase")
	}
}

// TestCommentsEdited: a comment whose updated_at is later than its
// created_at was edited, and reads so through the listing.
func TestCommentsEdited(t *testing.T) {
	t.Parallel()
	srv, c, _ := setup(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	srv.SetClock(func() time.Time { return now })
	kept := srv.AddComment("o", "r", 1, "alice", "User", "/loop approve")
	edited := srv.AddComment("o", "r", 1, "alice", "User", "nice")
	now = now.Add(time.Second)
	srv.EditComment("o", "r", edited, "/loop approve")
	got, err := c.Comments(context.Background(), "o", "r", 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]bool{kept: false, edited: true}
	seen := map[int64]bool{}
	for _, cm := range got {
		seen[cm.ID] = cm.Edited()
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("edited (-want +got):\n%s", diff)
	}
}
