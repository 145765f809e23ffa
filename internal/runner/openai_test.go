package runner

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

const apiKey = "sk-live-9f8e7d6c5b4a3210"

const openaiLoop = `name = "api"
objective = "Make add.txt add."
[stop]
max_iterations = 1
no_progress = 0
[context]
files = ["*.txt"]
[protect]
paths = ["locked/**"]
[providers.api]
type = "openai"
base_url = "%URL%"
model = "gpt-test"
api_key_env = "TEST_OPENAI_KEY"
price = { input = 2, output = 8 }
[[node]]
name = "fixer"
provider = "api"
goals = ["sum"]
[[goal]]
name = "sum"
  [[goal.check]]
  type = "test"
  run = "grep -q 'a + b' add.txt"
`

const fix = "The check wants a sum.\n\nadd.txt\n```\n<<<<<<< SEARCH\nreturn a - b\n=======\nreturn a + b\n>>>>>>> REPLACE\n```\n"

// apiHarness is a run of src against srv, in a root holding add.txt, a
// locked/ file, a .git/config and a link "out" to a directory outside.
func apiHarness(t *testing.T, src string, srv *modelfake.Server) (*harness, string) {
	t.Helper()
	h := newHarness(t, strings.ReplaceAll(src, "%URL%", srv.BaseURL()), nil)
	outside := t.TempDir()
	for name, content := range map[string]string{"add.txt": "return a - b\n", "locked/a.txt": "locked\n", ".git/config": "[core]\n"} {
		p := filepath.Join(h.root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h.root, "out")); err != nil {
		t.Fatal(err)
	}
	h.opts.Env = []string{"PATH=" + os.Getenv("PATH"), "TEST_OPENAI_KEY=" + apiKey}
	h.opts.Log = &bytes.Buffer{}
	return h, outside
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noKey fails when the key appears in any file below dir (ledger,
// checkpoint, history, export…) or in the run's log.
func noKey(t *testing.T, h *harness) {
	t.Helper()
	err := filepath.WalkDir(h.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, []byte(apiKey)) {
			t.Errorf("%s holds the API key", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h.opts.Log.(*bytes.Buffer).String(), apiKey) {
		t.Error("the log holds the API key")
	}
}

func TestOpenAIBuilderFixesTheCheck(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 1000, 50))
	h, _ := apiHarness(t, openaiLoop, srv)
	out := h.run(context.Background())
	if !out.Success || out.Iteration != 1 {
		t.Fatalf("outcome %s at %d (%s); want success at 1", out.Status, out.Iteration, out.Detail)
	}
	if got := read(t, filepath.Join(h.root, "add.txt")); got != "return a + b\n" {
		t.Errorf("add.txt = %q", got)
	}
	want := state.Spend{Tokens: 1050, CostUSD: (1000*2 + 50*8) / 1e6}
	got := out.Spend
	got.WallClock = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spend (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	user := message(reqs[0].Body, 1)
	for _, want := range []string{"Make add.txt add.", "grep -q 'a + b' add.txt", "add.txt\n````\nreturn a - b\n````", "(at most 262144 bytes are shown)"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, user)
		}
	}
	if strings.Contains(user, "\nlocked\n") {
		t.Errorf("the prompt shows a file no pattern names")
	}
	if strings.Contains(user, h.root) {
		t.Errorf("the prompt sent to the API names a path of this machine")
	}
	noKey(t, h)
}

func message(body map[string]any, i int) string {
	msgs, _ := body["messages"].([]any)
	if i >= len(msgs) {
		return ""
	}
	m, _ := msgs[i].(map[string]any)
	s, _ := m["content"].(string)
	return s
}

func TestOpenAIRetriesA429AndConverges(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Error(429, "slow down", map[string]string{"Retry-After": "1"}), modelfake.Completion(fix, 10, 5))
	h, _ := apiHarness(t, openaiLoop, srv)
	out := h.run(context.Background())
	if !out.Success || len(srv.Requests()) != 2 {
		t.Fatalf("outcome %s (%s) after %d requests; want success after 2", out.Status, out.Detail, len(srv.Requests()))
	}
}

