package action

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/loop-action/loop-action/internal/phrase"
	"github.com/loop-action/loop-action/internal/workspace"
)

// checkoutFix is how a workflow checks out a pull request's head rather
// than the merge commit actions/checkout takes by default.
const checkoutFix = "check out the head on the checkout step: `ref: ${{ github.event.pull_request.head.sha }}` " +
	"(on issue_comment: `ref: refs/pull/${{ github.event.issue.number }}/head`)"

// branchCheckoutFix is the same for a branch's run.
const branchCheckoutFix = "check out the commit the workflow runs on (actions/checkout's default, without `ref:`), and change no tracked file before loop-action"

// checkHead makes sure the workspace is the tree of head, the commit the
// run is about, before anything runs: the status rule compares the tree
// the gate measures with a commit's tree, and a delivered commit's parent
// is head. A pull request's job that checked out GitHub's merge commit
// (actions/checkout's default, refs/pull/N/merge), or the default branch
// on issue_comment, fails here with the fix (exit 2), as does a workspace
// that an earlier step changed; the error names what differs (see
// headMismatch). Without git nothing can be compared, and nothing is
// certified on a commit later either.
func (j *job) checkHead(ctx context.Context, head, what, fix string) error {
	if j.git == nil {
		j.a.Warningf("this loop-action was built without git delivery: no commit can be certified, so loop/<name> is never success and nothing is delivered")
		return nil
	}
	tree, err := j.git.CommitSnapshot(j.workspace, head)
	if err != nil {
		return badSetup(fmt.Errorf("the checkout does not hold %s %s, which the loop measures and delivers onto (%s); %s",
			what, phrase.Short(head), j.mask(err.Error()), fix))
	}
	now, err := workspace.NewHasherWith(j.workspace, j.checkout).Snapshot(ctx)
	if err != nil {
		return fmt.Errorf("hash the workspace: %w", err)
	}
	if string(now) == tree {
		return nil
	}
	co, err := j.git.CheckoutChanges(j.workspace, head, j.checkout)
	if err != nil {
		return badSetup(fmt.Errorf("the workspace is not the tree of %s %s (snapshot %s, not %s), and what differs could not be told (%s): "+
			"the checkout is another commit, or a step before loop-action changed files that are not ignored; %s",
			what, phrase.Short(head), now.Short(), phrase.Short(tree), j.mask(err.Error()), fix))
	}
	return badSetup(fmt.Errorf("%s", headMismatch(what, head, fix, co)))
}

// headMismatch says how the workspace differs from head's tree, leading
// with the fix that matches. When the repository has another commit
// checked out, the checkout step is wrong. When it has head, a step
// before loop-action wrote what differs: the paths say which step most
// likely did (writers), and the fix is to install without writing them
// or to ignore them. The paths are named, the first maxNamed of them with
// a count of the rest, a tool's directory (node_modules/, …) counting as
// one.
func headMismatch(what, head, fix string, co Checkout) string {
	named := namePaths(co.Changes)
	switch {
	case co.Head != "" && co.Head != head:
		return fmt.Sprintf("the checkout is commit %s, not %s %s (%s); %s",
			phrase.Short(co.Head), what, phrase.Short(head), named, fix)
	case len(co.Changes) == 0: // the snapshots differ, yet no path does
		return fmt.Sprintf("the workspace is not the tree of %s %s, though no path differs: the checkout is another commit, or a step before loop-action changed it; %s",
			what, phrase.Short(head), fix)
	}
	fixes := "install without writing into the checkout" + npmHint(co.Changes)
	if args := excludeArgs(co.Changes); args != "" {
		fixes += "; or ignore the new files: in .gitignore, or from the workflow before loop-action: `printf '%s\\n' " + args + " >> .git/info/exclude`"
	}
	if co.Head == "" { // the repository's HEAD is unknown: either may be the cause
		return fmt.Sprintf("the workspace is not the tree of %s %s (%s): a step before loop-action wrote them, or the checkout is another commit; %s; or %s",
			what, phrase.Short(head), named, fixes, fix)
	}
	who := "a step before loop-action"
	if w := writers(co.Changes); w != "" {
		who += ", most likely " + w + ","
	}
	return fmt.Sprintf("%s changed files in the checkout of %s %s that are not ignored (%s): the status rule compares the workspace with that commit's tree, so %s",
		who, what, phrase.Short(head), named, fixes)
}

