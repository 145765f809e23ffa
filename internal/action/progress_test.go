package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/state"
)

// progressLoop needs seven iterations: its fixer fixes calc.sh on its
// seventh call. Two providers spend: script (estimated from its output,
// priced) and meter (which reports its tokens and cost).
const progressLoop = `name = "demo"
[stop]
max_iterations = 9
max_wall_clock = "5m"
max_tokens = 1000000
max_cost_usd = 5
no_progress = 0
max_node_failures = 0
[protect]
paths = ["test.sh", "agents/**"]
[providers.script]
command = ["sh", "agents/fixer.sh"]
price = { input = 3, output = 15 }
[providers.meter]
command = ["sh", "-c", "cat >/dev/null; echo 'tokens=120 cost=0.0125'"]
usage = 'regex:tokens=(?P<total>\d+) cost=(?P<cost>[0-9.]+)'
[[node]]
name = "fixer"
provider = "script"
goals = ["tests"]
[[node]]
name = "meter"
provider = "meter"
goals = ["tests"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = '''sh test.sh >/dev/null || { echo '--- FAIL: @octocat [x](https://evil.example) <img src=x onerror=alert(1)> ` + "`pwn3d`" + `'; exit 1; }'''
`

// slowFixer fixes calc.sh on its seventh call; every call fails with a
// last line that tries to close the runner's group and open its own.
const slowFixer = `cat >/dev/null
echo ran >>"$AGENT_LOG"
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo "$n" >count
if [ "$n" -ge 7 ]; then sed 's/\$1 - \$2/$1 + $2/' calc.sh >calc.sh.tmp && mv calc.sh.tmp calc.sh; fi
echo '::endgroup::' >&2
echo '::group::PWNED' >&2
exit 1
`

// stickyLog records every body the job writes to the sticky comment.
type stickyLog struct {
	githubAPI
	mu     sync.Mutex
	bodies []string
}

func (s *stickyLog) UpsertSticky(ctx context.Context, owner, repo string, n int, marker, body, botLogin string) (int64, error) {
	s.mu.Lock()
	s.bodies = append(s.bodies, body)
	s.mu.Unlock()
	return s.githubAPI.UpsertSticky(ctx, owner, repo, n, marker, body, botLogin)
}

var progressHeading = regexp.MustCompile(`in progress, iteration (\d+) of (\d+)`)

// progressIterations are the iterations the progress bodies show, in
// order; -1 for a body that is not progress (the final report).
func progressIterations(bodies []string) []int {
	var out []int
	for _, b := range bodies {
		m := progressHeading.FindStringSubmatch(b)
		if m == nil {
			out = append(out, -1)
			continue
		}
		var n int
		fmt.Sscan(m[1], &n)
		out = append(out, n)
	}
	return out
}

// TestLiveProgressOnThePullRequest: a run of seven iterations on a pull
// request, its clock moving on 10 s with each agent call. The sticky
// comment shows progress after the baseline, then at most once per 30 s:
// after iterations 3 and 6, never for 1, 2, 4 or 5 (within 30 s of the
// last edit), and the final report replaces it as the last write. Each
// progress shows the checklist with the current evidence, rendered so
// that nothing a check printed can mention, link or embed, and the spend
// against the budgets.
func TestLiveProgressOnThePullRequest(t *testing.T) {
	t.Parallel()
	f := newFlow(t, progressLoop, slowFixer)
	// The runner's wall-clock deadline is a real timer set at its clock's
	// time plus what is left: the fake clock starts now.
	base := time.Now()
	sticky := &stickyLog{}
	f.tune = func(j *job) {
		j.env.Now = func() time.Time { return base.Add(time.Duration(f.ran()) * 10 * time.Second) }
		sticky.githubAPI = j.client
		j.client = sticky
	}
	r := f.pr(nil)
	if r.outputs["stop-reason"] != "success" {
		t.Fatalf("stop-reason %q, want success\n%s", r.outputs["stop-reason"], r.log)
	}
	if diff := cmp.Diff([]int{0, 3, 6, -1}, progressIterations(sticky.bodies)); diff != "" {
		t.Fatalf("sticky writes by iteration (-1 the report) (-want +got):\n%s", diff)
	}
	final := sticky.bodies[len(sticky.bodies)-1]
	if got := f.sticky(); got != final || strings.Contains(got, "in progress") || !strings.Contains(got, "success") {
		t.Errorf("the sticky comment after the job is not the final report:\n%s", got)
	}
	for _, b := range sticky.bodies[:3] {
		checkProgressBody(t, b)
	}
}

func checkProgressBody(t *testing.T, b string) {
	t.Helper()
	for _, want := range []string{
		Marker("demo") + "\n", "certifies nothing", "- [ ] `tests` (blocking) 0/1",
		"❌ test: `` `sh test.sh >/dev/null || ", "s: --- FAIL: @octocat [x](https://evil.example) <img src=x onerror=alert(1)> `pwn3d` ``",
		" of 1000000 tokens", " of $5.00 · ", " of 5m0s wall clock",
		"Now: iteration ",
	} {
		if !strings.Contains(b, want) {
			t.Errorf("progress lacks %q:\n%s", want, b)
		}
	}
	plain := outsideCodeSpans(b)
	for _, bad := range []string{"@octocat", "evil.example", "<img", "pwn3d"} {
		if strings.Contains(plain, bad) {
			t.Errorf("%q renders outside a code span:\n%s", bad, plain)
		}
	}
}

