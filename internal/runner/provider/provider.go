// Package provider calls agents: it turns a provider of the loop config into
// a child process, hands it the prompt, and reads back its answer and what
// the call cost.
//
// It owns the mechanics of one agent call: the argv template and its
// placeholders, the prompt on stdin, as an argument or in a file, the LOOP_*
// environment, the timeout, and the usage parsers (claude-json, codex-jsonl,
// aider-text, gemini-json, opencode-jsonl, regex:<re>, or an estimate).
//
// It must never run a shell, read the process environment (the runner hands
// it the complete base environment), print anything, or judge an answer: the
// answer is model output, which only the gate's parsers of independent judges
// may read as evidence. Errors carry at most one line of the agent's output,
// which may contain anything the agent printed, even a secret from its
// environment: callers mask the values of the provider's env variables
// before showing an error anywhere.
package provider

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
)

// StdoutBytes is how much of an agent's stdout is kept for parsing and for
// the answer: the last 8 MiB.
const StdoutBytes = 8 << 20

// Request is one call of an agent.
type Request struct {
	RunID, Node, Root, HistoryFile string
	Iteration                      int
	Prompt                         string
	// Tier says which of the provider's tiers' arguments to use; "" means
	// standard.
	Tier string
	// TempDir is where {prompt_file} files are written ("" means the
	// system's temporary directory); the caller removes it. Dispatch removes
	// its own file when the call ends.
	TempDir string
	// Env is the complete base environment of the agent; Dispatch adds the
	// LOOP_* variables, replacing any of the same name.
	Env []string
}

// Usage is what one call cost.
type Usage struct {
	// Input, Output and Total are tokens; Total is Input+Output when the
	// agent reports only those. None is ever negative.
	Input, Output, Total int64
	// CostUSD is what the call cost, valid when CostKnown; never negative.
	CostUSD float64
	// Estimated reports that the agent reported no tokens, so they were
	// estimated as (prompt + stdout bytes) / 4, rounded up.
	Estimated bool
	// CostKnown reports that CostUSD comes from the agent's report or from
	// tokens (reported or estimated) × the provider's price.
	CostKnown bool
}

// Response is what came back from one call.
type Response struct {
	// Answer is the agent's final text: the "result" of a claude-json
	// report, the last agent message of a codex-jsonl stream, the response
	// of a gemini-json object, the last text of an opencode-jsonl stream,
	// and otherwise (or when the parser found none) the whole stdout kept.
	Answer string
	// Usage is filled in whenever the agent ran, even when the call failed.
	Usage Usage
	// Result is how the process ended.
	Result process.Result
	// Err is non-nil when the call failed: the agent could not start, timed
	// out, was cancelled, exited non-zero or was killed, or reported an
	// error itself. It says which, with the last line of the agent's output.
	Err error
}

// Command is a provider of type "command": an agent CLI run as a child
// process without a shell.
type Command struct {
	Name string // the provider's name in the config
	Spec loop.Provider
}

// Prompt modes (loop.Provider.Prompt).
const (
	promptStdin = "stdin"
	promptArg   = "arg"
	promptFile  = "file"
)

// Dispatch calls the agent once and waits for it. The call is bounded by
// the provider's timeout (loop.DefaultProviderTimeout when unset) and by
// ctx; either ends it by killing the agent's whole process group.
func (c Command) Dispatch(ctx context.Context, req Request) Response {
	read, err := c.usageReader()
	if err != nil {
		return notStarted(fmt.Errorf("agent %q could not start: %w", c.Name, err))
	}
	auth, err := c.authFailure()
	if err != nil {
		return notStarted(fmt.Errorf("agent %q could not start: %w", c.Name, err))
	}
	spec, cleanup, err := c.processSpec(req)
	if err != nil {
		return notStarted(fmt.Errorf("agent %q could not start: %w", c.Name, err))
	}
	defer cleanup()
	call, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	w := newWatcher(cancel, auth, c.Spec.IdleTimeout.Duration)
	if auth != nil || c.Spec.IdleTimeout.Duration > 0 {
		spec.StdoutTee = w
	}
	res := process.Run(call, spec)
	w.stop()
	return c.response(ctx, watchCause(ctx, call, c.Spec.IdleTimeout.Duration), req, res, read)
}

// authFailure compiles the provider's auth_failure, nil when it has none.
func (c Command) authFailure() (*regexp.Regexp, error) {
	if c.Spec.AuthFailure == "" {
		return nil, nil
	}
	re, err := regexp.Compile(c.Spec.AuthFailure)
	if err != nil {
		return nil, fmt.Errorf("auth_failure: %w", err)
	}
	return re, nil
}

// notStarted is the Response of a call that never started a process.
func notStarted(err error) Response {
	return Response{Result: process.Result{ExitCode: -1, StartErr: err}, Err: err}
}