func TestOpenAIWrongKeyEndsTheRun(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t)
	srv.Otherwise = func(modelfake.Request) modelfake.Reply {
		return modelfake.Error(401, "Incorrect API key provided: "+apiKey, nil)
	}
	src := strings.Replace(openaiLoop, "max_iterations = 1", "max_iterations = 5", 1)
	h, _ := apiHarness(t, src, srv)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out := h.run(ctx)
	if out.Success || out.Status != state.Escalated || len(srv.Requests()) != 1 {
		t.Fatalf("outcome %s after %d requests; want escalated after 1", out.Status, len(srv.Requests()))
	}
	if want := `provider "api": ` + srv.BaseURL() + ` refused the API key in TEST_OPENAI_KEY (401 Unauthorized)`; !strings.Contains(out.Detail, want) {
		t.Errorf("detail %q, want it to contain %q", out.Detail, want)
	}
	noKey(t, h)
}

// TestOpenAIKeyEchoedByTheServerIsMasked: an endpoint that quotes the key
// in an error message does not get it into the ledger or the checkpoint.
func TestOpenAIKeyEchoedByTheServerIsMasked(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Error(400, "bad request from key "+apiKey, nil))
	h, _ := apiHarness(t, openaiLoop, srv)
	out := h.run(context.Background())
	if out.Success {
		t.Fatal("a failed call succeeded")
	}
	if n := count(h.events(), ledger.NodeFailed, "fixer"); n != 1 {
		t.Fatalf("%d node failures, want 1", n)
	}
	noKey(t, h)
}

const judgedLoop = openaiLoop + `  [[goal.check]]
  type = "judge"
  node = "review"
[providers.judge]
type = "openai"
base_url = "%URL%"
model = "gpt-judge"
api_key_env = "TEST_OPENAI_KEY"
[[node]]
name = "review"
role = "judge"
provider = "judge"
after = ["fixer"]
`

// TestOpenAIJudgeWithoutAVerdictIsAskedOnceMore: the same single retry as
// for command judges.
func TestOpenAIJudgeWithoutAVerdictIsAskedOnceMore(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 10, 5), modelfake.Completion("Looks right to me.", 10, 5),
		modelfake.Completion(`{"verdict":"pass","reason":"a sum","evidence":"add.txt: return a + b","score":9}`, 10, 5))
	h, _ := apiHarness(t, judgedLoop, srv)
	out := h.run(context.Background())
	if !out.Success || len(srv.Requests()) != 3 || count(h.events(), ledger.JudgeRetried, "review") != 1 {
		t.Fatalf("outcome %s after %d requests; want success after a builder call and two judge calls", out.Status, len(srv.Requests()))
	}
	if out.Spend.Tokens != 45 {
		t.Errorf("spend %d tokens, want 45 (both judge calls count)", out.Spend.Tokens)
	}
}

func TestOpenAIJudgeFailKeepsTheGoalUnmet(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 10, 5),
		modelfake.Completion(`{"verdict":"fail","reason":"the sum is untested","evidence":"no test file"}`, 10, 5))
	h, _ := apiHarness(t, judgedLoop, srv)
	out := h.run(context.Background())
	if out.Success || out.Verdicts[0].Satisfied {
		t.Fatalf("outcome %s, goal satisfied %v: a failing judge must keep it unmet", out.Status, out.Verdicts[0].Satisfied)
	}
	if ev := out.Verdicts[0].Checks[1].Evidence; !strings.Contains(ev, "the sum is untested") {
		t.Errorf("judge evidence %q", ev)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[1].Body["model"] != "gpt-judge" || reqs[1].Body["response_format"] == nil {
		t.Fatalf("want a builder request, then a JSON-mode judge request for gpt-judge")
	}
}

