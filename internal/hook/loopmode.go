package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/runner"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/workspace"
)

// Fix is what a loop in the isolated checkout left: one commit, on a new
// local branch, whose parent is the commit that failed the gate.
type Fix struct {
	Branch  string
	Commit  string
	Outcome runner.Outcome
}

// Loop runs the target's loop, bounded by [hook]'s budgets, in the
// isolated checkout of t.Commit, with its state under .loop/hook/state
// (fresh each time). When the gate the hook applies then holds on what
// the loop left, Loop commits it and points a new branch loop/<name>/<ref>
// at the commit. It never pushes, and never touches the user's working
// tree, index, HEAD, stash or refs but for creating that branch: the
// agents' git writes the checkout's own repository, and what they change
// of the user's (walking up to it) is put back and refuses the fix
// (guardOutside). ok is false when the loop did not fix it (the outcome
// says why).
func (g *Gate) Loop(ctx context.Context, t Target, progress ledger.Progress) (fix Fix, ok bool, err error) {
	lc, err := g.loopConfig(ctx, t)
	if err != nil {
		return Fix{}, false, err
	}
	cfg, gated, name, src := lc.cfg, lc.gated, lc.name, lc.src
	release, err := g.Repo.lock()
	if err != nil {
		return Fix{}, false, err
	}
	defer release()
	dir, err := g.Repo.checkout(ctx, t.Commit, cfg.Hook.CleanIgnored)
	if err != nil {
		return Fix{}, false, err
	}
	k, err := runner.ReadCheckout(ctx, dir, CleanEnv(g.Env))
	if err != nil {
		return Fix{}, false, fmt.Errorf("isolated checkout: %w", err)
	}
	check, err := g.Repo.guardOutside(ctx, CleanEnv(g.Env))
	if err != nil {
		return Fix{}, false, err
	}
	fix.Outcome, err = g.run(ctx, cfg, dir, t, k, progress)
	if err := errors.Join(err, check()); err != nil {
		return fix, false, errors.Join(err, g.Repo.forget(dir, t.Commit))
	}
	fix.Commit, err = g.Repo.commitFix(ctx, dir, cfg.Name, t)
	if ok = err == nil && fix.Commit != ""; ok {
		ok, err = g.certify(ctx, gated, dir, fix.Commit, name, src, k)
	}
	if err := errors.Join(err, g.Repo.forget(dir, t.Commit)); err != nil || !ok {
		return fix, false, err
	}
	fix.Branch, err = g.Repo.fixBranch(ctx, cfg.Name, t, fix.Commit)
	return fix, err == nil, err
}

// forget drops what the loop's agents, and the checks that ran their code
// on the fix, could have left in the checkout's repository for the next
// checkout there to trust: its index above all (skip-worktree, or forged
// stat data, would keep a file of theirs in place of the next commit's),
// and the settled mark. The next checkout writes every file.
func (r *Repo) forget(dir, commit string) error {
	err := r.resetGit(dir, commit, false)
	if rerr := os.Remove(filepath.Join(filepath.Dir(dir), "settled")); rerr != nil && !os.IsNotExist(rerr) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return fmt.Errorf("isolated checkout: %w", err)
	}
	return nil
}

// certify measures the fix, committed and checked out in dir, with the
// gate the hook applies, and remembers its tree when the gate holds and
// the checks left the checkout as committed: pushing the fix then
// answers from the cache.
func (g *Gate) certify(ctx context.Context, gated *loop.Config, dir, commit, name string, src []byte, k workspace.Checkout) (bool, error) {
	_, verdicts, err := runner.Measure(ctx, gated, dir, CleanEnv(g.Env), k)
	if err != nil || !gate.OverallSuccess(gated, verdicts) {
		return false, err
	}
	if changed, err := g.Repo.settle(ctx, dir, commit); err != nil || len(changed) > 0 {
		return false, err
	}
	tree, err := g.Repo.coGit(ctx, dir, nil, "rev-parse", "HEAD^{tree}")
	if err != nil {
		return false, err
	}
	tree = strings.TrimSpace(tree)
	key := cacheKey(g.Version, tree, name, src, gated, g.Env)
	if err := g.Repo.remember(key, tree, name, verdicts); err != nil {
		fmt.Fprintf(g.Log, "loop-action hook: %v (the fix stands; it is not cached)\n", err)
	}
	return true, nil
}

// loopConfig is the target's config twice: whole, with [hook]'s budgets
// in place of [stop]'s, for the loop; and as the hook gates it.
type loopConfig struct {
	cfg, gated *loop.Config
	name       string
	src        []byte
}

func (g *Gate) loopConfig(ctx context.Context, t Target) (loopConfig, error) {
	name, src, err := g.Repo.configAt(ctx, t.Tree, g.Config)
	if err != nil {
		return loopConfig{}, err
	}
	cfg, err := loop.Parse(name, src)
	if err != nil {
		return loopConfig{}, err
	}
	gated, err := parseConfig(name, src)
	if err != nil {
		return loopConfig{}, err
	}
	env := CleanEnv(g.Env)
	if ds := cfg.CheckEnv(environ.Env(env).Lookup, loop.Error); ds.HasErrors() {
		return loopConfig{}, &loop.ConfigError{Diagnostics: ds}
	}
	iterations, wall, cost := cfg.Hook.Budgets()
	cfg.Stop.MaxIterations, cfg.Stop.MaxWallClock, cfg.Stop.MaxCostUSD = iterations, loop.D(wall), cost
	return loopConfig{cfg: cfg, gated: gated, name: name, src: src}, nil
}