// groups reads a job log as the runner does: workflow commands at the
// start of a line, none between "::stop-commands::TOKEN" and "::TOKEN::".
// It returns the groups opened, in order, and fails on a group closed
// that is not open or opened inside another, or one left open.
func groups(t *testing.T, log string) (opened []string, fenced []string) {
	t.Helper()
	token, open := "", ""
	for _, line := range strings.Split(log, "\n") {
		switch {
		case token != "":
			if line == "::"+token+"::" {
				token = ""
			} else {
				fenced = append(fenced, line)
			}
		case strings.HasPrefix(line, "::stop-commands::"):
			token = strings.TrimPrefix(line, "::stop-commands::")
		case strings.HasPrefix(line, "::group::"):
			if open != "" {
				t.Errorf("group %q opened inside %q", line, open)
			}
			open = strings.TrimPrefix(line, "::group::")
			opened = append(opened, open)
		case line == "::endgroup::":
			if open == "" {
				t.Errorf("a group closed that is not open")
			}
			open = ""
		}
	}
	if open != "" || token != "" {
		t.Errorf("the log ends inside group %q, fence %q", open, token)
	}
	return opened, fenced
}

// TestIterationsAreGroupedInTheLog: each iteration of the run is one
// group of the job log, opened and closed outside the stop-commands
// fences; the agent's attempts to close the runner's group and open its
// own reach the log (in the node's failure) only inside a fence.
func TestIterationsAreGroupedInTheLog(t *testing.T) {
	t.Parallel()
	f := newFlow(t, progressLoop, slowFixer)
	r := f.pr(nil)
	opened, fenced := groups(t, r.log)
	var want []string
	for i := 1; i <= 7; i++ {
		want = append(want, fmt.Sprintf("iteration %d", i))
	}
	if diff := cmp.Diff(want, opened); diff != "" {
		t.Errorf("groups (-want +got):\n%s\n%s", diff, r.log)
	}
	if !slices.ContainsFunc(fenced, func(l string) bool { return strings.Contains(l, "::group::PWNED") }) {
		t.Errorf("the agent's line never reached the log, so this test proves nothing:\n%s", r.log)
	}
	for _, l := range strings.Split(r.log, "\n") {
		if strings.Contains(l, "PWNED") && !slices.Contains(fenced, l) {
			t.Errorf("agent text outside a fence: %q", l)
		}
	}
}

// TestSpendOutputByProvider: the spend output breaks the run's spend
// down by provider, and adds up to the tokens and cost-usd outputs.
func TestSpendOutputByProvider(t *testing.T) {
	t.Parallel()
	f := newFlow(t, progressLoop, slowFixer)
	r := f.pr(nil)
	var by map[string]ProviderSpend
	if err := json.Unmarshal([]byte(r.outputs["spend"]), &by); err != nil {
		t.Fatalf("spend output %q: %v", r.outputs["spend"], err)
	}
	if got := by["meter"]; got != (ProviderSpend{Tokens: 7 * 120, CostUSD: 7 * 0.0125}) && math.Abs(got.CostUSD-7*0.0125) > 1e-9 {
		t.Errorf("meter spent %+v, want 840 tokens, $0.0875, reported", got)
	}
	if s := by["script"]; s.Tokens == 0 || s.CostUSD == 0 || !s.Estimated {
		t.Errorf("script spent %+v, want estimated tokens, priced", s)
	}
	var tokens int64
	var cost float64
	for _, s := range by {
		tokens, cost = tokens+s.Tokens, cost+s.CostUSD
	}
	if fmt.Sprint(tokens) != r.outputs["tokens"] || fmt.Sprintf("%.4f", cost) != r.outputs["cost-usd"] {
		t.Errorf("by provider %d tokens, $%.4f; the run %s tokens, $%s", tokens, cost, r.outputs["tokens"], r.outputs["cost-usd"])
	}
	if cp := f.checkpoint("demo/pr-7"); cp == nil || cp.Spend.Tokens != tokens || math.Abs(cp.Spend.CostUSD-cost) > 1e-9 {
		t.Errorf("by provider %d tokens, $%f; the checkpoint %+v", tokens, cost, cp)
	}
}

// TestFailedJobWithdrawsItsProgress: a job that fails after showing
// progress (here the store refuses the checkpoint of iteration 4) does
// not leave the comment saying the run is going.
func TestFailedJobWithdrawsItsProgress(t *testing.T) {
	t.Parallel()
	f := newFlow(t, progressLoop, slowFixer)
	f.failSave = func(cp *state.Checkpoint) error {
		if cp.Iteration == 4 {
			return errors.New("the state branch refused the push")
		}
		return nil
	}
	r := f.pr(nil)
	if r.err == nil {
		t.Fatalf("the job passed with a checkpoint refused\n%s", r.log)
	}
	got := f.sticky()
	if strings.Contains(got, "in progress") || !strings.Contains(got, "the job ended without a report") {
		t.Errorf("sticky comment after the failed job:\n%s", got)
	}
}