// response reads the answer and the usage from a finished run; stopped
// says why the watcher ended it, "" when it did not.
func (c Command) response(ctx context.Context, stopped string, req Request, res process.Result, read usageReader) Response {
	out := Response{Result: res}
	if res.StartErr != nil {
		out.Err = c.failure(ctx, res, report{})
		return out
	}
	rep := read(res.Stdout, res.Tail)
	// A refused key is the CLI's own report that no model answered, unless
	// it reported tokens all the same.
	rep.Unstarted = rep.Unstarted || strings.Contains(stopped, "auth_failure")
	out.Answer = rep.Answer
	if !rep.HasAnswer && stopped == "" {
		out.Answer = string(res.Stdout)
	}
	out.Usage = usageOf(req.Prompt, res.OutputBytes, rep, c.Spec.Price)
	if stopped != "" {
		out.Err = fmt.Errorf("agent %q stopped after %s: it %s%s", c.Name, roundDuration(res.Duration), stopped,
			suffix(cmp.Or(rep.Failure, lastLine(res.Tail))))
		return out
	}
	out.Err = c.failure(ctx, res, rep)
	if out.Err == nil && res.StdoutTruncated && c.parses() && !rep.found() {
		out.Err = fmt.Errorf("agent %q printed more than %d MiB; usage = %q found nothing in the last %d MiB kept",
			c.Name, StdoutBytes>>20, c.Spec.Usage, StdoutBytes>>20)
	}
	return out
}

// processSpec builds the child process for req. cleanup removes the prompt
// file, if one was written; it is never nil.
func (c Command) processSpec(req Request) (process.Spec, func(), error) {
	if c.Spec.Type != "" && c.Spec.Type != "command" {
		return process.Spec{}, func() {}, fmt.Errorf("provider type %q is not supported", c.Spec.Type)
	}
	tmp, err := privateTemp(req.TempDir)
	if err != nil {
		return process.Spec{}, func() {}, err
	}
	spec := process.Spec{
		Dir:         req.Root,
		Env:         agentEnv(req, c.Spec.EnvList(), tmp),
		Timeout:     c.timeout(),
		StdoutBytes: StdoutBytes,
	}
	promptPath, cleanup := "", func() { releaseTemp(tmp) }
	switch c.promptMode() {
	case promptStdin:
		spec.Stdin = strings.NewReader(req.Prompt)
	case promptFile:
		path, err := writePromptFile(req.TempDir, req.Prompt)
		if err != nil {
			cleanup()
			return process.Spec{}, func() {}, err
		}
		promptPath, cleanup = path, func() { removeQuietly(path); releaseTemp(tmp) }
	}
	spec.Argv = c.argv(req, promptPath)
	return spec, cleanup, nil
}

// argv is the provider's command for req's tier with the placeholders of the
// prompt mode filled in. The prompt is never re-expanded: a "{prompt}" inside
// the prompt stays as written.
func (c Command) argv(req Request, promptPath string) []string {
	tier := req.Tier
	if tier == "" {
		tier = loop.TierStandard
	}
	argv := c.Spec.Argv(tier)
	for i, a := range argv {
		switch c.promptMode() {
		case promptArg:
			argv[i] = strings.ReplaceAll(a, "{prompt}", req.Prompt)
		case promptFile:
			argv[i] = strings.ReplaceAll(a, "{prompt_file}", promptPath)
		}
	}
	return argv
}

// promptMode is the provider's prompt mode, stdin when unset.
func (c Command) promptMode() string {
	if c.Spec.Prompt == "" {
		return promptStdin
	}
	return c.Spec.Prompt
}

// timeout is the limit on one call.
func (c Command) timeout() time.Duration {
	if c.Spec.Timeout.Duration > 0 {
		return c.Spec.Timeout.Duration
	}
	return loop.DefaultProviderTimeout
}

// loopVars are the variables Dispatch sets for every agent, and tempVars
// those that name its private temporary directory.
var (
	loopVars = []string{"LOOP_RUN_ID", "LOOP_ITERATION", "LOOP_NODE", "LOOP_ROOT", "LOOP_HISTORY_FILE"}
	tempVars = []string{"TMPDIR", "TMP", "TEMP"}
)

// agentEnv is req.Env without the variables set here, followed by the
// provider's env table (set, NAME=value), the call's private temporary
// directory tmp in TMPDIR, TMP and TEMP, and the LOOP_* variables.
func agentEnv(req Request, set []string, tmp string) []string {
	values := []string{req.RunID, strconv.Itoa(req.Iteration), req.Node, req.Root, req.HistoryFile}
	mine := append(slices.Clone(loopVars), tempVars...)
	for name := range environ.Env(set).All() {
		mine = append(mine, name)
	}
	env := append(environ.Env(req.Env).Without(mine...), set...)
	for _, name := range tempVars {
		env = append(env, name+"="+tmp)
	}
	for i, name := range loopVars {
		env = append(env, name+"="+values[i])
	}
	return env
}