// maxNamed bounds the paths an error names.
const maxNamed = 8

// namePaths names the changes, "added package-lock.json, added
// node_modules/ (1532 files), … and 3 more": one entry per path, or per
// tool directory (see toolDir).
func namePaths(cs []Change) string {
	type entry struct {
		kind, path string
		n          int
	}
	var es []entry
	at := map[string]int{}
	for _, c := range cs {
		key := c.Path
		if d := toolDir(c.Path); d != "" {
			key = d
		}
		if i, ok := at[key]; ok {
			es[i].n++
			if es[i].kind != c.Kind {
				es[i].kind = "changed"
			}
			continue
		}
		at[key] = len(es)
		es = append(es, entry{kind: kindWord(c.Kind), path: key, n: 1})
	}
	parts := make([]string, 0, min(len(es), maxNamed)+1)
	for i, e := range es {
		if i == maxNamed {
			parts = append(parts, fmt.Sprintf("and %d more", len(es)-maxNamed))
			break
		}
		p := e.kind + " " + logPath(e.path)
		if strings.HasSuffix(e.path, "/") {
			p += " (" + phrase.Plural(e.n, "file", "files") + ")"
		}
		parts = append(parts, p)
	}
	return phrase.Plural(len(cs), "path differs: ", "paths differ: ") + strings.Join(parts, ", ")
}

func kindWord(k string) string {
	if k == "type" || k == "mode" {
		return "modified"
	}
	return k
}

// logPath shows a path in a log line: as it is when it is plain, quoted
// otherwise, so that no path can break the line or pass for another.
func logPath(p string) string {
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._-/+@", r)) {
			return strconv.Quote(p)
		}
	}
	return p
}

// A tool is a step that writes into a checkout, and what it writes: file
// names (lockfiles, anywhere) and directory names (at any depth).
type tool struct {
	name  string
	files []string
	dirs  []string // "*.egg-info" matches by suffix
}

var tools = []tool{
	{name: "npm install", files: []string{"package-lock.json"}, dirs: []string{"node_modules"}},
	{name: "yarn", files: []string{"yarn.lock"}},
	{name: "pnpm", files: []string{"pnpm-lock.yaml"}},
	{name: "pip or python", dirs: []string{"*.egg-info", "build", "__pycache__"}},
	{name: "cargo", files: []string{"Cargo.lock"}, dirs: []string{"target"}},
	{name: "go", files: []string{"go.sum"}},
}

// toolOf is the tool that most likely wrote rel, or nil.
func toolOf(rel string) *tool {
	segs := strings.Split(rel, "/")
	for i := range tools {
		t := &tools[i]
		for _, f := range t.files {
			if segs[len(segs)-1] == f {
				return t
			}
		}
		for _, s := range segs[:len(segs)-1] {
			if t.dirMatches(s) {
				return t
			}
		}
	}
	return nil
}

func (t *tool) dirMatches(seg string) bool {
	for _, d := range t.dirs {
		if ok, _ := path.Match(d, seg); ok {
			return true
		}
	}
	return false
}

// toolDir is the tool directory rel is in, with a trailing slash
// ("node_modules/", "src/pkg/__pycache__/"), or "".
func toolDir(rel string) string {
	segs := strings.Split(rel, "/")
	for i, s := range segs[:len(segs)-1] {
		for j := range tools {
			if tools[j].dirMatches(s) {
				return strings.Join(segs[:i+1], "/") + "/"
			}
		}
	}
	return ""
}

