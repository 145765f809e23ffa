package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/hook"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// hookCmd is `loop-action hook`: the git hooks (internal/hook).
type hookCmd struct {
	Install   hookInstallCmd   `cmd:"" help:"Install the git hook that gates what is pushed (or committed)."`
	Uninstall hookUninstallCmd `cmd:"" help:"Remove the hook install wrote and put back the one that was there before."`
	Status    hookStatusCmd    `cmd:"" help:"Say which hooks are installed, and how."`
	Run       hookRunCmd       `cmd:"" help:"Run a hook: what the installed hook calls."`
}

func (hookCmd) Help() string {
	return `A pre-push hook gates the commits being pushed, each in an isolated checkout
under .loop/hook with the config that commit holds; a pre-commit hook gates
the staged tree. The working tree, index, stash and branches are never
touched. See docs/cli.md "Git hooks".

Example:
  loop-action hook install
  loop-action hook status`
}

type hookInstallCmd struct {
	Hook  string `default:"pre-push" enum:"pre-push,pre-commit" help:"Which hook: pre-push (default) or pre-commit."`
	Mode  string `default:"gate" enum:"gate,loop" help:"When the gate fails: refuse (gate), or also run a bounded loop that leaves a fix on a new local branch (loop; pre-push only)."`
	Chain bool   `xor:"existing" help:"Keep a hook that is already there and run it first; the push fails when it fails."`
	Force bool   `xor:"existing" help:"Replace a hook that is already there, keeping it as <hook>.loop-action-backup."`
}

func (hookInstallCmd) Help() string {
	return `Writes a small sh script where git looks for the hook (core.hooksPath or the
git directory's hooks/) that runs 'loop-action hook run'. A hook that is
already there is never lost: without --chain or --force install refuses
(exit 2) and changes nothing.

Example:
  loop-action hook install --hook pre-commit --chain`
}