// run runs the loop in dir, whose git settings are k, with a store of its
// own, started afresh.
func (g *Gate) run(ctx context.Context, cfg *loop.Config, dir string, t Target, k workspace.Checkout, progress ledger.Progress) (runner.Outcome, error) {
	stateDir, err := g.Repo.ownDir("state")
	if err != nil {
		return runner.Outcome{}, err
	}
	if err := os.RemoveAll(stateDir); err != nil {
		return runner.Outcome{}, fmt.Errorf("loop state: %w", err)
	}
	store, err := state.OpenDir(stateDir)
	if err != nil {
		return runner.Outcome{}, err
	}
	defer store.Close()
	s, err := runner.Open(ctx, runner.Options{
		Config: cfg, Root: dir, RunID: cfg.Name + "/hook", Store: store, Env: CleanEnv(g.Env),
		Commit: t.Commit, Checkout: k, Version: g.Version, Progress: progress, Log: g.Log,
	})
	if err != nil {
		return runner.Outcome{}, err
	}
	defer s.Close()
	return s.Run(ctx)
}

// commitFix commits what the loop left in the checkout dir (but
// loop-action's own .loop) as one commit whose parent is the target's,
// and returns it; "" when nothing changed. Nothing the agents left in the
// checkout's repository counts — their commits, branches, HEAD, index:
// it is written afresh (resetGit), and the index built again from the
// target's tree and the files as they are (an agent's index could say a
// changed file is not). The objects go straight into the user's
// repository (GIT_OBJECT_DIRECTORY), which the checkout's borrows from,
// and the commit is made there, with the user's identity (signed when
// commit.gpgSign says so, as git commit would); no ref moves.
// The checkout is then at the fix: HEAD, and an index of its tree.
func (r *Repo) commitFix(ctx context.Context, dir, name string, t Target) (string, error) {
	if err := r.resetGit(dir, t.Commit, false); err != nil {
		return "", fmt.Errorf("commit the fix: the checkout's repository: %w", err)
	}
	env := []string{"GIT_OBJECT_DIRECTORY=" + filepath.Join(r.common, "objects")}
	// .loop is ignored in the checkout (info/exclude), so git add -A
	// leaves what is untracked there; reset puts back what is tracked.
	for _, args := range [][]string{{"read-tree", t.Commit}, {"add", "-A"}, {"reset", "-q", t.Commit, "--", ":(top).loop"}} {
		if _, err := r.coGit(ctx, dir, env, args...); err != nil {
			return "", fmt.Errorf("commit the fix: %w", err)
		}
	}
	out, err := r.coGit(ctx, dir, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("commit the fix: %w", err)
	}
	tree := strings.TrimSpace(out)
	if tree == t.Tree {
		return "", nil // the loop changed nothing: no fix
	}
	msg := fmt.Sprintf("loop %s: fix %s\n\nMade by `loop-action hook run --mode loop` on %s; the gate holds on this tree.", name, phrase.Short(t.Commit), t.Commit)
	args := []string{"commit-tree", tree, "-p", t.Commit, "-m", msg}
	// commit-tree, unlike git commit, does not read commit.gpgSign: asked
	// the way git's own scripts ask it.
	if sign, _ := r.git(ctx, "config", "--bool", "commit.gpgSign"); strings.TrimSpace(sign) == "true" {
		args = append(args, "-S")
	}
	if out, err = r.git(ctx, args...); err != nil {
		return "", fmt.Errorf("commit the fix: %w", err)
	}
	commit := strings.TrimSpace(out)
	if err := os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte(commit+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("commit the fix: %w", err)
	}
	return commit, nil
}

// fixBranch points a new branch loop/<name>/<ref> at commit, or, when
// that exists, loop/<name>/<ref>-2 and so on: a branch that is there is
// never moved.
func (r *Repo) fixBranch(ctx context.Context, name string, t Target, commit string) (string, error) {
	ref := t.Refs[0]
	for _, p := range []string{"refs/heads/", "refs/tags/"} {
		ref = strings.TrimPrefix(ref, p)
	}
	base := "loop/" + name + "/" + ref
	if _, err := r.git(ctx, "check-ref-format", "--branch", base); err != nil {
		base = "loop/" + name + "/" + phrase.Short(t.Commit)
	}
	zero := strings.Repeat("0", len(commit))
	for i := 1; i <= 20; i++ {
		branch := base
		if i > 1 {
			branch = fmt.Sprintf("%s-%d", base, i)
		}
		if _, err := r.git(ctx, "update-ref", "-m", "loop-action hook: fix", "refs/heads/"+branch, commit, zero); err == nil {
			return branch, nil
		}
	}
	return "", fmt.Errorf("no free branch name for the fix: %s and %s-2…-20 exist; the fix is commit %s", base, base, commit)
}
