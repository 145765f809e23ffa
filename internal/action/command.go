package action

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Verb is what a /loop command asks for.
type Verb string

// Verbs.
const (
	Approve Verb = "approve"
	Reject  Verb = "reject"
	RunLoop Verb = "run"
	Stop    Verb = "stop"
	Status  Verb = "status"
	Help    Verb = "help"
	PushFix Verb = "push"
)

// Command is a parsed /loop command.
type Command struct {
	Verb   Verb
	Goal   string // approve and reject: the goal, or "" for the one review pending
	Reason string // reject: why
}

// ErrNotCommand means the comment holds no /loop command; it is ignored.
var ErrNotCommand = errors.New("not a /loop command")

// maxCommandLine bounds the line a command is read from.
const maxCommandLine = 2000

// ParseCommand reads the /loop command of a comment: the first line that
// is "/loop" or starts with "/loop ", on a line of its own as people
// reading the comment see it — not in code (fenced or indented), a quote,
// an HTML comment or block, or a collapsed <details>. goals are the loop's
// goal names: for reject, a first word that names a goal is the goal, the
// rest the reason. A malformed command is an error that says how to write
// it, quoting what it echoes with Verbatim; a comment without one is
// ErrNotCommand.
func ParseCommand(body string, goals []string) (Command, error) {
	line, ok := commandLine(body)
	if !ok {
		return Command{}, ErrNotCommand
	}
	if len(line) > maxCommandLine {
		return Command{}, errors.New("the /loop command line is too long")
	}
	words := strings.Fields(line)[1:]
	if len(words) == 0 {
		return Command{}, fmt.Errorf("/loop needs a command: %s", usage)
	}
	verb, args := Verb(words[0]), words[1:]
	switch verb {
	case Approve:
		return parseApprove(args, goals)
	case Reject:
		return parseReject(args, goals)
	case RunLoop, Stop, Status, Help, PushFix:
		if len(args) > 0 {
			return Command{}, fmt.Errorf("/loop %s takes no arguments", verb)
		}
		return Command{Verb: verb}, nil
	}
	return Command{}, fmt.Errorf("unknown /loop command %s: %s", Verbatim(words[0]), usage)
}

// commandVerb is the verb a comment's command names, when ParseCommand
// refused it for its arguments alone: approve or reject of a goal the
// caller could not name (it has no config), or "" for anything else.
func commandVerb(body string) Verb {
	line, _ := commandLine(body)
	words := strings.Fields(line)
	if len(words) < 2 || (Verb(words[1]) != Approve && Verb(words[1]) != Reject) {
		return ""
	}
	return Verb(words[1])
}

const usage = "/loop approve [goal], /loop reject [goal] <reason>, /loop run, /loop stop, /loop push, /loop status or /loop help"

func parseApprove(args, goals []string) (Command, error) {
	switch {
	case len(args) == 0:
		return Command{Verb: Approve}, nil
	case len(args) > 1:
		return Command{}, errors.New("/loop approve takes at most one goal")
	case !slices.Contains(goals, args[0]):
		return Command{}, fmt.Errorf("no goal %s: the goals are %s", Verbatim(args[0]), verbatimAll(goals))
	}
	return Command{Verb: Approve, Goal: args[0]}, nil
}

func parseReject(args, goals []string) (Command, error) {
	c := Command{Verb: Reject}
	if len(args) > 0 && slices.Contains(goals, args[0]) {
		c.Goal, args = args[0], args[1:]
	}
	c.Reason = strings.Join(args, " ")
	if c.Reason == "" {
		return Command{}, errors.New("/loop reject needs a reason, so the builders know what to change: /loop reject [goal] <reason>")
	}
	return c, nil
}
