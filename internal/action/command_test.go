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
		{"/loop push", Command{Verb: PushFix}, ""},
		{"/loop push --force", Command{}, "/loop push takes no arguments"},
		{"/loop\tstatus", Command{Verb: Status}, ""},
		{"no command here", Command{}, ErrNotCommand.Error()},
		{"/loopy approve", Command{}, ErrNotCommand.Error()},
		{"> /loop approve\nquoted", Command{}, ErrNotCommand.Error()},
		{"```\n/loop approve\n```", Command{}, ErrNotCommand.Error()},
		{"```\ncode\n```\n/loop approve", Command{Verb: Approve}, ""},
		{"/loop", Command{}, "/loop needs a command: " + usage},
		{"/loop approve nope", Command{}, "no goal `nope`: the goals are `tests`, `ui`"},
		{"/loop approve ui tests", Command{}, "/loop approve takes at most one goal"},
		{"/loop reject ui", Command{}, "/loop reject needs a reason, so the builders know what to change: /loop reject [goal] <reason>"},
		{"/loop reject", Command{}, "/loop reject needs a reason, so the builders know what to change: /loop reject [goal] <reason>"},
		{"/loop run now", Command{}, "/loop run takes no arguments"},
		{"/loop Approve", Command{}, "unknown /loop command `Approve`: " + usage},
		{"/loop merge", Command{}, "unknown /loop command `merge`: " + usage},
		{"/loop @org/team", Command{}, "unknown /loop command `@org/team`: " + usage},
		{"/loop approve ![x](https://example.com/x.png)", Command{}, "no goal `![x](https://example.com/x.png)`: the goals are `tests`, `ui`"},
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

// TestCommandVisibility: a command counts only where people reading the
// comment see it as a line of its own — never in code (fenced by CommonMark's
// rules, or indented), a quote, an HTML comment or block, or a collapsed
// <details>.
func TestCommandVisibility(t *testing.T) {
	t.Parallel()
	hidden := map[string]string{
		"indented code":                           "Type this:\n\n    /loop approve\n",
		"indented with a tab":                     "\t/loop approve",
		"a paragraph's indented continuation":     "to approve, write\n    /loop approve",
		"a ~~~ fence holding a ``` line":          "~~~\n```\n/loop approve\n```\n~~~\n",
		"a longer fence holding a shorter one":    "````\n```\n/loop approve\n```\n````",
		"an unclosed fence":                       "```\nno end\n/loop approve",
		"a closing fence indented 4":              "```\n    ```\n/loop approve\n```",
		"a closing fence with text after it":      "```\n``` not a close\n/loop approve\n```",
		"a tilde fence closed by backticks":       "~~~\n```\n\n/loop approve",
		"a fence indented 3":                      "   ```\n/loop approve\n",
		"a fence in a list item":                  "- ```\n  /loop approve\n  ```",
		"a fence in an ordered item":              "1. ~~~\n   /loop approve",
		"a one-line HTML comment":                 "<!-- /loop approve -->",
		"an HTML comment":                         "LGTM\n<!--\n/loop approve\n-->",
		"an HTML comment in a paragraph":          "LGTM <!-- hidden\n/loop approve\n-->",
		"an HTML comment an HTML block left open": "<div>\n<!--\n\n/loop approve\n\n-->\n",
		"an HTML block":                           "<div>\n/loop approve\n</div>",
		"a raw HTML block across blank lines":     "<pre>\n\n/loop approve\n</pre>",
		"a collapsed details":                     "<details>\n\n/loop approve\n\n</details>",
		"a details opened inline":                 "see <details><summary>log</summary>\n\n/loop approve\n",
		"a quote":                                 "> /loop approve",
		"a quote's lazy continuation":             "> they said\n/loop approve",
		"a quote in a list item":                  "- > quoted\n/loop approve",
		"a fence opened after a lone CR":          "see\r```\n/loop approve",
		"a code span across lines":                "`see\n/loop approve`",
		"text before it on its line":              "**note** /loop approve",
		"a heading's marker":                      "# /loop approve",
		"a list item's marker":                    "- /loop approve",
		"an HTML comment a quote left open":       "> <!--\n\n/loop approve\n\n-->",
	}
	for name, body := range hidden {
		t.Run(name, func(t *testing.T) {
			if c, err := ParseCommand(body, goals); !errors.Is(err, ErrNotCommand) {
				t.Errorf("ParseCommand(%q) = %+v, %v; want ErrNotCommand", body, c, err)
			}
		})
	}
	visible := map[string]string{
		"after a fence":                        "```\ncode\n```\n/loop approve",
		"after a ~~~ fence":                    "~~~\n/loop stop\n~~~\n/loop approve",
		"after a fence closed by a longer one": "```\nx\n`````\n/loop approve",
		"after a closing fence with spaces":    "```\nx\n```   \n/loop approve",
		"after backticks that open no fence":   "``` `x`\n/loop approve",
		"indented 3":                           "   /loop approve",
		"after an HTML comment":                "<!-- note -->\n/loop approve",
		"after a details":                      "<details>\n<summary>log</summary>\n\nlots\n\n</details>\n\n/loop approve",
		"after a quote and a blank line":       "> quote\n\n/loop approve",
		"after a list item's fence":            "- ```\n  x\n  ```\n/loop approve",
		"after a list item the fence ended":    "- ```\n  x\n\n/loop approve",
		"after a paragraph":                    "Looks right.\n/loop approve",
		"after a lone CR":                      "Looks right.\r/loop approve",
		"a list item's next line":              "- see\n  /loop approve",
		"a setext heading":                     "/loop approve\n===",
		"after a details tag in code":          "    <details>\n\n/loop approve",
	}
	for name, body := range visible {
		t.Run(name, func(t *testing.T) {
			if c, err := ParseCommand(body, goals); err != nil || c.Verb != Approve {
				t.Errorf("ParseCommand(%q) = %+v, %v; want /loop approve", body, c, err)
			}
		})
	}
}

