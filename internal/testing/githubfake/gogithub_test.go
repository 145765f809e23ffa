package githubfake_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	gh "github.com/google/go-github/v62/github"

	"github.com/loop-action/loop-action/internal/testing/githubfake"
)

// TestGoGitHubReadsTheFake runs the calls loop-action makes through
// go-github itself, and wants what GitHub answers as go-github decodes
// it: the tests of package action use this fake as their GitHub, so its
// likeness is what they stand on.
func TestGoGitHubReadsTheFake(t *testing.T) {
	t.Parallel()
	s := start(t)
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { t0 = t0.Add(time.Second); return t0 })
	for user, level := range map[string]string{"writer": "write", "maintainer": "maintain", "triager": "triage", "boss": "admin"} {
		s.SetPermission("o", "r", user, level)
	}
	s.AddPull("o", "r", githubfake.Pull{Number: 8, Author: "mallory", HeadSHA: "abc", BaseSHA: "def", HeadRepo: "mallory/r"})
	s.AddFile("o", "r", "def", ".github/loop.toml", []byte("name = \"demo\"\n"))
	c := gh.NewClient(testClient).WithAuthToken(token)
	c.BaseURL, _ = url.Parse(s.URL() + "/")
	ctx := context.Background()
	var log []string
	say := func(what string, v any, err error) {
		log = append(log, fmt.Sprintf("%s: %v (error %t)", what, v, err != nil))
	}

	plain := s.AddComment("o", "r", 1, "writer", "User", "hello")
	s.AddComment("o", "r", 1, "github-actions[bot]", "User", "impostor")
	s.EditComment("o", "r", plain, "/loop approve")
	mine, _, err := c.Issues.CreateComment(ctx, "o", "r", 1, &gh.IssueComment{Body: gh.String("a reply")})
	say("comment", mine.GetUser().GetType(), err)
	_, _, err = c.Issues.CreateComment(ctx, "o", "r", 1, &gh.IssueComment{Body: gh.String(strings.Repeat("x", githubfake.BodyLimit+1))})
	say("comment too long", err != nil && strings.Contains(err.Error(), "too long"), err)
	for _, r := range []string{"eyes", "+1", "eyes", "nope"} {
		_, _, err := c.Reactions.CreateIssueCommentReaction(ctx, "o", "r", plain, r)
		say("react "+r, "", err)
	}
	_, _, err = c.Reactions.CreateIssueCommentReaction(ctx, "o", "r", 999, "eyes")
	say("react to no comment", "", err)
	cs, _, err := c.Issues.ListComments(ctx, "o", "r", 1, &gh.IssueListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}})
	for _, cm := range cs {
		log = append(log, fmt.Sprintf("%s (%s) edited %t, id over 2^31 %t: %q", cm.GetUser().GetLogin(), cm.GetUser().GetType(),
			cm.GetUpdatedAt().After(cm.GetCreatedAt().Time), cm.GetID() > 1<<31, cm.GetBody()))
	}
	say("comments", len(cs), err)
	for _, user := range []string{"writer", "maintainer", "triager", "boss", "WRITER", "stranger"} {
		p, _, err := c.Repositories.GetPermissionLevel(ctx, "o", "r", user)
		say("permission "+user, p.GetPermission(), err)
	}
	for _, n := range []int{1, 8, 9} {
		p, _, err := c.PullRequests.Get(ctx, "o", "r", n)
		say(fmt.Sprint("pull request ", n), fmt.Sprintf("%s by %s, %s of %s into %s of %s", p.GetState(), p.GetUser().GetLogin(),
			p.GetHead().GetRef(), p.GetHead().GetRepo().GetFullName(), p.GetBase().GetSHA(), p.GetBase().GetRepo().GetFullName()), err)
	}
	for _, ref := range []string{"def", "abc"} {
		fc, _, _, err := c.Repositories.GetContents(ctx, "o", "r", ".github/loop.toml", &gh.RepositoryContentGetOptions{Ref: ref})
		var content string
		if err == nil {
			content, err = fc.GetContent()
		}
		say("file at "+ref, content, err)
	}
	for _, st := range []string{"pending", "success", "bogus"} {
		_, _, err := c.Repositories.CreateStatus(ctx, "o", "r", "abc", &gh.RepoStatus{State: gh.String(st), Context: gh.String("loop/demo")})
		say("status "+st, "", err)
	}
	s.AddStatus("o", "r", githubfake.Status{SHA: "abc", State: "failure", Context: "loop/demo", Creator: "mallory"})
	for _, sha := range []string{"abc", "def"} {
		sts, _, err := c.Repositories.ListStatuses(ctx, "o", "r", sha, &gh.ListOptions{PerPage: 100})
		var got []string
		for _, st := range sts {
			got = append(got, st.GetState()+" by "+st.GetCreator().GetLogin())
		}
		say("statuses of "+sha, got, err)
	}
	log = append(log, pullsScript(ctx, c)...)

	want := []string{
		"comment: Bot (error false)",
		"comment too long: true (error true)",
		"react eyes:  (error false)",
		"react +1:  (error false)",
		"react eyes:  (error false)",
		"react nope:  (error true)",
		"react to no comment:  (error true)",
		`writer (User) edited true, id over 2^31 true: "/loop approve"`,
		`github-actions[bot] (User) edited false, id over 2^31 true: "impostor"`,
		`github-actions[bot] (Bot) edited false, id over 2^31 true: "a reply"`,
		"comments: 3 (error false)",
		"permission writer: write (error false)",
		"permission maintainer: write (error false)",
		"permission triager: read (error false)",
		"permission boss: admin (error false)",
		"permission WRITER: write (error false)",
		"permission stranger:  (error true)",
		"pull request 1: open by octocat, feature of o/r into def of o/r (error false)",
		"pull request 8: open by mallory, feature of mallory/r into def of o/r (error false)",
		"pull request 9:  by ,  of  into  of  (error true)",
		"file at def: name = \"demo\"\n (error false)",
		"file at abc:  (error true)",
		"status pending:  (error false)",
		"status success:  (error false)",
		"status bogus:  (error true)",
		"statuses of abc: [failure by mallory success by github-actions[bot] pending by github-actions[bot]] (error false)",
		"statuses of def: [] (error false)",
		"open pulls from loop/demo: [] (error false)",
		"create: 9 (error false)",
		"create again:  (error true)",
		"open pulls from loop/demo: [9] (error false)",
		"edit: report 3 (error false)",
		"edit none:  (error true)",
		"create too long: true (error true)",
	}
	if diff := cmp.Diff(want, log); diff != "" {
		t.Errorf("go-github's reading of the fake (-want +got):\n%s", diff)
	}
}