func TestOpenAIHostileEditsAreRefused(t *testing.T) {
	t.Parallel()
	block := func(path, search, replace string) string {
		return path + "\n<<<<<<< SEARCH\n" + search + "=======\n" + replace + ">>>>>>> REPLACE\n"
	}
	tests := []struct{ name, reply, reason string }{
		{"outside the root", block("../x", "", "pwned\n"), `edit of "../x" refused: the path leads outside the loop root`},
		{"into the state", block(".loop/state/test/run/checkpoint.json", "", "{}\n"), `edit of ".loop/state/test/run/checkpoint.json" refused: the path is inside .loop`},
		{"into .git", block(".git/config", "[core]\n", "[core]\n\tfsmonitor = touch pwned\n"), `edit of ".git/config" refused: the path is inside a .git directory`},
		{"through a linked directory", block("out/x", "outside\n", "pwned\n"), `edit of "out/x" refused: its parent "out" is a symbolic link`},
		{"a protected file", block("locked/a.txt", "locked\n", "open\n"), `edit of "locked/a.txt" refused: it is protected`},
		{"the loop config", block("loop.toml", "", "name = \"x\"\n"), `edit of "loop.toml" refused: it is protected`},
		{"half-matching", block("add.txt", "return a - b\n", "return a + b\n") + block("add.txt", "no such line\n", "x\n"),
			`edit of "add.txt" failed: block 2: its SEARCH text does not match the file exactly`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := modelfake.Replies(t, modelfake.Completion(tt.reply, 10, 5))
			h, outside := apiHarness(t, openaiLoop, srv)
			out := h.run(context.Background())
			if out.Success {
				t.Fatal("the run succeeded")
			}
			for path, want := range map[string]string{"add.txt": "return a - b\n", "locked/a.txt": "locked\n", ".git/config": "[core]\n"} {
				if got := read(t, filepath.Join(h.root, path)); got != want {
					t.Errorf("%s = %q, want it untouched", path, got)
				}
			}
			if got := read(t, filepath.Join(outside, "x")); got != "outside\n" {
				t.Errorf("the file outside the root = %q", got)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(h.root), "x")); err == nil {
				t.Error("a file was written beside the root")
			}
			found := false
			for _, e := range h.events() {
				found = found || e.Type == ledger.NodeFailed && e.Node == "fixer" && strings.Contains(e.Reason, tt.reason)
			}
			if !found {
				t.Errorf("no node_failed event of fixer saying %q", tt.reason)
			}
		})
	}
}

// TestOpenAIBuilderLearnsWhyItsEditsFailed: a reply whose SEARCH does not
// match changes nothing, and the next prompt says why; the corrected reply
// then converges.
func TestOpenAIBuilderLearnsWhyItsEditsFailed(t *testing.T) {
	t.Parallel()
	wrong := "add.txt\n<<<<<<< SEARCH\nreturn a-b\n=======\nreturn a+b\n>>>>>>> REPLACE\n"
	srv := modelfake.Replies(t, modelfake.Completion(wrong, 10, 5), modelfake.Completion(fix, 10, 5))
	h, _ := apiHarness(t, strings.Replace(openaiLoop, "max_iterations = 1", "max_iterations = 3", 1), srv)
	out := h.run(context.Background())
	if !out.Success || out.Iteration != 2 {
		t.Fatalf("outcome %s at %d (%s); want success at 2", out.Status, out.Iteration, out.Detail)
	}
	reqs := srv.Requests()
	want := `Nothing of your last reply was applied: none of its 1 edits applied: edit of "add.txt" failed: block 1: its SEARCH text does not match the file exactly`
	if len(reqs) != 2 || !strings.Contains(message(reqs[1].Body, 1), want) {
		t.Fatalf("the second prompt does not say %q", want)
	}
	if strings.Contains(message(reqs[0].Body, 1), "Nothing of your last reply") {
		t.Error("the first prompt speaks of a last reply")
	}
	if !strings.Contains(message(reqs[1].Body, 1), "its edits were not applied (refused, not matching or malformed") {
		t.Error("the carried summary does not say the edits were not applied")
	}
}

