package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/alecthomas/kong"

	"github.com/loop-action/loop-action/internal/action"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Exit codes (docs/cli.md). exitCode maps errors to them.
const (
	exitSuccess        = 0 // success
	exitUnsuccessful   = 1 // finished without success
	exitUsage          = 2 // usage or config error
	exitInternal       = 3 // internal error
	exitAwaitingReview = 4 // paused, awaiting review
)

// env is what the CLI reads from its environment, read once in main.
type env struct {
	lookup func(string) (string, bool)
	vars   []string // the whole environment, which agents and checks inherit
	wd     string
}

// deps are what every command gets: the streams and the environment.
type deps struct {
	ctx    context.Context
	env    env
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	now    func() time.Time
}

// cli is the command line. Each command is a struct with a Run method;
// the commands that open a run's store embed storeFlags.
type cli struct {
	Config string `short:"c" placeholder:"FILE" help:"Loop config (default: .github/loop.toml, then loop.toml, in the loop root)."`
	Root   string `short:"C" placeholder:"DIR" default:"." help:"Loop root: run as if started in DIR. Relative --config paths are read from it."`

	Validate validateCmd `cmd:"" help:"Check a loop config and report every problem with file:line:col."`
	Plan     planCmd     `cmd:"" help:"Show what a run would do: waves, stages, providers, budgets and a cost ceiling. Runs nothing."`
	Gate     gateCmd     `cmd:"" help:"Measure the workspace now and rule on every goal. Exit 0 iff overall success."`
	Run      runCmd      `cmd:"" help:"Run the loop (or resume it) until success, a stop rule, or a pause for review."`
	Resume   resumeCmd   `cmd:"" help:"Continue a run from its checkpoint (the latest when no --run-id)."`
	Status   statusCmd   `cmd:"" help:"Show where a run stands: status, iterations, spend, goals, pending reviews."`
	Review   reviewCmd   `cmd:"" help:"Approve or reject a goal's pending review, bound to the snapshot under review."`
	Ledger   ledgerCmd   `cmd:"" help:"Print a run's log, or its typed events with --json."`
	Export   exportCmd   `cmd:"" help:"Write the success export of a successful run."`
	Replay   replayCmd   `cmd:"" help:"Replay a recorded run with a config, calling no agent; compare the verdicts."`
	Init     initCmd     `cmd:"" help:"Write a starter .github/loop.toml and workflow for this repository."`
	Apply    applyCmd    `cmd:"" help:"Bring a run's workspace from the state branch into the working tree as uncommitted changes."`
	Memory   memoryCmd   `cmd:"" help:"List what earlier runs left in memory, with a digest per goal; forget entries."`
	Schema   schemaCmd   `cmd:"" help:"Print the JSON Schema of the loop config."`
	Hook     hookCmd     `cmd:"" help:"Install, inspect and run the git hooks that gate what is pushed or committed, locally."`
	Action   actionCmd   `cmd:"" help:"Run as the GitHub Action (the container's entrypoint; see docs/action.md)."`
	Version  versionCmd  `cmd:"" help:"Print the version."`
}

// exitCodeError ends the program with a code and no further message: the
// command has already said what happened.
type exitCodeError int

func (e exitCodeError) Error() string { return fmt.Sprintf("exit %d", int(e)) }

// kongExit unwinds a kong exit (after --help, or a usage error) to run.
type kongExit int

func run(ctx context.Context, args []string, e env, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	var c cli
	defer func() {
		if r := recover(); r != nil {
			k, ok := r.(kongExit)
			if !ok {
				panic(r)
			}
			code = int(k)
			if code == 1 { // kong's exit code for usage errors
				code = exitUsage
			}
		}
	}()
	parser, err := kong.New(&c,
		kong.Name("loop-action"),
		kong.Description("Run agent loops on a repository: agents work, the runner measures, a deterministic gate decides, hard budgets stop."),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(kongExit(code)) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	)
	if err != nil {
		fmt.Fprintf(stderr, "loop-action: %v\n", err)
		return exitInternal
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		fmt.Fprintf(stderr, "loop-action: %v\n", err)
		fmt.Fprintln(stderr, "run 'loop-action --help' for usage")
		return exitUsage
	}
	err = kctx.Run(&c, &deps{ctx: ctx, env: e, stdin: stdin, stdout: stdout, stderr: stderr, now: time.Now})
	var (
		quiet    exitCodeError
		reported reportedError
	)
	if err != nil && !errors.As(err, &quiet) && !errors.As(err, &reported) {
		fmt.Fprintln(stderr, err) // unless the command has already said it
	}
	return exitCode(err)
}

