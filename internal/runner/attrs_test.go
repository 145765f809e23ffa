package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/testing/gitfake"
	"github.com/loop-action/loop-action/internal/workspace"
)

// attrsLoop is the quickstart loop with one scripted builder: %s is its
// script (a TOML literal string).
const attrsLoop = `name = "attrs"
[stop]
max_iterations = 2
no_progress = 0
[providers.a]
command = ["sh", '%s']
[[node]]
name = "fixer"
provider = "a"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "sh test.sh"
`

// quickstartHarness is a harness on a copy of the quickstart project,
// whose builder is testdata/agents/<agent>.
func quickstartHarness(t *testing.T, agent string, env ...string) *harness {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("../../testdata/agents", agent))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, strings.Replace(attrsLoop, "%s", script, 1), nil)
	h.opts.Env = append(os.Environ(), env...)
	for _, name := range []string{"calc.sh", "test.sh"} {
		data, err := os.ReadFile(filepath.Join("../../examples/quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(h.root, name), string(data))
	}
	return h
}

// TestUnreproducibleBytesCertifyNothing: an agent that fixes calc.sh and
// adds a .gitattributes under which a checkout writes it otherwise (CRLF
// line endings; an expanded $Id$) passes the checks on bytes no checkout
// of the snapshot holds. The measurement is void: nothing is satisfied,
// the evidence line names the file and the attribute, the ledger records
// it, and the next prompt carries it.
func TestUnreproducibleBytesCertifyNothing(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		env  []string
		want string
	}{
		{"eol=crlf", nil,
			"measurement void: calc.sh: .gitattributes:1 sets eol=crlf (text); a checkout writes CRLF line endings where the workspace has LF: " +
				"the checks measured bytes no checkout reproduces; measured: `sh test.sh` exited 0"},
		{"ident", []string{"ATTRS=calc.sh ident", "HEADER=# $Id$"},
			"measurement void: calc.sh: .gitattributes:1 sets ident; a checkout writes \"$Id: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := quickstartHarness(t, "crlf.sh", tc.env...)
			out := h.run(context.Background())
			if out.Success {
				t.Fatal("the run succeeded on bytes no checkout reproduces")
			}
			if ev := lastEvidence(out.Verdicts); !strings.HasPrefix(ev, tc.want) {
				t.Errorf("evidence:\n%s\nwant:\n%s", ev, tc.want)
			}
			voids := 0
			for _, e := range h.events() {
				if e.Type == ledger.MeasurementVoid && e.Iteration > 0 {
					voids++
					if !strings.Contains(e.Reason, "calc.sh: .gitattributes:1 sets") {
						t.Errorf("the void's reason %q does not name calc.sh and the attribute", e.Reason)
					}
				}
			}
			if voids != 2 {
				t.Errorf("%d void measurements after a wave, want 2", voids)
			}
			history, err := os.ReadFile(h.history())
			if err != nil || !strings.Contains(string(history), tc.want[:60]) {
				t.Errorf("the history builders are pointed at lacks the void's reason (%v):\n%s", err, history)
			}
		})
	}
}

// history is the run's history file, which every prompt points at.
func (h *harness) history() string {
	return filepath.Join(h.root, ".loop", "history", filepath.FromSlash(h.opts.RunID)+".md")
}

// lastEvidence is the evidence line of the first check of the first goal.
func lastEvidence(vs []gate.Verdict) string {
	if len(vs) == 0 || len(vs[0].Checks) == 0 {
		return ""
	}
	return vs[0].Checks[0].Evidence
}

// TestCRLFRepositoryConverges: a repository whose .gitattributes has a
// checkout write *.bat with CRLF, checked out as git checks it out: the
// snapshot of the untouched checkout is the commit's tree, and a run
// whose builder writes its fix as a checkout would (CRLF) converges, its
// certified snapshot the tree git add -A records.
func TestCRLFRepositoryConverges(t *testing.T) {
	t.Parallel()
	cfg := strings.Replace(strings.Replace(attrsLoop, "%s", `printf "@echo fixed\r\n" >run.bat`, 1),
		`["sh", '`, `["sh", "-c", '`, 1)
	cfg = strings.Replace(cfg, `run = "sh test.sh"`, `run = "cmp -s run.bat want.bat"`, 1)
	h := newHarness(t, cfg, nil)
	h.opts.Env = os.Environ()
	mustWrite(t, filepath.Join(h.root, ".gitignore"), ".loop/\n")
	mustWrite(t, filepath.Join(h.root, ".gitattributes"), "*.bat text eol=crlf\n")
	mustWrite(t, filepath.Join(h.root, "run.bat"), "@echo broken\n")
	mustWrite(t, filepath.Join(h.root, "want.bat"), "@echo fixed\n")
	git := func(args ...string) string { return strings.TrimSpace(gitfake.Git(t, h.root, args...)) }
	git("init", "-q")
	git("add", "-A")
	git("commit", "-q", "-m", "base")
	for _, name := range []string{"run.bat", "want.bat"} { // as a checkout writes them
		if err := os.Remove(filepath.Join(h.root, name)); err != nil {
			t.Fatal(err)
		}
	}
	git("checkout", "--", ".")
	h.opts.Commit = git("rev-parse", "HEAD")
	if data, _ := os.ReadFile(filepath.Join(h.root, "want.bat")); string(data) != "@echo fixed\r\n" {
		t.Fatalf("the checkout wrote want.bat as %q", data)
	}
	if snap, tree := snapshotOf(t, h.root), git("rev-parse", "HEAD^{tree}"); snap != tree {
		t.Errorf("the checkout's snapshot is %s, the commit's tree %s", snap, tree)
	}
	out := h.run(context.Background())
	if !out.Success {
		t.Fatalf("the run did not converge: %s", lastEvidence(out.Verdicts))
	}
	cp, err := h.store.Load(context.Background(), h.opts.RunID)
	if err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	if tree := git("write-tree"); cp.Snapshot != tree {
		t.Errorf("certified %s, git add -A && git write-tree records %s", cp.Snapshot, tree)
	}
}

// snapshotOf is the snapshot of root, by the rules of a run without a
// known commit.
func snapshotOf(t *testing.T, root string) string {
	t.Helper()
	s, err := workspace.NewHasher(root).Certify(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}