func (h *hookInstallCmd) Run(c *cli, d *deps) error {
	if h.Mode == "loop" && h.Hook != "pre-push" {
		return &usageError{errors.New("--mode loop is for the pre-push hook: a fix branch needs a commit to start from")}
	}
	repo, err := hook.Open(d.ctx, c.root(d), d.env.vars)
	if err != nil {
		return &usageError{err}
	}
	bin, err := os.Executable()
	if err != nil {
		bin = ""
	}
	cfg := c.Config
	if cfg != "" && !filepath.IsAbs(cfg) {
		cfg = filepath.ToSlash(cfg)
	}
	msg, err := repo.Install(d.ctx, hook.InstallOptions{Hook: h.Hook, Mode: h.Mode, Chain: h.Chain, Force: h.Force, Binary: bin, Config: cfg})
	var exists *hook.ExistsError
	if errors.As(err, &exists) {
		return &usageError{err}
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(d.stdout, msg)
	return err
}

type hookUninstallCmd struct {
	Hook string `default:"pre-push" enum:"pre-push,pre-commit" help:"Which hook: pre-push (default) or pre-commit."`
}

func (h *hookUninstallCmd) Run(c *cli, d *deps) error {
	repo, err := hook.Open(d.ctx, c.root(d), d.env.vars)
	if err != nil {
		return &usageError{err}
	}
	msg, err := repo.Uninstall(d.ctx, h.Hook)
	if err != nil {
		return &usageError{err}
	}
	_, err = fmt.Fprintln(d.stdout, msg)
	return err
}

type hookStatusCmd struct {
	JSON bool `help:"Print the status as JSON."`
}

func (h *hookStatusCmd) Run(c *cli, d *deps) error {
	repo, err := hook.Open(d.ctx, c.root(d), d.env.vars)
	if err != nil {
		return &usageError{err}
	}
	st, err := repo.Status(d.ctx)
	if err != nil {
		return err
	}
	if h.JSON {
		return writeJSON(d, st)
	}
	p := &printer{w: d.stdout}
	for _, s := range st {
		switch s.State {
		case "installed":
			p.f("%-10s installed, %s mode: %s\n", s.Hook, s.Mode, s.Path)
		case "other":
			p.f("%-10s a hook loop-action did not install: %s\n", s.Hook, s.Path)
		default:
			p.f("%-10s not installed (%s)\n", s.Hook, s.Path)
		}
		if s.Chained != "" {
			p.f("%-10s runs first: %s\n", "", s.Chained)
		}
		if s.Backup != "" {
			p.f("%-10s kept, not run: %s\n", "", s.Backup)
		}
	}
	return p.err
}

// printResult prints one target's ruling: the goal table with the failing
// evidence, or one line for a cached pass. All of it goes to stderr: git
// passes pre-push's stdout through but sends pre-commit's to stderr; a
// hook's report belongs with git's own.
func printResult(w io.Writer, r hook.Result) error {
	p := &printer{w: w}
	if r.Cached {
		p.f("loop-action hook: %s passes: tree %s was certified under the same config, checks and environment (from the cache; nothing measured)\n",
			r.Target.Name(), r.Target.Tree[:7])
		return p.err
	}
	p.f("%s:\n", r.Target.Name())
	if p.err == nil {
		p.err = gateView{Success: r.Success, AwaitingReview: gate.AwaitingReview(r.Config, r.Verdicts), Goals: r.Verdicts}.write(w)
	}
	if len(r.Changed) > 0 {
		p.f("loop-action hook: %s\n", r.ChangedNote())
	}
	return p.err
}

type hookRunCmd struct {
	Hook    string   `arg:"" enum:"pre-push,pre-commit" help:"The hook git is running: pre-push or pre-commit."`
	Args    []string `arg:"" optional:"" help:"What git passes the hook (pre-push: the remote's name and URL)."`
	NoCache bool     `help:"Measure even a tree the verdict cache certified (or LOOP_HOOK=nocache)."`
	Mode    string   `default:"gate" enum:"gate,loop" help:"When the gate fails: refuse (gate), or also run a bounded loop that leaves a fix on a new local branch (loop; pre-push only)."`
}

func (hookRunCmd) Help() string {
	return `What the installed hook runs. pre-push reads git's "<local ref> <local sha>
<remote ref> <remote sha>" lines on stdin and gates every commit pushed
(deletions are skipped); pre-commit gates the staged tree. Each is checked
out in .loop/hook/checkout and measured there with the config it holds,
unless the verdict cache already certified its tree. Exits 1, refusing the
push or commit, when a blocking goal fails.

LOOP_HOOK=skip skips the hook; LOOP_HOOK=nocache measures even a cached tree.

Example:
  echo "refs/heads/main $(git rev-parse HEAD) refs/heads/main $(git rev-parse @{u})" | loop-action hook run pre-push origin`
}

func (h *hookRunCmd) Run(c *cli, d *deps) error {
	if skip, err := h.settings(d); skip || err != nil {
		return err
	}
	var input []byte
	if h.Hook == "pre-push" {
		var err error
		if input, err = io.ReadAll(io.LimitReader(d.stdin, 4<<20)); err != nil {
			return fmt.Errorf("read the pre-push input: %w", err)
		}
	}
	repo, err := hook.Open(d.ctx, c.root(d), d.env.vars)
	if err != nil {
		return &usageError{err}
	}
	if err := repo.RunChained(d.ctx, h.Hook, h.Args, input, d.env.vars, c.root(d), d.stdout, d.stderr); err != nil {
		fmt.Fprintf(d.stderr, "loop-action hook: %v\n", err)
		return exitCodeError(exitUnsuccessful)
	}
	targets, err := h.targets(c, d, repo, input)
	if err != nil {
		return err
	}
	g := &hook.Gate{Repo: repo, Env: d.env.vars, Config: c.Config, Version: buildVersion(), NoCache: h.NoCache, Log: d.stderr}
	failed := 0
	for _, t := range targets {
		if !h.gate(d, g, t) {
			failed++
		}
	}
	if failed > 0 {
		h.refuse(c, d, failed, len(targets))
		return exitCodeError(exitUnsuccessful)
	}
	return nil
}

// settings applies LOOP_HOOK and checks the flags; skip says that
// LOOP_HOOK=skip asked for nothing to be done.
func (h *hookRunCmd) settings(d *deps) (skip bool, err error) {
	switch v, _ := d.env.lookup("LOOP_HOOK"); v {
	case "skip":
		_, err := fmt.Fprintln(d.stderr, "loop-action hook: skipped (LOOP_HOOK=skip)")
		return true, err
	case "nocache":
		h.NoCache = true
	case "":
	default:
		return false, &usageError{fmt.Errorf("LOOP_HOOK=%q: use skip or nocache", v)}
	}
	if h.Mode == "loop" && h.Hook != "pre-push" {
		return false, &usageError{errors.New("--mode loop is for the pre-push hook")}
	}
	return false, nil
}

// targets are what the hook gates: the pushed commits or the staged tree.
func (h *hookRunCmd) targets(c *cli, d *deps, repo *hook.Repo, input []byte) ([]hook.Target, error) {
	if h.Hook == "pre-commit" {
		t, err := repo.StagedTarget(d.ctx, d.env.vars, c.root(d))
		return []hook.Target{t}, err
	}
	if len(bytes.TrimSpace(input)) == 0 {
		// Under the pre-commit framework, which read git's input itself.
		if ts, ok, err := repo.FrameworkTargets(d.ctx, d.env.vars); ok {
			return ts, err
		}
	}
	return repo.PushTargets(d.ctx, bytes.NewReader(input))
}

// gate rules on one target and prints the ruling; a config or git
// problem fails it, with the reason.
func (h *hookRunCmd) gate(d *deps, g *hook.Gate, t hook.Target) bool {
	res, err := g.Check(d.ctx, t)
	var cfgErr *loop.ConfigError
	switch {
	case errors.As(err, &cfgErr):
		fmt.Fprintf(d.stderr, "loop-action hook: %s: its loop config has errors:\n%s", t.Name(), cfgErr.Diagnostics.String())
		return false
	case err != nil:
		fmt.Fprintf(d.stderr, "loop-action hook: %s: %v\n", t.Name(), err)
		return false
	}
	if err := printResult(d.stderr, res); err != nil {
		fmt.Fprintf(d.stderr, "loop-action hook: %v\n", err)
		return false
	}
	if !res.Success && h.Mode == "loop" && len(res.Changed) == 0 {
		h.loop(d, g, t)
	}
	return res.Success
}

// refuse says why the push or commit is refused and what to do.
func (h *hookRunCmd) refuse(c *cli, d *deps, failed, total int) {
	what, skip := "push", "git push --no-verify"
	if h.Hook == "pre-commit" {
		what, skip = "commit", "git commit --no-verify"
	}
	run := "loop-action run"
	if c.Config != "" {
		run = "loop-action -c " + c.Config + " run"
	}
	fmt.Fprintf(d.stderr, "loop-action hook: the %s is refused: %d of %d gated trees do not pass the gate.\n", what, failed, total)
	fmt.Fprintf(d.stderr, "  Fix and commit, or let the loop work on it: %s\n", run)
	if h.Hook == "pre-push" && h.Mode == "gate" {
		fmt.Fprintln(d.stderr, "  Or let this hook run the loop on a refused commit: loop-action hook install --mode loop")
	}
	fmt.Fprintf(d.stderr, "  Skip the hook once: %s (or LOOP_HOOK=skip)\n", skip)
}

// loop runs --mode loop on a target the gate refused and says where the
// fix is, or why there is none. The push is refused either way.
func (h *hookRunCmd) loop(d *deps, g *hook.Gate, t hook.Target) {
	fmt.Fprintf(d.stderr, "loop-action hook: running the loop on %s in .loop/hook/checkout (budgets: [hook])\n", t.Name())
	fix, ok, err := g.Loop(d.ctx, t, newProgress(d.stderr, d.color(), d.now))
	switch {
	case err != nil:
		fmt.Fprintf(d.stderr, "loop-action hook: the loop on %s: %v\n", t.Name(), err)
	case !ok:
		fmt.Fprintf(d.stderr, "loop-action hook: the loop did not fix %s: %s after %s%s\n",
			t.Name(), fix.Outcome.Status, phrase.Plural(fix.Outcome.Iteration, "iteration", "iterations"), detail(fix.Outcome.Detail))
	default:
		remote := "origin"
		if len(h.Args) > 0 {
			remote = h.Args[0]
		}
		fmt.Fprintf(d.stderr, "loop-action hook: the loop fixed %s in %s: commit %s on the new branch %s (its parent is %s). Nothing was pushed.\n",
			t.Name(), phrase.Plural(fix.Outcome.Iteration, "iteration", "iterations"), phrase.Short(fix.Commit), fix.Branch, phrase.Short(t.Commit))
		fmt.Fprintf(d.stderr, "  Review it: git show %s\n", fix.Branch)
		fmt.Fprintf(d.stderr, "  Take it:   git merge --ff-only %s   (then push again)\n", fix.Branch)
		fmt.Fprintf(d.stderr, "  Or push it as it is: git push %s %s:%s\n", remote, fix.Branch, t.Refs[0])
	}
}

func detail(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}
