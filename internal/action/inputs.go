package action

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Inputs are the action's inputs (action.yml), read once.
type Inputs struct {
	Mode               string // one of Modes
	Config             string // path of the loop config
	Token              string // github-token
	StateBranch        string
	StateRemote        string // "" = the repository itself on GITHUB_SERVER_URL
	RunID              string
	MaxIterations      int // 0 = the config's; otherwise it can only lower it
	UploadExport       bool
	FailOnUnsuccessful bool
	Comment            bool
	AllowHeadConfig    bool
	Bot                string // the login our comments are written as
	Deliver            string // one of Deliveries
	PushToken          string // pushes delivered work; "" = Token
}

// The ways of delivering certified work (the input deliver).
const (
	DeliverAuto        = "auto"
	DeliverPush        = "push"
	DeliverPullRequest = "pull-request"
	DeliverComment     = "comment"
	DeliverNone        = "none"
)

// The action's modes (the input mode): run handles the event — the loop,
// its commands, the gate — and authorize only decides whether a job that
// runs the pull request's code may follow (authorize.go).
const (
	ModeRun       = "run"
	ModeAuthorize = "authorize"
)

// Modes are the values the input mode takes.
var Modes = []string{ModeRun, ModeAuthorize}

// Deliveries are the values the input deliver takes.
var Deliveries = []string{DeliverAuto, DeliverPush, DeliverPullRequest, DeliverComment, DeliverNone}

// readInputs reads INPUT_* (hyphens kept) through go-githubactions.
func readInputs(a *githubactions.Action) (Inputs, error) {
	in := Inputs{
		Mode:        cmp.Or(strings.ToLower(a.GetInput("mode")), ModeRun),
		Config:      cmp.Or(a.GetInput("config"), ".github/loop.toml"),
		Token:       a.GetInput("github-token"),
		StateBranch: cmp.Or(a.GetInput("state-branch"), "loop-state"),
		StateRemote: a.GetInput("state-remote"),
		RunID:       a.GetInput("run-id"),
		Bot:         cmp.Or(a.GetInput("bot-login"), "github-actions[bot]"),
		Deliver:     cmp.Or(strings.ToLower(a.GetInput("deliver")), DeliverAuto),
		PushToken:   a.GetInput("push-token"),
	}
	if !slices.Contains(Modes, in.Mode) {
		return in, fmt.Errorf("input mode: %q is not one of %s", a.GetInput("mode"), strings.Join(Modes, ", "))
	}
	if !slices.Contains(Deliveries, in.Deliver) {
		return in, fmt.Errorf("input deliver: %q is not one of %s", a.GetInput("deliver"), strings.Join(Deliveries, ", "))
	}
	var err error
	if in.MaxIterations, err = intInput(a, "max-iterations"); err != nil {
		return in, err
	}
	for _, b := range []struct {
		name string
		def  bool
		dst  *bool
	}{
		{"upload-export", true, &in.UploadExport},
		{"fail-on-unsuccessful", true, &in.FailOnUnsuccessful},
		{"comment", true, &in.Comment},
		{"allow-head-config", false, &in.AllowHeadConfig},
	} {
		if *b.dst, err = boolInput(a, b.name, b.def); err != nil {
			return in, err
		}
	}
	return in, nil
}

func intInput(a *githubactions.Action, name string) (int, error) {
	v := a.GetInput(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("input %s: %q is not a whole number of 0 or more", name, v)
	}
	return n, nil
}

func boolInput(a *githubactions.Action, name string, def bool) (bool, error) {
	switch strings.ToLower(a.GetInput(name)) {
	case "":
		return def, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("input %s: %q is neither true nor false", name, a.GetInput(name))
}

// readContext reads the job's GITHUB_* variables and its event payload.
// The payload is read here rather than by go-githubactions, which takes a
// missing file for an empty event: each way the file can fail is said as
// it is.
func readContext(getenv func(string) string) (*githubactions.GitHubContext, error) {
	withoutEvent := func(k string) string {
		if k == "GITHUB_EVENT_PATH" {
			return ""
		}
		return getenv(k)
	}
	gctx, err := githubactions.New(githubactions.WithGetenv(withoutEvent)).Context()
	if err != nil {
		return nil, fmt.Errorf("read the job's GITHUB_* variables: %w", err)
	}
	if gctx.EventName == "" {
		return nil, errors.New("not in a GitHub Actions job: GITHUB_EVENT_NAME is unset")
	}
	gctx.EventPath = getenv("GITHUB_EVENT_PATH")
	if gctx.Event, err = readEvent(gctx.EventPath); err != nil {
		return nil, err
	}
	return gctx, nil
}

// readEvent reads the event payload, a JSON object.
func readEvent(path string) (map[string]any, error) {
	if path == "" {
		return nil, errors.New("GITHUB_EVENT_PATH is unset: the runner names the event's payload file in it")
	}
	b, err := os.ReadFile(path)
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) is missing: %w", path, fs.ErrNotExist)
	case errors.As(err, &pe):
		return nil, fmt.Errorf("read the event file %q (GITHUB_EVENT_PATH): %w", path, pe.Err)
	case err != nil:
		return nil, fmt.Errorf("read the event file %q (GITHUB_EVENT_PATH): %w", path, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) is not a JSON object: %w", path, err)
	}
	if ev == nil {
		return nil, fmt.Errorf("the event file %q (GITHUB_EVENT_PATH) holds no event", path)
	}
	return ev, nil
}
