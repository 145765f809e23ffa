package action

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sethvargo/go-githubactions"
)

// The head and another commit, in the messages.
const (
	mmHead  = "49d4981000000000000000000000000000000001"
	mmOther = "92fd263000000000000000000000000000000002"
)

// TestHeadMismatchSaysWhatDiffers: each shape of a workspace that is not
// the head's tree gets its own message: the paths that differ (bounded,
// a tool's directory as one), the step that most likely wrote them, and
// the fix that matches first — the checkout step only when the checkout
// is another commit.
func TestHeadMismatchSaysWhatDiffers(t *testing.T) {
	t.Parallel()
	add := func(ps ...string) []Change {
		var out []Change
		for _, p := range ps {
			out = append(out, Change{Path: p, Kind: "added"})
		}
		return out
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("gen/file%02d.txt", i)
	}
	modules := add("node_modules/.package-lock.json", "node_modules/left-pad/index.js", "node_modules/left-pad/package.json", "package-lock.json")
	tests := []struct {
		name string
		co   Checkout
		want []string // parts of the message, in order
		not  []string // parts it must not hold
	}{
		{"a fresh Node repository after npm install", Checkout{Head: mmHead, Changes: modules}, []string{
			"a step before loop-action, most likely npm install, changed files in the checkout of the pull request's head 49d4981 that are not ignored",
			"(4 paths differ: added node_modules/ (3 files), added package-lock.json)",
			"so install without writing into the checkout (`npm ci` installs from a committed package-lock.json",
			"; or ignore the new files: in .gitignore, or from the workflow before loop-action: `printf '%s\\n' '/node_modules/' '/package-lock.json' >> .git/info/exclude`",
		}, []string{"ref: ${{", "another commit"}},
		{"npm install rewrote a tracked lockfile", Checkout{Head: mmHead, Changes: []Change{{Path: "package-lock.json", Kind: "modified"}}}, []string{
			"most likely npm install", "(1 path differs: modified package-lock.json)", "`npm ci`",
		}, []string{"ignore the new files", "ref: ${{"}},
		{"pip and python", Checkout{Head: mmHead, Changes: add("build/lib/demo/__init__.py", "demo.egg-info/PKG-INFO", "demo.egg-info/SOURCES.txt", "src/demo/__pycache__/x.cpython-312.pyc")}, []string{
			"most likely pip or python,", "added build/ (1 file), added demo.egg-info/ (2 files), added src/demo/__pycache__/ (1 file)",
			"'/build/' '/demo.egg-info/' '/src/demo/__pycache__/'",
		}, nil},
		{"cargo", Checkout{Head: mmHead, Changes: append(add("Cargo.lock"), add("target/debug/demo", "target/debug/demo.d")...)}, []string{
			"most likely cargo,", "added Cargo.lock, added target/ (2 files)",
		}, nil},
		{"go and yarn", Checkout{Head: mmHead, Changes: []Change{{Path: "go.sum", Kind: "modified"}, {Path: "web/yarn.lock", Kind: "added"}}}, []string{
			"most likely go or yarn,", "modified go.sum, added web/yarn.lock", "'/web/yarn.lock'",
		}, nil},
		{"pnpm", Checkout{Head: mmHead, Changes: add("pnpm-lock.yaml")}, []string{"most likely pnpm,"}, nil},
		{"an unknown step", Checkout{Head: mmHead, Changes: []Change{{Path: "src/gen.go", Kind: "modified"}, {Path: "src/old.go", Kind: "deleted"}}}, []string{
			"a step before loop-action changed files in the checkout", "modified src/gen.go, deleted src/old.go", "so install without writing into the checkout",
		}, []string{"most likely", "ignore the new files", "npm ci"}},
		{"another commit", Checkout{Head: mmOther, Changes: []Change{{Path: "MERGED.md", Kind: "added"}, {Path: "README.md", Kind: "modified"}}}, []string{
			"the checkout is commit 92fd263, not the pull request's head 49d4981 (2 paths differ: added MERGED.md, modified README.md); check out the head on the checkout step: `ref: ${{ github.event.pull_request.head.sha }}`",
		}, []string{"most likely", "exclude"}},
		{"another commit, which npm install ran on too", Checkout{Head: mmOther, Changes: modules}, []string{
			"the checkout is commit 92fd263", "check out the head",
		}, []string{"most likely"}},
		{"an unknown HEAD", Checkout{Changes: add("package-lock.json")}, []string{
			"the workspace is not the tree of the pull request's head 49d4981 (1 path differs: added package-lock.json): a step before loop-action wrote them, or the checkout is another commit",
			"`npm ci`", "'/package-lock.json'", "; or check out the head on the checkout step",
		}, nil},
		{"many paths", Checkout{Head: mmHead, Changes: add(many...)}, []string{
			"20 paths differ: added gen/file00.txt, added gen/file01.txt", "added gen/file07.txt, and 12 more)",
		}, []string{"gen/file08.txt"}},
		{"a path that would break the line", Checkout{Head: mmHead, Changes: add("it's", "x\n::error::forged", "y.txt")}, []string{
			`added "it's", added "x\n::error::forged", added y.txt`, `printf '%s\n' '/y.txt' >>`,
		}, []string{"\n::error::", "'/it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := headMismatch("the pull request's head", mmHead, checkoutFix, tt.co)
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Errorf("the message lacks %q (after offset %d):\n%s", w, at, got)
					continue
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("the message holds %q:\n%s", n, got)
				}
			}
			if strings.Contains(got, "\n") {
				t.Errorf("the message is not one line:\n%s", got)
			}
		})
	}
}