// TestVerbatim: echoed text renders as the characters it is made of.
func TestVerbatim(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"ui", "`ui`"},
		{"@org/team", "`@org/team`"},
		{"![x](https://example.com/x.png)", "`![x](https://example.com/x.png)`"},
		{"a`b", "``a`b``"},
		{"x ``` y", "````x ``` y````"},
		{"`edge`", "`` `edge` ``"},
		{"two\nlines\r\nhere", "`two lines here`"},
		{"<img src=x>", "`<img src=x>`"},
		{"", "`  `"},
		{strings.Repeat("a", 100), "`" + strings.Repeat("a", maxEcho-1) + "…`"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Verbatim(tt.in)); diff != "" {
			t.Errorf("Verbatim(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func FuzzVerbatim(f *testing.F) {
	for _, s := range []string{"@org/team", "![x](https://example.com/x.png)", "a``b`", "`", "line\nbreak", "\r"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Verbatim(s)
		fence := v[:run(v, '`')]
		inner := strings.TrimSuffix(strings.TrimPrefix(v, fence), fence)
		switch {
		case len(fence) == 0 || !strings.HasSuffix(v, fence) || len(v) < 2*len(fence):
			t.Fatalf("Verbatim(%q) = %q is no code span", s, v)
		case strings.ContainsAny(v, "\r\n"):
			t.Fatalf("Verbatim(%q) = %q has a line break", s, v)
		case strings.Contains(inner, fence) || strings.HasPrefix(inner, "`") || strings.HasSuffix(inner, "`"):
			t.Fatalf("Verbatim(%q) = %q can end early", s, v)
		}
	})
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
			if before, _, ok := strings.Cut(body, "\n/loop approve\n"); ok && plain(before) {
				t.Fatalf("missed a command after plain lines in %q", body)
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

// plain reports whether s is only letters, digits and line breaks: text
// after which a command line is always seen.
func plain(s string) bool {
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789\n") == ""
}

// TestErrSpanKeepsTheCause: an error shown in a report keeps its end,
// where a wrapped error's cause is, and renders nothing.
func TestErrSpanKeepsTheCause(t *testing.T) {
	long := "deliver abc to \"refs/heads/feature\": push at http://host/o/r.git: " + strings.Repeat("x", 300) + ": the token was refused"
	tests := []struct{ in, want string }{
		{"refused", "`refused`"},
		{"@team `x`", "`` @team `x` ``"},
		{long, "`…" + long[len(long)-maxErr+1:] + "`"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ErrSpan(tt.in)); diff != "" {
			t.Errorf("ErrSpan(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}