// TestOpenAIIsolatedBuilderEditsItsWorktree: an isolated openai builder's
// edits land in its worktree and are published like any node's.
func TestOpenAIIsolatedBuilderEditsItsWorktree(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 10, 5))
	src := strings.Replace(openaiLoop, "goals = [\"sum\"]", "goals = [\"sum\"]\nisolate = true", 1)
	h, _ := apiHarness(t, src, srv)
	out := h.run(context.Background())
	if !out.Success {
		t.Fatalf("outcome %s (%s)", out.Status, out.Detail)
	}
	if got := read(t, filepath.Join(h.root, "add.txt")); got != "return a + b\n" {
		t.Errorf("add.txt = %q after publishing", got)
	}
	if n := count(h.events(), ledger.NodeSucceeded, "fixer"); n != 1 {
		t.Errorf("fixer succeeded %d times, want 1", n)
	}
}

// TestOpenAIContextFilesAreCappedAndNeverFollowLinks: the prompt carries
// the matched files up to ContextCap, names those past it (and the log
// says so), and never shows what a link in the root points to.
func TestOpenAIContextFilesAreCappedAndNeverFollowLinks(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 10, 5))
	h, outside := apiHarness(t, openaiLoop, srv)
	if err := os.WriteFile(filepath.Join(h.root, "big.txt"), bytes.Repeat([]byte("b"), ContextCap), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("outside-secret-contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(h.root, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	h.run(context.Background())
	user := message(srv.Requests()[0].Body, 1)
	for _, want := range []string{"1 files, 13 bytes (at most 262144 bytes are shown)", "Not shown, past the cap: big.txt"} {
		if !strings.Contains(user, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	if strings.Contains(user, "outside-secret-contents") {
		t.Error("the prompt shows a file outside the root through a link")
	}
	if log := h.opts.Log.(*bytes.Buffer).String(); !strings.Contains(log, "context files past the cap of 262144 bytes, not shown: big.txt") {
		t.Errorf("log %q does not report the cap", log)
	}
}

// TestOpenAIKeyReachesNoAgentAndNoCheck: the key is the runner's own; an
// agent CLI that does not list it in env, and every check (which runs what
// models wrote), run without it.
func TestOpenAIKeyReachesNoAgentAndNoCheck(t *testing.T) {
	t.Parallel()
	srv := modelfake.Replies(t, modelfake.Completion(fix, 10, 5))
	src := openaiLoop + `  [[goal.check]]
  type = "test"
  run = "env > check-env.txt; test -z \"$TEST_OPENAI_KEY\""
[providers.cli]
command = ["sh", "-c", "cat >/dev/null; env > agent-env.txt"]
[[node]]
name = "peek"
provider = "cli"
goals = ["sum"]
`
	h, _ := apiHarness(t, src, srv)
	out := h.run(context.Background())
	if !out.Success {
		t.Fatalf("outcome %s (%s): a check saw the key", out.Status, out.Detail)
	}
	for _, f := range []string{"agent-env.txt", "check-env.txt"} {
		if got := read(t, filepath.Join(h.root, f)); !strings.Contains(got, "PATH=") {
			t.Errorf("%s holds no environment: %q", f, got)
		}
	}
	noKey(t, h)
}

func TestWithoutAPIKeys(t *testing.T) {
	t.Parallel()
	env := []string{"PATH=/bin", "O_KEY=sk-1", "SHARED_KEY=sk-2", "OTHER=x"}
	cfg := &loop.Config{Providers: map[string]loop.Provider{
		"o":     {Type: "openai", OpenAI: loop.OpenAI{APIKeyEnv: "O_KEY"}},
		"s":     {Type: "openai", OpenAI: loop.OpenAI{APIKeyEnv: "SHARED_KEY"}},
		"aider": {Type: "command", Command: []string{"aider"}, Env: []string{"SHARED_KEY"}},
	}}
	want := []string{"PATH=/bin", "SHARED_KEY=sk-2", "OTHER=x"}
	if diff := cmp.Diff(want, WithoutAPIKeys(cfg, env)); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}
