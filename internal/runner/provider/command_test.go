//go:build unix

package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/process"
)

// took matches a duration in an error message.
const took = `[0-9.]+(ms|s)`

// promptly is the generous bound for "returns at once" on a noisy machine.
const promptly = 5 * time.Second

// script is the absolute path of an agent script in testdata/agents.
func script(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "agents", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// request is a Request with every field set, in fresh directories.
func request(t *testing.T) Request {
	t.Helper()
	return Request{
		RunID:       "fix-ci/pr-7",
		Node:        "fixer",
		Root:        t.TempDir(),
		HistoryFile: "/repo/.loop/history.md",
		Iteration:   3,
		Prompt:      "Fix the failing tests.\nNever weaken an assertion.",
		Tier:        loop.TierStandard,
		TempDir:     t.TempDir(),
		Env:         []string{"PATH=" + os.Getenv("PATH"), "AGENT_TOKEN=s3cret", "LOOP_NODE=stale", "LOOP_ITERATION=99"},
	}
}

// dispatch calls c and fails the test if the call takes longer than promptly.
func dispatch(t *testing.T, ctx context.Context, c Command, req Request) Response {
	t.Helper()
	start := time.Now()
	resp := c.Dispatch(ctx, req)
	if took := time.Since(start); took > promptly {
		t.Errorf("Dispatch took %v, want < %v", took, promptly)
	}
	return resp
}

// mustSucceed fails the test when the call failed.
func mustSucceed(t *testing.T, resp Response) {
	t.Helper()
	if resp.Err != nil {
		t.Fatalf("Dispatch: %v (output %q)", resp.Err, resp.Result.Tail)
	}
}

func TestDispatchEnvironmentAndStdin(t *testing.T) {
	t.Parallel()
	req := request(t)
	c := Command{Name: "echo", Spec: loop.Provider{Command: []string{"sh", script(t, "env.sh")}}}
	resp := dispatch(t, t.Context(), c, req)
	mustSucceed(t, resp)
	root, err := filepath.EvalSymlinks(req.Root)
	if err != nil {
		t.Fatal(err)
	}
	want := "LOOP_RUN_ID=fix-ci/pr-7\nLOOP_ITERATION=3\nLOOP_NODE=fixer\nLOOP_ROOT=" + req.Root +
		"\nLOOP_HISTORY_FILE=/repo/.loop/history.md\nAGENT_TOKEN=s3cret\npwd=" + root + "\nstdin=" + req.Prompt
	if diff := cmp.Diff(want, resp.Answer); diff != "" {
		t.Errorf("agent saw (-want +got):\n%s", diff)
	}
	total := (int64(len(req.Prompt)+len(want)) + 3) / 4
	wantUsage := Usage{Input: int64(len(req.Prompt)) / 4, Output: total - int64(len(req.Prompt))/4, Total: total, Estimated: true}
	if diff := cmp.Diff(wantUsage, resp.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestAgentEnvReplacesItsVariables(t *testing.T) {
	t.Parallel()
	req := Request{RunID: "r", Iteration: 1, Node: "n", Root: "/w", HistoryFile: "/h",
		Env: []string{"LOOP_NODE=old", "HOME=/home/u", "LOOP_ROOT", "LOOP_NODES=kept", "TMPDIR=/tmp", "BASE_URL=https://api", "TEMP=/t"}}
	want := []string{"HOME=/home/u", "LOOP_NODES=kept", "BASE_URL=http://gateway",
		"TMPDIR=/w/.loop/tmp/agent-1", "TMP=/w/.loop/tmp/agent-1", "TEMP=/w/.loop/tmp/agent-1",
		"LOOP_RUN_ID=r", "LOOP_ITERATION=1", "LOOP_NODE=n", "LOOP_ROOT=/w", "LOOP_HISTORY_FILE=/h"}
	if diff := cmp.Diff(want, agentEnv(req, []string{"BASE_URL=http://gateway"}, "/w/.loop/tmp/agent-1")); diff != "" {
		t.Errorf("agentEnv (-want +got):\n%s", diff)
	}
}

// argvOutput is what argv.sh printed.
type argvOutput struct {
	Args    []string
	Mode    string // of the file an argument named
	Content string // of that file
	Stdin   string
}

// parseArgvOutput reads the output of argv.sh for a one-line prompt.
func parseArgvOutput(out string) argvOutput {
	var got argvOutput
	for _, line := range strings.Split(out, "\n") {
		key, value, _ := strings.Cut(line, "=")
		switch key {
		case "arg":
			got.Args = append(got.Args, value)
		case "mode":
			got.Mode = value
		case "content":
			got.Content = value
		case "stdin":
			got.Stdin = value
		}
	}
	return got
}

func TestDispatchArgv(t *testing.T) {
	t.Parallel()
	tiers := map[string][]string{"cheap": {"--model", "small"}, "standard": {"--effort", "medium"}, "strong": {"--model", "large", "--think"}}
	tests := []struct {
		name    string
		command []string
		prompt  string // prompt mode
		tier    string
		want    argvOutput
	}{
		{"prompt as argument and inside one", []string{"--message={prompt}", "{prompt}", "--tail"}, promptArg, loop.TierCheap,
			argvOutput{Args: []string{"--message=say {prompt_file} and {prompt}", "say {prompt_file} and {prompt}", "--tail", "--model", "small"}}},
		{"prompt on stdin", []string{"exec", "-"}, promptStdin, loop.TierStrong,
			argvOutput{Args: []string{"exec", "-", "--model", "large", "--think"}, Stdin: "say {prompt_file} and {prompt}"}},
		{"tier spliced", []string{"run", "{tier}", "--yes", "{prompt}"}, promptArg, loop.TierStrong,
			argvOutput{Args: []string{"run", "--model", "large", "--think", "--yes", "say {prompt_file} and {prompt}"}}},
		{"no tier means standard", []string{"run", "{tier}", "{prompt}"}, promptArg, "",
			argvOutput{Args: []string{"run", "--effort", "medium", "say {prompt_file} and {prompt}"}}},
		{"prompt file", []string{"--prompt-file", "{prompt_file}", "{tier}"}, promptFile, loop.TierCheap,
			argvOutput{Args: []string{"--prompt-file", "<prompt file>", "--model", "small"}, Mode: "-rw-------", Content: "say {prompt_file} and {prompt}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request(t)
			req.Prompt, req.Tier = "say {prompt_file} and {prompt}", tt.tier
			spec := loop.Provider{Command: append([]string{"sh", script(t, "argv.sh")}, tt.command...), Prompt: tt.prompt, Tiers: tiers}
			resp := dispatch(t, t.Context(), Command{Name: "argv", Spec: spec}, req)
			mustSucceed(t, resp)
			got := parseArgvOutput(resp.Answer)
			for i, a := range got.Args {
				if filepath.Dir(a) == req.TempDir && strings.HasPrefix(filepath.Base(a), "prompt-") {
					got.Args[i] = "<prompt file>"
					if _, err := os.Stat(a); !errors.Is(err, os.ErrNotExist) {
						t.Errorf("prompt file %s left behind after the call (stat: %v)", a, err)
					}
				}
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("agent saw (-want +got):\n%s\noutput:\n%s", diff, resp.Answer)
			}
		})
	}
}

func TestDispatchUsage(t *testing.T) {
	t.Parallel()
	aider := `regex:Tokens: (?P<input>[\d.,]+[kM]?) sent, (?P<output>[\d.,]+[kM]?) received\. Cost: \$[\d.]+ message, \$(?P<cost>[\d.]+) session`
	tests := []struct {
		name, recording, usage string
		price                  *loop.Price
		wantAnswer             string
		want                   Usage
	}{
		{"claude-json", "claude/success.json", "claude-json", nil,
			"Fixed the failing test in parser_test.go: the tokenizer dropped a trailing newline.\n\nAll tests in ./parser pass now.",
			Usage{Input: 163736, Output: 2545, Total: 166281, CostUSD: 0.1873412, CostKnown: true}},
		{"codex-jsonl priced", "codex/exec.jsonl", "codex-jsonl", &loop.Price{Input: 2, Output: 8},
			"Fixed `Tokenize` to keep the final token when the input ends in a newline; `go test ./parser/...` passes.",
			Usage{Input: 24763, Output: 1122, Total: 25885, CostUSD: (24763*2.0 + 1122*8.0) / 1e6, CostKnown: true}},
		// Captured from opencode 1.18.33 on a custom provider: cost 0.
		{"opencode-jsonl cost 0 priced", "real/opencode/success.out", "opencode-jsonl", &loop.Price{Input: 2, Output: 8},
			"Fixed add in calc.sh.",
			Usage{Input: 3600, Output: 78, Total: 3678, CostUSD: (3600*2.0 + 78*8.0) / 1e6, CostKnown: true}},
		{"aider regex", "regex/aider.txt", aider, nil, "<stdout>",
			Usage{Input: 12000, Output: 1200, Total: 13200, CostUSD: 0.05, CostKnown: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := loop.Provider{Command: []string{"sh", script(t, "replay.sh"), tt.recording}, Usage: tt.usage, Price: tt.price}
			resp := dispatch(t, t.Context(), Command{Name: tt.name, Spec: spec}, request(t))
			mustSucceed(t, resp)
			recorded, err := os.ReadFile(filepath.Join("testdata", tt.recording))
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantAnswer == "<stdout>" {
				tt.wantAnswer = string(recorded)
			}
			if diff := cmp.Diff(tt.wantAnswer, resp.Answer); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, resp.Usage, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDispatchEstimatePriced(t *testing.T) {
	t.Parallel()
	req := request(t)
	req.Prompt = strings.Repeat("p", 400)
	spec := loop.Provider{Command: []string{"sh", script(t, "replay.sh"), "claude/not-json.txt"}, Usage: "none", Price: &loop.Price{Input: 3, Output: 15}}
	resp := dispatch(t, t.Context(), Command{Name: "plain", Spec: spec}, req)
	mustSucceed(t, resp)
	out := int64(len(resp.Answer))
	total := (400 + out + 3) / 4
	want := Usage{Input: 100, Output: total - 100, Total: total, Estimated: true, CostKnown: true,
		CostUSD: (100*3 + float64(total-100)*15) / 1e6}
	if diff := cmp.Diff(want, resp.Usage, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

func TestDispatchFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    loop.Provider
		prepare func(*Request)
		wantErr string // regexp
		check   func(*testing.T, Response)
	}{
		{name: "exit status",
			spec:    loop.Provider{Command: []string{"sh", script(t, "fail.sh")}},
			wantErr: `^agent "agent" exited 3 after ` + took + `: fatal: could not apply patch to parser/tokenize\.go$`,
			check: func(t *testing.T, r Response) {
				if r.Result.ExitCode != 3 || r.Usage.Total == 0 {
					t.Errorf("exit code %d, usage %+v; want 3 and an estimate", r.Result.ExitCode, r.Usage)
				}
			}},
		{name: "timeout",
			spec:    loop.Provider{Command: []string{"sh", script(t, "hang.sh")}, Timeout: loop.D(300 * time.Millisecond)},
			wantErr: `^agent "agent" timed out after 300ms: thinking\.\.\.$`,
			check: func(t *testing.T, r Response) {
				if !r.Result.TimedOut {
					t.Errorf("Result.TimedOut is false")
				}
			}},
		{name: "missing binary",
			spec:    loop.Provider{Command: []string{"loop-action-no-such-agent", "-p"}},
			wantErr: `^agent "agent" could not start: .*loop-action-no-such-agent.*not found`,
			check: func(t *testing.T, r Response) {
				if r.Usage != (Usage{}) {
					t.Errorf("usage %+v of a call that never started, want none", r.Usage)
				}
			}},
		{name: "agent reports an error",
			spec:    loop.Provider{Command: []string{"sh", script(t, "replay.sh"), "claude/is-error.json"}, Usage: "claude-json"},
			wantErr: `^agent "agent" reported an error after .*: API error 401: Invalid API key · Please run /login$`},
		{name: "codex turn failed",
			spec:    loop.Provider{Command: []string{"sh", script(t, "replay.sh"), "codex/failed.jsonl"}, Usage: "codex-jsonl"},
			wantErr: `^agent "agent" reported an error after .*: unexpected status 401 Unauthorized`},
		{name: "gemini's error report on stderr",
			spec:    loop.Provider{Command: []string{"sh", script(t, "stderr.sh"), "real/gemini/400.err", "144"}, Usage: "gemini-json"},
			wantErr: `^agent "agent" exited 144 after .*: 400 INVALID_ARGUMENT: bad request \(scripted\)$`},
		{name: "a last line of punctuation is no detail",
			spec:    loop.Provider{Command: []string{"sh", "-c", "cat >/dev/null; echo 'Error: status 500' >&2; echo '}' >&2; exit 3"}},
			wantErr: `^agent "agent" exited 3 after .*: Error: status 500$`},
		{name: "bad usage regex",
			spec:    loop.Provider{Command: []string{"sh", script(t, "fail.sh")}, Usage: "regex:(?P<total>"},
			wantErr: `^agent "agent" could not start: usage regex: error parsing regexp`},
		{name: "unsupported type",
			spec:    loop.Provider{Type: "openai", Command: []string{"sh", script(t, "fail.sh")}},
			wantErr: `^agent "agent" could not start: provider type "openai" is not supported$`},
		{name: "prompt file directory missing",
			spec:    loop.Provider{Command: []string{"sh", script(t, "argv.sh"), "{prompt_file}"}, Prompt: promptFile},
			prepare: func(r *Request) { r.TempDir = filepath.Join(r.TempDir, "gone") },
			wantErr: `^agent "agent" could not start: make the agent's TMPDIR: `},
		{name: "output beyond what is kept",
			spec:    loop.Provider{Command: []string{"sh", script(t, "big.sh")}, Usage: "claude-json"},
			wantErr: `^agent "agent" printed more than 8 MiB; usage = "claude-json" found nothing in the last 8 MiB kept$`,
			check: func(t *testing.T, r Response) {
				if len(r.Answer) != StdoutBytes || !r.Usage.Estimated {
					t.Errorf("answer of %d bytes, usage %+v; want %d bytes and an estimate", len(r.Answer), r.Usage, StdoutBytes)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := request(t)
			if tt.prepare != nil {
				tt.prepare(&req)
			}
			resp := dispatch(t, t.Context(), Command{Name: "agent", Spec: tt.spec}, req)
			checkErr(t, resp.Err, tt.wantErr)
			if tt.check != nil {
				tt.check(t, resp)
			}
		})
	}
}

// checkErr fails the test unless err's message matches the regexp want.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Err = nil, want one matching %s", want)
	}
	if !regexp.MustCompile(want).MatchString(err.Error()) {
		t.Errorf("Err = %q, want one matching %s", err, want)
	}
}

func TestDispatchCancelled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		ctx     func(context.Context) (context.Context, context.CancelFunc)
		wantErr string
		is      error
	}{
		{"cancelled", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			time.AfterFunc(200*time.Millisecond, cancel)
			return ctx, cancel
		}, `^agent "agent" cancelled after ` + took + `: context canceled$`, context.Canceled},
		{"deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, 200*time.Millisecond)
		}, `^agent "agent" cancelled after ` + took + `: context deadline exceeded$`, context.DeadlineExceeded},
		{"done before the start", func(ctx context.Context) (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(ctx)
			cancel()
			return ctx, cancel
		}, `^agent "agent" not started: context canceled$`, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := tt.ctx(t.Context())
			defer cancel()
			spec := loop.Provider{Command: []string{"sh", script(t, "hang.sh")}}
			resp := dispatch(t, ctx, Command{Name: "agent", Spec: spec}, request(t))
			checkErr(t, resp.Err, tt.wantErr)
			if !errors.Is(resp.Err, tt.is) || !resp.Result.Canceled {
				t.Errorf("Err %v is not %v, or Result.Canceled (%v) is false", resp.Err, tt.is, resp.Result.Canceled)
			}
		})
	}
}

// TestLeftoversFailTheCall: an agent that left a process the runner could
// not kill has not finished, whatever its exit status says; the node
// fails (and the collector voids the measurement that follows).
func TestLeftoversFailTheCall(t *testing.T) {
	t.Parallel()
	c := Command{Name: "fixer"}
	res := process.Result{ExitCode: 0, SweepErr: errors.New("pid 42 survived SIGKILL")}
	err := c.failure(context.Background(), res, report{})
	if err == nil || !strings.Contains(err.Error(), "left processes that could not be killed") {
		t.Fatalf("failure = %v, want the leftovers named", err)
	}
}