// TestCheckHeadNamesWhatAStepWrote: in a real checkout of the head, what
// npm install would leave — package-lock.json and node_modules/ — fails
// the check with the paths and the step; a checkout of another commit
// fails it with the checkout step's fix; an ignored node_modules/ passes.
func TestCheckHeadNamesWhatAStepWrote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := &world{t: t} // for its git
	git := func(args ...string) string { t.Helper(); return w.gitCmd(dir, args...) }
	git("init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "package.json"), `{"name":"demo","dependencies":{"left-pad":"1.3.0"}}`)
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n")
	git("add", "-A")
	git("commit", "-q", "-m", "first")
	first := git("rev-parse", "HEAD")
	writeFile(t, filepath.Join(dir, "README.md"), "# demo\n\nmore\n")
	git("commit", "-q", "-am", "second")
	head := git("rev-parse", "HEAD")

	j, _ := testJob(t, map[string]string{})
	j.a = githubactions.New(githubactions.WithGetenv(func(string) string { return "" }), githubactions.WithWriter(&strings.Builder{}))
	j.workspace, j.git = dir, DeliveryGit{}
	check := func() string {
		t.Helper()
		err := j.checkHead(t.Context(), head, "the pull request's head", checkoutFix)
		var usage *UsageError
		if err != nil && !errors.As(err, &usage) {
			t.Fatalf("checkHead: %v, want a usage error (exit 2)", err)
		}
		if err == nil {
			return ""
		}
		return err.Error()
	}
	if msg := check(); msg != "" {
		t.Fatalf("a clean checkout of the head: %s", msg)
	}

	writeFile(t, filepath.Join(dir, "package-lock.json"), "{}\n")
	writeFile(t, filepath.Join(dir, "node_modules/left-pad/index.js"), "module.exports = 1\n")
	writeFile(t, filepath.Join(dir, "node_modules/left-pad/package.json"), "{}\n")
	msg := check()
	for _, want := range []string{
		"most likely npm install,", "head " + head[:7], "3 paths differ: added node_modules/ (2 files), added package-lock.json",
		"`npm ci`", "'/node_modules/' '/package-lock.json'",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "ref: ${{") {
		t.Errorf("the message leads to the checkout step, which is right:\n%s", msg)
	}

	writeFile(t, filepath.Join(dir, ".git/info/exclude"), "/node_modules/\n/package-lock.json\n")
	if msg := check(); msg != "" {
		t.Errorf("with what npm wrote excluded, as the message says: %s", msg)
	}

	git("checkout", "-q", first)
	msg = check()
	if !strings.Contains(msg, "the checkout is commit "+first[:7]+", not the pull request's head "+head[:7]) ||
		!strings.Contains(msg, "modified README.md") || !strings.Contains(msg, "ref: ${{ github.event.pull_request.head.sha }}") {
		t.Errorf("a checkout of another commit:\n%s", msg)
	}
}