// reportedError is an error the command has already shown (the action's
// go to the job log as annotations): run maps it to its exit code without
// printing it again.
type reportedError struct{ err error }

func (e reportedError) Error() string { return e.err.Error() }
func (e reportedError) Unwrap() error { return e.err }

// exitCode maps an error to the program's exit code, for every command and
// the action alike; it is the only place that does.
func exitCode(err error) int {
	var (
		code     exitCodeError
		cfgErr   *loop.ConfigError
		usage    *usageError
		jobSetup *action.UsageError
	)
	switch {
	case err == nil:
		return exitSuccess
	case errors.As(err, &code):
		return int(code)
	case errors.As(err, &cfgErr), errors.As(err, &usage), errors.As(err, &jobSetup), errors.Is(err, state.ErrRefusedBranch):
		return exitUsage
	case errors.Is(err, action.ErrUnsuccessful):
		return exitUnsuccessful
	}
	return exitInternal
}

// usageError is a mistake in how the CLI was called, such as a config that
// cannot be found.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// root returns the loop root as an absolute path.
func (c *cli) root(d *deps) string {
	if filepath.IsAbs(c.Root) {
		return filepath.Clean(c.Root)
	}
	return filepath.Join(d.env.wd, c.Root)
}

// storeFlags say where runs are checkpointed: the flags of exactly the
// commands that open a run's store.
type storeFlags struct {
	State  string `placeholder:"STORE" default:"dir:.loop/state" help:"Where runs are checkpointed: dir:PATH (relative to the loop root) or branch:NAME (a git branch of --remote)."`
	Remote string `placeholder:"REMOTE" default:"origin" help:"For --state branch:NAME: a git remote of the loop root's repository, or a URL."`
	Token  string `placeholder:"TOKEN" help:"For --state branch:NAME over https: the token (default: $GITHUB_TOKEN)."`
}

// store opens the --state store. A branch: store reads the workspace into
// checkpoints (and restores it) as k says: the loop root's git settings
// and the config's run.max_file_size (see checkoutOf); a command that
// saves no workspace gives the zero value.
func (f *storeFlags) store(cl *cli, d *deps, k workspace.Checkout) (state.Store, error) {
	token := f.Token
	if token == "" {
		token, _ = d.env.lookup("GITHUB_TOKEN")
	}
	s, err := state.OpenStore(d.ctx, f.State, cl.root(d), state.RemoteOptions{Remote: f.Remote, Token: token, Checkout: k})
	if err != nil {
		return nil, &usageError{fmt.Errorf("--state: %w", err)}
	}
	return s, nil
}

// checkout reads the loop root's git settings (core.autocrlf, core.eol)
// once, for every snapshot and restore the command makes: a checkout on
// Windows has core.autocrlf=true in the system's config, and its files
// CRLF line endings.
func (c *cli) checkout(d *deps) (workspace.Checkout, error) {
	return runner.ReadCheckout(d.ctx, c.root(d), d.env.vars)
}

// checkoutOf is k with cfg's run.max_file_size: how a run of cfg reads the
// loop root.
func checkoutOf(k workspace.Checkout, cfg *loop.Config) workspace.Checkout {
	k.MaxFileSize = cfg.Run.MaxFileSize.Bytes
	return k
}

// openSession holds a run through a runner session: the CLI's one way to
// lock, load, amend or run it. A run another process holds is a usage
// error.
func openSession(d *deps, opts runner.Options) (*runner.Session, error) {
	s, err := runner.Open(d.ctx, opts)
	if errors.Is(err, runner.ErrInUse) {
		return nil, &usageError{err}
	}
	return s, err
}

// load finds and loads the loop config. Diagnostics name the file as the
// user did, or relative to the loop root when found by default.
func (c *cli) load(d *deps) (*loop.Config, error) {
	root := c.root(d)
	name := c.Config
	if name == "" {
		found, err := loop.Find(root)
		if err != nil {
			return nil, &usageError{err}
		}
		name = found
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	src, err := loop.ReadSource(path)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the message names the file as the user did
	}
	if err != nil {
		return nil, &usageError{fmt.Errorf("read config %q: %w", name, err)}
	}
	return loop.Parse(name, src)
}