// pullsScript opens, finds and edits a pull request for delivered work.
func pullsScript(ctx context.Context, c *gh.Client) []string {
	var log []string
	say := func(what string, v any, err error) {
		log = append(log, fmt.Sprintf("%s: %v (error %t)", what, v, err != nil))
	}
	open := func() {
		prs, _, err := c.PullRequests.List(ctx, "o", "r", &gh.PullRequestListOptions{State: "open", Head: "o:loop/demo"})
		var ns []int
		for _, p := range prs {
			ns = append(ns, p.GetNumber())
		}
		say("open pulls from loop/demo", fmt.Sprint(ns), err)
	}
	create := func(head, title, body string) (*gh.PullRequest, error) {
		p, _, err := c.PullRequests.Create(ctx, "o", "r", &gh.NewPullRequest{Title: &title, Head: &head, Base: gh.String("main"), Body: &body})
		return p, err
	}
	open()
	p, err := create("loop/demo", "loop demo", "report 1")
	say("create", p.GetNumber(), err)
	_, err = create("loop/demo", "again", "report 2")
	say("create again", "", err)
	open()
	e, _, err := c.PullRequests.Edit(ctx, "o", "r", p.GetNumber(), &gh.PullRequest{Title: gh.String("loop demo"), Body: gh.String("report 3")})
	say("edit", e.GetBody(), err)
	_, _, err = c.PullRequests.Edit(ctx, "o", "r", 99, &gh.PullRequest{Body: gh.String("y")})
	say("edit none", "", err)
	_, err = create("loop/long", "long", strings.Repeat("x", githubfake.BodyLimit+1))
	say("create too long", err != nil && strings.Contains(err.Error(), "too long"), err)
	return log
}
