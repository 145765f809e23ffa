package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/loop"
)

// claudeAuthFailure is the claude-code preset's auth_failure.
const claudeAuthFailure = `^\{"type":"system","subtype":"api_retry",.*"error_status":40[13][,}]`

// retrying401 is how Claude Code 2.1.197's stream-json begins when the API
// refuses its key: an init event and an api_retry per retry, for minutes.
const retrying401 = `{"type":"system","subtype":"init","cwd":"/w","session_id":"s","tools":["Edit"]}
{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":552.49,"error_status":401,"error":"authentication_failed","session_id":"s"}
`

// TestDispatchAuthFailureEndsTheCall: an agent that reports a refused key
// and goes on retrying is stopped at the line that matches auth_failure,
// in about a second rather than at its timeout; no model answered, so the
// call is charged nothing. Without the watcher the call runs into the
// test's bound (promptly).
func TestDispatchAuthFailureEndsTheCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	if err := os.WriteFile(out, []byte(retrying401), 0o644); err != nil {
		t.Fatal(err)
	}
	// A prompt of 4 KiB: an estimate would charge about a thousand tokens.
	req := request(t)
	req.Prompt = strings.Repeat("p", 4096)
	spec := loop.Provider{Command: []string{"sh", "-c", `cat >/dev/null; cat "$0"; sleep 600`, out},
		Usage: "claude-json", AuthFailure: claudeAuthFailure, Timeout: loop.D(10 * time.Minute), Price: &loop.Price{Input: 3, Output: 15}}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	resp := dispatch(t, ctx, Command{Name: "agent", Spec: spec}, req)
	checkErr(t, resp.Err, `^agent "agent" stopped after [0-9.]+m?s: it reported an authentication failure \(auth_failure\): API error 401 \(authentication_failed\), retry 1 of 10$`)
	if want := (Usage{CostKnown: true}); resp.Usage != want {
		t.Errorf("usage %+v, want %+v: no model answered", resp.Usage, want)
	}
}

// TestDispatchAuthFailureIsALine: the pattern is matched against whole
// lines, however the output arrives, and a line that only holds the
// words inside a JSON string (a model's text) does not match.
func TestDispatchAuthFailureIsALine(t *testing.T) {
	t.Parallel()
	forged := `{"type":"assistant","message":{"content":[{"type":"text","text":"{\"type\":\"system\",\"subtype\":\"api_retry\",\"error_status\":401,}"}]}}`
	spec := loop.Provider{Command: []string{"sh", "-c", `cat >/dev/null; printf '%s\n' "$0"; printf '{"type":"result","result":"ok","usage":{"input_tokens":5,"output_tokens":1}}\n'`, forged},
		Usage: "claude-json", AuthFailure: claudeAuthFailure}
	resp := dispatch(t, t.Context(), Command{Name: "agent", Spec: spec}, request(t))
	mustSucceed(t, resp)
	if resp.Answer != "ok" || resp.Usage.Total != 6 {
		t.Errorf("answer %q, usage %+v", resp.Answer, resp.Usage)
	}
}

// TestDispatchIdleTimeout: an agent silent on stdout for idle_timeout is
// stopped, long before its timeout; one that keeps printing is not.
func TestDispatchIdleTimeout(t *testing.T) {
	t.Parallel()
	silent := loop.Provider{Command: []string{"sh", script(t, "hang.sh")},
		IdleTimeout: loop.D(300 * time.Millisecond), Timeout: loop.D(10 * time.Minute)}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	resp := dispatch(t, ctx, Command{Name: "agent", Spec: silent}, request(t))
	checkErr(t, resp.Err, `^agent "agent" stopped after [0-9.]+m?s: it printed nothing for 300ms \(idle_timeout\): thinking\.\.\.$`)
	if !resp.Usage.Estimated {
		t.Errorf("usage %+v, want an estimate: the agent ran", resp.Usage)
	}

	busy := loop.Provider{Command: []string{"sh", "-c", `cat >/dev/null; for i in 1 2 3 4 5; do echo step $i; sleep 0.1; done`},
		IdleTimeout: loop.D(5 * time.Second)}
	resp = dispatch(t, t.Context(), Command{Name: "agent", Spec: busy}, request(t))
	mustSucceed(t, resp)
}

// TestDispatchEnvValuesArgsAndTMPDIR: the provider's env table reaches
// the agent (over the base environment), its args follow the tier's, and
// its TMPDIR is a directory of its own inside the request's TempDir,
// removed with what the agent left there when the call ends.
func TestDispatchEnvValuesArgsAndTMPDIR(t *testing.T) {
	t.Parallel()
	req := request(t)
	req.Env = append(req.Env, "BASE_URL=https://api.example", "TMPDIR=/somewhere/else")
	agent := `cat >/dev/null; echo "url=$BASE_URL"; echo "tmp=$TMPDIR"; echo "tmp2=$TMP"; touch "$TMPDIR/left-behind"; echo "args=$*"`
	spec := loop.Provider{Command: []string{"sh", "-c", agent, "sh", "{tier}"},
		Tiers:     map[string][]string{loop.TierStandard: {"--model", "m"}},
		Args:      []string{"--max-turns", "3"},
		EnvValues: map[string]string{"BASE_URL": "http://gateway.internal"}}
	resp := dispatch(t, t.Context(), Command{Name: "agent", Spec: spec}, req)
	mustSucceed(t, resp)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(resp.Answer), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	if want := "http://gateway.internal"; got["url"] != want {
		t.Errorf("BASE_URL=%q, want %q", got["url"], want)
	}
	if want := "--model m --max-turns 3"; got["args"] != want {
		t.Errorf("args %q, want %q", got["args"], want)
	}
	tmp := got["tmp"]
	if filepath.Dir(tmp) != req.TempDir || got["tmp2"] != tmp {
		t.Errorf("TMPDIR=%q TMP=%q, want one directory inside %s", tmp, got["tmp2"], req.TempDir)
	}
	// The directory stays, emptied, for a later call (privateTemp).
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("the agent's TMPDIR %s after the call: %v, %v; want it empty", tmp, left, err)
	}
	left, _ := os.ReadDir(req.TempDir)
	if d := cmp.Diff(1, len(left)); d != "" {
		t.Errorf("entries in the request's TempDir: %v, want the emptied TMPDIR alone", left)
	}
}
