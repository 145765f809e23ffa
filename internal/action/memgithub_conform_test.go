package action

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

// side is one GitHub the conformance script runs against: the API, and
// how a test sets the scene and reads back what is not in the API.
type side struct {
	api       githubAPI
	add       func(n int, author, typ, body string) int64
	edit      func(id int64, body string)
	reactions func(id int64) []string // sorted
	statuses  func(sha string) []memStatus
}

const (
	confHead = "1111111111111111111111111111111111111111"
	confBase = "2222222222222222222222222222222222222222"
)

// httpSide is the client over the HTTP fake.
func httpSide(t *testing.T) side {
	fake := githubfake.New()
	t.Cleanup(fake.Close)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fake.SetClock(func() time.Time { t0 = t0.Add(time.Second); return t0 })
	fake.SetToken("ghs_conformance", bot)
	for user, level := range map[string]string{"writer": "write", "maintainer": "maintain", "triager": "triage", "boss": "admin"} {
		fake.SetPermission(owner, repo, user, level)
	}
	fake.AddPull(owner, repo, githubfake.Pull{Number: 7, Title: "t", Author: "writer", HeadSHA: confHead, BaseSHA: confBase})
	fake.AddPull(owner, repo, githubfake.Pull{Number: 8, Title: "f", Author: "mallory", HeadSHA: confHead, BaseSHA: confBase, HeadRepo: "mallory/" + repo})
	fake.AddFile(owner, repo, confBase, ".github/loop.toml", []byte("name = \"demo\"\n"))
	c, err := github.New(fake.URL(), "ghs_conformance", github.WithRetry(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	return side{
		api:       c,
		add:       func(n int, author, typ, body string) int64 { return fake.AddComment(owner, repo, n, author, typ, body) },
		edit:      func(id int64, body string) { fake.EditComment(owner, repo, id, body) },
		reactions: func(id int64) []string { return slices.Sorted(slices.Values(fake.Reactions(owner, repo, id))) },
		statuses: func(sha string) []memStatus {
			var out []memStatus
			for _, s := range fake.Statuses(owner, repo, sha) {
				out = append(out, memStatus{SHA: s.SHA, State: s.State, Context: s.Context, Description: s.Description, TargetURL: s.TargetURL, Creator: s.Creator})
			}
			return out
		},
	}
}

// memSide is the stand-in, set up as httpSide.
func memSide() side {
	m := newMemGitHub(owner, repo, bot)
	for user, level := range map[string]string{"writer": "write", "maintainer": "write", "triager": "read", "boss": "admin"} {
		m.permit(user, level)
	}
	pr := func(n int, title, author, headRepo string) github.PR {
		return github.PR{Number: n, Title: title, Author: author, State: "open", HeadSHA: confHead, HeadRef: "feature",
			HeadRepo: headRepo, BaseRef: "main", BaseSHA: confBase, BaseRepo: owner + "/" + repo, Fork: headRepo != owner+"/"+repo}
	}
	m.pulls[7], m.pulls[8] = pr(7, "t", "writer", owner+"/"+repo), pr(8, "f", "mallory", "mallory/"+repo)
	m.files[confBase+":.github/loop.toml"] = []byte("name = \"demo\"\n")
	return side{api: m, add: m.add, edit: m.edit, reactions: m.reactionsTo,
		statuses: func(sha string) []memStatus {
			return slices.DeleteFunc(m.setStatuses(), func(s memStatus) bool { return s.SHA != sha })
		}}
}

// TestMemGitHubAnswersAsTheClient runs one script of calls against the
// client over the HTTP fake and against the stand-in, and wants the same
// answers (comment ids by the order they were made in): the decision tests
// are only as good as the stand-in's likeness.
func TestMemGitHubAnswersAsTheClient(t *testing.T) {
	t.Parallel()
	want := conformanceScript(t, httpSide(t))
	got := conformanceScript(t, memSide())
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the stand-in answers otherwise than the client (-client +stand-in):\n%s", diff)
	}
}

func conformanceScript(t *testing.T, s side) []string {
	ctx := context.Background()
	var log []string
	names := map[int64]string{}
	name := func(id int64) string {
		if _, ok := names[id]; !ok {
			names[id] = fmt.Sprintf("c%d", len(names)+1)
		}
		return names[id]
	}
	say := func(what string, v any, err error) {
		log = append(log, fmt.Sprintf("%s: %v (error %t)", what, v, err != nil))
	}

	plain := s.add(7, "writer", "User", "hello")
	name(plain)
	name(s.add(7, bot, "User", "<!-- m -->\nimpostor"))
	name(s.add(7, bot, "Bot", "<!-- m -->\nold"))
	name(s.add(7, "mallory", "User", "<!-- m -->\nspoof"))
	name(s.add(7, bot, "Bot", "<!-- m -->\nduplicate"))
	id, err := s.api.UpsertSticky(ctx, owner, repo, 7, "<!-- m -->", "new", bot)
	say("sticky", name(id), err)
	id, err = s.api.UpsertSticky(ctx, owner, repo, 7, "<!-- m -->", "<!-- m -->\nnew", bot)
	say("sticky again", name(id), err)
	id, err = s.api.Comment(ctx, owner, repo, 7, "a reply")
	say("comment", name(id), err)
	s.edit(plain, "/loop approve")
	for _, r := range []string{"eyes", "+1", "eyes", "nope"} {
		say("react "+r, "", s.api.React(ctx, owner, repo, plain, r))
	}
	say("react to no comment", "", s.api.React(ctx, owner, repo, 999_999, "eyes"))
	say("reactions", s.reactions(plain), nil)
	cs, err := s.api.Comments(ctx, owner, repo, 7)
	for _, c := range cs {
		log = append(log, fmt.Sprintf("%s by %s (%s) edited %t: %q", name(c.ID), c.Author, c.AuthorType, c.Edited(), c.Body))
	}
	say("comments", len(cs), err)
	for _, user := range []string{"writer", "maintainer", "triager", "boss", "stranger", "WRITER"} {
		perm, err := s.api.Permission(ctx, owner, repo, user)
		say("permission "+user, perm, err)
	}
	for _, n := range []int{7, 8, 9} {
		pr, err := s.api.PullRequest(ctx, owner, repo, n)
		say(fmt.Sprint("pull request ", n), pr, err)
	}
	for _, ref := range []string{confBase, confHead} {
		b, err := s.api.FileAt(ctx, owner, repo, ".github/loop.toml", ref)
		say("file at "+ref[:7], string(b), err)
	}
	for _, st := range []string{"pending", "success", "bogus"} {
		say("status "+st, "", s.api.SetStatus(ctx, owner, repo, confHead, st, "loop/demo", "d", "https://example.com/run"))
	}
	say("statuses", s.statuses(confHead), nil)
	for _, c := range []string{"loop/demo", "loop/other"} {
		st, err := s.api.LatestStatus(ctx, owner, repo, confHead, c)
		say("latest status "+c, st, err)
	}
	st, err := s.api.LatestStatus(ctx, owner, repo, confBase, "loop/demo")
	say("latest status of a commit without one", st, err)
	return append(log, pullsScript(ctx, s.api)...)
}

// pullsScript opens, finds and edits a pull request for delivered work.
func pullsScript(ctx context.Context, api githubAPI) []string {
	var log []string
	say := func(what string, v any, err error) {
		log = append(log, fmt.Sprintf("%s: %v (error %t)", what, v, err != nil))
	}
	for _, head := range []string{"loop/demo", "feature"} {
		n, err := api.OpenPullFor(ctx, owner, repo, head)
		say("open pull from "+head, n, err)
	}
	n, err := api.CreatePull(ctx, owner, repo, "loop/demo", "main", "loop demo", "report 1")
	say("create", n, err)
	_, err = api.CreatePull(ctx, owner, repo, "loop/demo", "main", "again", "report 2")
	say("create again", "", err)
	found, err := api.OpenPullFor(ctx, owner, repo, "loop/demo")
	say("open pull from loop/demo", found == n, err)
	say("edit", "", api.EditPull(ctx, owner, repo, n, "loop demo", "report 3"))
	say("edit none", "", api.EditPull(ctx, owner, repo, 99, "x", "y"))
	_, err = api.CreatePull(ctx, owner, repo, "loop/long", "main", "long", strings.Repeat("x", CommentLimit+1))
	say("create too long", errors.Is(err, github.ErrBodyTooLong), err)
	pr, err := api.PullRequest(ctx, owner, repo, n)
	say("the pull request", pr, err)
	return log
}