// writers names the tools that most likely wrote the changes, in the
// order their paths come, or "".
func writers(cs []Change) string {
	var names []string
	for _, c := range cs {
		if t := toolOf(c.Path); t != nil && !slices.Contains(names, t.name) {
			names = append(names, t.name)
		}
	}
	return strings.Join(names, " or ")
}

// npmHint is how npm installs without writing into the checkout, when npm
// wrote its lockfile there.
func npmHint(cs []Change) string {
	for _, c := range cs {
		if path.Base(c.Path) == "package-lock.json" {
			return " (`npm ci` installs from a committed package-lock.json and never changes it: commit the one npm install wrote)"
		}
	}
	return ""
}

// excludeArgs are the new files to exclude, as shell words: the tool
// directories and the other paths added (at most maxNamed, only plain
// ones: see logPath), anchored at the root; "" when there are none (an
// ignore rule cannot hide a tracked file).
func excludeArgs(cs []Change) string {
	var out []string
	for _, c := range cs {
		p := "/" + c.Path
		if d := toolDir(c.Path); d != "" {
			p = "/" + d
		}
		if c.Kind == "added" && logPath(p) == p && !slices.Contains(out, p) && len(out) < maxNamed {
			out = append(out, p)
		}
	}
	for i, p := range out {
		out[i] = "'" + p + "'"
	}
	return strings.Join(out, " ")
}

// credentialLimit bounds how much of a git config file is read.
const credentialLimit = 1 << 20

// persistedCredentials says where actions/checkout left a token for git
// in the workspace's repository — its default, persist-credentials: an
// http.<url>.extraheader "AUTHORIZATION: basic …" in .git/config (v4), or
// in a file under the runner's temporary directory that .git/config
// includes (v6) — or "" when it left none. Every agent and check can read
// it there, and it is usually the very token this action is given.
func persistedCredentials(ws string) string {
	gitDir := filepath.Join(ws, ".git")
	cfg := readConfig(gitDir, "config")
	if hasAuthorization(cfg) {
		return ".git/config"
	}
	for _, inc := range includes(cfg) {
		dir, name := filepath.Split(inc)
		if !filepath.IsAbs(inc) {
			dir, name = filepath.Split(filepath.Join(gitDir, inc))
		}
		if hasAuthorization(readConfig(dir, name)) {
			return "a file that .git/config includes"
		}
	}
	return ""
}

// readConfig reads a git config file without following it into a FIFO;
// nil when it cannot be read.
func readConfig(dir, name string) []byte {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer r.Close()
	b, _ := workspace.ReadFile(r, name, credentialLimit)
	return b
}

// hasAuthorization reports whether a git config sets an extraheader that
// carries an Authorization header.
func hasAuthorization(cfg []byte) bool {
	for line := range strings.Lines(string(cfg)) {
		k, v, ok := strings.Cut(strings.ToLower(strings.TrimSpace(line)), "=")
		if ok && strings.TrimSpace(k) == "extraheader" && strings.Contains(v, "authorization:") {
			return true
		}
	}
	return false
}

// includes lists the path values of a git config's include and includeIf
// sections.
func includes(cfg []byte) []string {
	var out []string
	inInclude := false
	sc := bufio.NewScanner(bytes.NewReader(cfg))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section := strings.ToLower(strings.TrimLeft(line, "[ \t"))
			inInclude = strings.HasPrefix(section, "include")
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && inInclude && strings.EqualFold(strings.TrimSpace(k), "path") {
			out = append(out, strings.Trim(strings.TrimSpace(v), `"`))
		}
	}
	return out
}

// warnCredentials warns when actions/checkout persisted its token where
// agents can read it.
func (j *job) warnCredentials() {
	if where := persistedCredentials(j.workspace); where != "" {
		j.a.Warningf("actions/checkout left its token in %s (persist-credentials), where every agent and check can read it "+
			"and use it against this repository; set `persist-credentials: false` on the checkout step", where)
	}
}
