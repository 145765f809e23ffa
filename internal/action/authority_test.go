package action

import (
	stdcmp "cmp"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
)

// approvers lists boss, and reader (who lacks write), as [review] approvers.
const approvers = "\n[review]\napprovers = [\"BOSS\", \"reader\"]\n"

// TestWhoMayCommand: status is anyone's; every other command needs write
// permission now, and all but help a place among [review] approvers when
// the config lists any. Bots, and anyone using the bot's login, are not
// heard at all. A permission that cannot be checked refuses the command.
func TestWhoMayCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		config    string
		author    string
		typ       string
		body      string
		permFails bool
		reactions []string
		reply     string // part of the one reply; "" when none is wanted
		decided   bool   // an approval of ui by the author is recorded
		steer     steer
	}{
		{name: "a writer approves", author: "writer", body: "/loop approve ui", reactions: []string{"+1", "eyes"}, decided: true, steer: steer{run: true}},
		{name: "an admin approves", author: "boss", body: "/loop approve", reactions: []string{"+1", "eyes"}, decided: true, steer: steer{run: true}},
		{name: "a reader approves", author: "reader", body: "/loop approve ui", reactions: []string{"-1", "eyes"}},
		{name: "a stranger approves", author: "stranger", body: "/loop approve ui", reactions: []string{"-1", "eyes"}},
		{name: "a stranger asks for status", author: "stranger", body: "/loop status", reactions: []string{"+1", "eyes"}, steer: steer{status: true}},
		{name: "a reader asks for help", author: "reader", body: "/loop help", reactions: []string{"-1", "eyes"}},
		{name: "a writer asks for help", author: "writer", body: "/loop help", reactions: []string{"+1", "eyes"}, reply: "loop-action commands, one per comment"},
		{name: "a writer reruns", author: "writer", body: "/loop run", reactions: []string{"+1", "eyes"}, steer: steer{run: true}},
		{name: "a reader reruns", author: "reader", body: "/loop run", reactions: []string{"-1", "eyes"}},
		{name: "a writer among no approvers", config: approvers, author: "writer", body: "/loop approve ui",
			reactions: []string{"-1", "eyes"}, reply: "/loop approve is limited to the approvers the loop config lists"},
		{name: "a writer among no approvers asks for help", config: approvers, author: "writer", body: "/loop help",
			reactions: []string{"+1", "eyes"}, reply: "loop-action commands"},
		{name: "an approver, in another case", config: approvers, author: "boss", body: "/loop approve ui",
			reactions: []string{"+1", "eyes"}, decided: true, steer: steer{run: true}},
		{name: "an approver without write", config: approvers, author: "reader", body: "/loop approve ui", reactions: []string{"-1", "eyes"}},
		{name: "a reader pushes", author: "reader", body: "/loop push", reactions: []string{"-1", "eyes"}},
		{name: "a writer among no approvers pushes", config: approvers, author: "writer", body: "/loop push",
			reactions: []string{"-1", "eyes"}, reply: "/loop push is limited to the approvers the loop config lists"},
		{name: "a bot", author: "renovate[bot]", typ: "Bot", body: "/loop approve ui"},
		{name: "a user with the bot's login", author: "GitHub-Actions[bot]", body: "/loop approve ui"},
		{name: "a writer whose permission cannot be checked", author: "writer", body: "/loop approve ui", permFails: true,
			reactions: []string{"-1", "eyes"}},
		{name: "a stranger whose permission cannot be checked asks for status", author: "stranger", body: "/loop status",
			permFails: true, reactions: []string{"+1", "eyes"}, steer: steer{status: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop+tt.config)
			m.pause()
			if tt.permFails {
				m.gh.FailEvery("GET", "/repos/*/*/collaborators/*/permission", http.StatusBadGateway)
			}
			id := m.gh.AddComment(owner, repo, 7, tt.author, stdcmp.Or(tt.typ, "User"), tt.body)
			st := m.catchUp()
			if diff := cmp.Diff(tt.reactions, reactionsTo(m.gh, id)); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
			wantReplies(t, m.replies(tt.author), tt.reply)
			var want []gate.Decision
			if tt.decided {
				want = []gate.Decision{{Goal: "ui", Approved: true, By: tt.author, Snapshot: memSnap, Comment: id}}
			}
			if diff := cmp.Diff(want, m.checkpoint().Decisions); diff != "" {
				t.Errorf("decisions recorded (-want +got):\n%s", diff)
			}
			if st != tt.steer {
				t.Errorf("steer %+v, want %+v", st, tt.steer)
			}
			if got := m.checkpoint().LastCommentID; tt.reactions != nil && got != id {
				t.Errorf("last comment handled %d, want %d", got, id)
			}
		})
	}
}

