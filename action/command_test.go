package action

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var goals = []string{"tests", "ui"}

func TestParseCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		body    string
		want    Command
		wantErr string
	}{
		{"/loop approve", Command{Verb: Approve}, ""},
		{"  /loop approve ui  ", Command{Verb: Approve, Goal: "ui"}, ""},
		{"Looks right to me.\n\n/loop approve ui\nthanks", Command{Verb: Approve, Goal: "ui"}, ""},
		{"/loop reject ui the header overlaps on mobile", Command{Verb: Reject, Goal: "ui", Reason: "the header overlaps on mobile"}, ""},
		{"/loop reject please fix   the header", Command{Verb: Reject, Reason: "please fix the header"}, ""},
		{"/loop run", Command{Verb: RunLoop}, ""},
		{"/loop stop", Command{Verb: Stop}, ""},
		{"/loop status", Command{Verb: Status}, ""},
		{"/loop help", Command{Verb: Help}, ""},
		{"/loop\tstatus", Command{Verb: Status}, ""},
		{"no command here", Command{}, ErrNotCommand.Error()},
		{"/loopy approve", Command{}, ErrNotCommand.Error()},
		{"> /loop approve\nquoted", Command{}, ErrNotCommand.Error()},
		{"```\n/loop approve\n```", Command{}, ErrNotCommand.Error()},
		{"```\ncode\n```\n/loop approve", Command{Verb: Approve}, ""},
		{"/loop", Command{}, "/loop needs a command: " + usage},
		{"/loop approve nope", Command{}, `no goal "nope": the goals are tests, ui`},
		{"/loop approve ui tests", Command{}, "/loop approve takes at most one goal"},
		{"/loop reject ui", Command{}, "/loop reject needs a reason, so the builders know what to change: /loop reject [goal] <reason>"},
		{"/loop reject", Command{}, "/loop reject needs a reason, so the builders know what to change: /loop reject [goal] <reason>"},
		{"/loop run now", Command{}, "/loop run takes no arguments"},
		{"/loop Approve", Command{}, `unknown /loop command "Approve": ` + usage},
		{"/loop merge", Command{}, `unknown /loop command "merge": ` + usage},
	}
	for _, tt := range tests {
		got, err := ParseCommand(tt.body, goals)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if msg != tt.wantErr {
			t.Errorf("ParseCommand(%q) error = %q, want %q", tt.body, msg, tt.wantErr)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseCommand(%q) (-want +got):\n%s", tt.body, diff)
		}
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/loop approve ui", "/loop reject tests no", "```\n/loop run\n```\n/loop stop", "> /loop help", "/loop", "/loop approve " + strings.Repeat("x", 3000)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		c, err := ParseCommand(body, goals)
		if err != nil {
			if c != (Command{}) {
				t.Fatalf("an error came with a command: %+v", c)
			}
			if errors.Is(err, ErrNotCommand) && strings.Contains(body, "\n/loop approve\n") && !strings.Contains(body, "```") && !strings.Contains(body, "~~~") {
				t.Fatalf("missed a plain command line in %q", body)
			}
			return
		}
		switch c.Verb {
		case Approve, Reject, RunLoop, Stop, Status, Help:
		default:
			t.Fatalf("unknown verb %q accepted", c.Verb)
		}
		if c.Goal != "" && c.Goal != "tests" && c.Goal != "ui" {
			t.Fatalf("goal %q accepted", c.Goal)
		}
		if c.Verb == Reject && strings.TrimSpace(c.Reason) == "" {
			t.Fatal("a rejection without a reason was accepted")
		}
		if !utf8.ValidString(body) {
			return
		}
	})
}
