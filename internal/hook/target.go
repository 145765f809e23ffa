package hook

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/loop-action/loop-action/internal/environ"
	"github.com/loop-action/loop-action/internal/phrase"
)

// Target is one tree a hook gates: a pushed commit, or the staged tree
// wrapped in a commit whose parent is HEAD.
type Target struct {
	Refs   []string // the local refs pushed at Commit, or "the staged tree"
	Commit string
	Tree   string
}

// Name is how messages name the target.
func (t Target) Name() string {
	return fmt.Sprintf("%s (%s)", strings.Join(t.Refs, ", "), phrase.Short(t.Commit))
}

// maxPushInput bounds what pre-push reads from git: a line per ref.
const maxPushInput = 4 << 20

var (
	objectRE = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)
	zeroRE   = regexp.MustCompile(`^0+$`)
)

// PushTargets reads git's pre-push lines, "<local ref> <local sha>
// <remote ref> <remote sha>", and returns each distinct commit pushed, in
// order; deletions are skipped. A pushed tag is gated at the commit it
// points to; one that points at no commit is an error.
func (r *Repo) PushTargets(ctx context.Context, in io.Reader) ([]Target, error) {
	sc := bufio.NewScanner(io.LimitReader(in, maxPushInput))
	var (
		order []string
		refs  = map[string][]string{}
	)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 || !objectRE.MatchString(f[1]) || !objectRE.MatchString(f[3]) {
			return nil, fmt.Errorf("pre-push input line %d is not \"<local ref> <local sha> <remote ref> <remote sha>\": %q", n, sc.Text())
		}
		if zeroRE.MatchString(f[1]) {
			continue // a deletion: nothing is pushed
		}
		if _, ok := refs[f[1]]; !ok {
			order = append(order, f[1])
		}
		refs[f[1]] = append(refs[f[1]], f[0])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the pre-push input: %w", err)
	}
	return r.peel(ctx, order, refs)
}

// peel resolves each object to its commit and tree, with one git.
func (r *Repo) peel(ctx context.Context, order []string, refs map[string][]string) ([]Target, error) {
	if len(order) == 0 {
		return nil, nil
	}
	args := []string{"rev-parse"}
	for _, id := range order {
		args = append(args, id+"^{commit}", id+"^{tree}")
	}
	out, err := r.git(ctx, args...)
	lines := strings.Fields(out)
	if err != nil || len(lines) != 2*len(order) {
		return nil, fmt.Errorf("pushed objects that are not commits cannot be gated (%s): %v", strings.Join(order, ", "), err)
	}
	ts := make([]Target, len(order))
	for i, id := range order {
		ts[i] = Target{Refs: refs[id], Commit: lines[2*i], Tree: lines[2*i+1]}
	}
	return ts, nil
}

// StagedTarget is the tree the index holds, for pre-commit: the index git
// names in GIT_INDEX_FILE (relative to wd, the hook's directory), or the
// working tree's own. It is read from a copy, so the user's index is never
// written, not even its cache; the tree is wrapped in a commit (parent
// HEAD, fixed identity and date, no ref) so it can be checked out.
func (r *Repo) StagedTarget(ctx context.Context, env []string, wd string) (Target, error) {
	index, ok := environ.Env(env).Lookup("GIT_INDEX_FILE")
	if !ok || index == "" {
		var err error
		if index, err = r.gitPath(ctx, "index"); err != nil {
			return Target{}, err
		}
	} else if !filepath.IsAbs(index) {
		index = filepath.Join(wd, index)
	}
	dir, err := r.ownDir()
	if err != nil {
		return Target{}, err
	}
	copyPath := filepath.Join(dir, "index")
	if err := copyIndex(index, copyPath); err != nil {
		return Target{}, err
	}
	out, err := git(ctx, r.Top, append(r.env, "GIT_INDEX_FILE="+copyPath), nil, "--git-dir="+r.GitDir, "--work-tree="+r.Top, "write-tree")
	if err != nil {
		return Target{}, fmt.Errorf("read the staged tree: %w", err)
	}
	tree := strings.TrimSpace(out)
	args := []string{"commit-tree", "-m", "loop-action hook: the staged tree", tree}
	if head, err := r.git(ctx, "rev-parse", "--verify", "-q", "HEAD^{commit}"); err == nil {
		args = append(args, "-p", strings.TrimSpace(head))
	}
	const who, when = "loop-action hook", "@0 +0000"
	out, err = git(ctx, r.Top, append(r.env, "GIT_AUTHOR_NAME="+who, "GIT_AUTHOR_EMAIL=hook@loop-action.invalid", "GIT_AUTHOR_DATE="+when,
		"GIT_COMMITTER_NAME="+who, "GIT_COMMITTER_EMAIL=hook@loop-action.invalid", "GIT_COMMITTER_DATE="+when),
		nil, append([]string{"--git-dir=" + r.GitDir, "--work-tree=" + r.Top}, args...)...)
	if err != nil {
		return Target{}, fmt.Errorf("wrap the staged tree in a commit: %w", err)
	}
	return Target{Refs: []string{"the staged tree"}, Commit: strings.TrimSpace(out), Tree: tree}, nil
}

// copyIndex copies the index at from to to; a missing index is an empty
// one (a repository where nothing was ever added).
func copyIndex(from, to string) error {
	b, err := os.ReadFile(from)
	if os.IsNotExist(err) {
		_ = os.Remove(to)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the index: %w", err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		return fmt.Errorf("copy the index: %w", err)
	}
	return nil
}

// FrameworkTargets is what the pre-commit framework (pre-commit.com)
// hands a pre-push hook instead of git's input, which it reads itself:
// the pushed commit in PRE_COMMIT_TO_REF, or only the ref in
// PRE_COMMIT_LOCAL_BRANCH when the push carries a new root. ok is false
// when neither is set: not run by the framework.
func (r *Repo) FrameworkTargets(ctx context.Context, env []string) (ts []Target, ok bool, err error) {
	to, _ := environ.Env(env).Lookup("PRE_COMMIT_TO_REF")
	ref, _ := environ.Env(env).Lookup("PRE_COMMIT_LOCAL_BRANCH")
	if to == "" && ref == "" {
		return nil, false, nil
	}
	name := cmp.Or(ref, to)
	obj := cmp.Or(to, ref)
	if strings.HasPrefix(obj, "-") {
		return nil, true, fmt.Errorf("PRE_COMMIT_TO_REF/PRE_COMMIT_LOCAL_BRANCH %q is no revision", obj)
	}
	ts, err = r.peel(ctx, []string{obj}, map[string][]string{obj: {name}})
	return ts, true, err
}