// wantReplies checks that replies is one reply containing want, or none
// when want is "".
func wantReplies(t *testing.T, replies []string, want string) {
	t.Helper()
	switch {
	case want == "" && len(replies) != 0:
		t.Errorf("the bot answered in words: %q", replies)
	case want != "" && (len(replies) != 1 || !strings.Contains(replies[0], want)):
		t.Errorf("replies %q, want one containing %q", replies, want)
	}
}

// TestOnlyWritersMakeTheBotSpeak: someone without write permission gets
// reactions and nothing else; what the bot echoes to a writer renders as
// code, so mentions, images and links in it do not.
func TestOnlyWritersMakeTheBotSpeak(t *testing.T) {
	t.Parallel()
	m := newMemJob(t, demoLoop)
	m.pause()
	hostile := "/loop ![x](https://example.com/x.png)"
	for _, body := range []string{hostile, "/loop help", "/loop approve ui", "/loop @octo-org/everyone"} {
		id, _ := m.command("reader", body)
		if diff := cmp.Diff([]string{"-1", "eyes"}, reactionsTo(m.gh, id)); diff != "" {
			t.Errorf("reactions to the reader's %q (-want +got):\n%s", body, diff)
		}
	}
	if r := m.replies("reader"); len(r) != 0 {
		t.Errorf("the bot answered the reader in words: %q", r)
	}
	for _, tt := range []struct{ body, want string }{
		{"/loop @octo-org/everyone\n`x`", "unknown /loop command `@octo-org/everyone`:"},
		{hostile, "unknown /loop command `![x](https://example.com/x.png)`:"},
		{"/loop approve <img/src=https://example.com/x>", "no goal `<img/src=https://example.com/x>`:"},
		{"/loop approve a`b", "no goal ``a`b``:"},
	} {
		m.command("writer", tt.body)
		r := m.replies("writer")
		if len(r) == 0 || !strings.Contains(r[len(r)-1], tt.want) {
			t.Errorf("reply to the writer's %q: %q, want it to contain %q", tt.body, r, tt.want)
		}
	}
}

// TestWhichCommentsAreCommands: a command counts only where people reading
// the comment see it, written as it stands now, and only once: quoted,
// fenced or hidden text is no command, an edited comment is refused, and
// a comment already handled is not handled again.
func TestWhichCommentsAreCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		write     func(m *memJob) int64
		reactions []string
		reply     string
		decided   bool
	}{
		{"below other text", func(m *memJob) int64 {
			return m.gh.AddComment(owner, repo, 7, "writer", "User", "LGTM\n\n/loop approve ui")
		},
			[]string{"+1", "eyes"}, "", true},
		{"quoted", func(m *memJob) int64 { return m.gh.AddComment(owner, repo, 7, "writer", "User", "> /loop approve ui") }, nil, "", false},
		{"fenced", func(m *memJob) int64 {
			return m.gh.AddComment(owner, repo, 7, "writer", "User", "```\n/loop approve ui\n```")
		}, nil, "", false},
		{"in an HTML comment", func(m *memJob) int64 {
			return m.gh.AddComment(owner, repo, 7, "writer", "User", "<!--\n/loop approve ui\n-->")
		}, nil, "", false},
		{"edited into a command", func(m *memJob) int64 {
			id := m.gh.AddComment(owner, repo, 7, "writer", "User", "Looks fine, I will have a closer look tomorrow.")
			m.gh.EditComment(owner, repo, id, "/loop approve ui")
			return id
		}, []string{"-1", "eyes"}, "an edited comment is never a command", false},
		{"a command edited", func(m *memJob) int64 {
			id := m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop reject ui too dark")
			m.gh.EditComment(owner, repo, id, "/loop approve ui")
			return id
		}, []string{"-1", "eyes"}, "an edited comment is never a command", false},
		{"already handled", func(m *memJob) int64 {
			id := m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve ui")
			cp := m.checkpoint()
			cp.LastCommentID = id
			if err := m.s.store.Save(m.t.Context(), cp, state.Commit{KeepWorkspace: true}); err != nil {
				m.t.Fatal(err)
			}
			return id
		}, nil, "", false},
		{"malformed", func(m *memJob) int64 { return m.gh.AddComment(owner, repo, 7, "writer", "User", "/loop approve nope") },
			[]string{"-1", "eyes"}, "no goal `nope`: the goals are `tests`, `ui`", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := newMemJob(t, demoLoop)
			m.pause()
			id := tt.write(m)
			m.catchUp()
			if diff := cmp.Diff(tt.reactions, reactionsTo(m.gh, id)); diff != "" {
				t.Errorf("reactions (-want +got):\n%s", diff)
			}
			wantReplies(t, m.replies("writer"), tt.reply)
			if got := len(m.checkpoint().Decisions) == 1; got != tt.decided {
				t.Errorf("decisions %+v, want one: %t", m.checkpoint().Decisions, tt.decided)
			}
		})
	}
}
