package action

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/ledger"
	"github.com/loop-action/loop-action/internal/runner"
)

// output appends one output to the runner's GITHUB_OUTPUT file, as
// actions/toolkit does: "name<<ghadelimiter_<random hex>", the value, the
// delimiter. Each value gets a fresh random delimiter, so no value, and
// nothing an agent wrote, can end it early and set another output
// (go-githubactions writes a fixed, public one). Without the file (a CLI
// run) it does nothing.
func (p *publisher) output(name, value string) {
	path := p.getenv("GITHUB_OUTPUT")
	if path == "" {
		return
	}
	if err := appendOutput(path, name, value); err != nil {
		p.a.Warningf("output %s not set: %s", name, err)
	}
}

func appendOutput(path, name, value string) error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	delim := "ghadelimiter_" + hex.EncodeToString(b)
	if strings.Contains(name, delim) || strings.Contains(value, delim) {
		return errors.New("its value holds the delimiter") // 2^-128: never, but never silently
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s<<%s\n%s\n%s\n", name, delim, value, delim)
	return errors.Join(err, f.Close())
}

// outputs sets every output of action.yml. success follows the status
// rule: true only when a commit carries success from this job (for a
// gate-only evaluation, when the gate holds).
func (p *publisher) outputs(s *session, out runner.Outcome, r Report, dv delivery) {
	satisfied, blocking := gate.Blocking(out.Verdicts)
	summary := fmt.Sprintf("loop %s: %s after %d of %d iterations; %d of %d blocking goals satisfied",
		s.cfg.Name, out.Status, out.Iteration, out.MaxIterations, satisfied, blocking)
	if out.Status == runner.GateOnly {
		summary = fmt.Sprintf("loop %s: %s; %d of %d blocking goals satisfied", s.cfg.Name, r.title(), satisfied, blocking)
	}
	for _, o := range [][2]string{
		{"success", fmt.Sprint(dv.success)},
		{"stop-reason", string(out.Status)},
		{"run-id", out.RunID},
		{"iterations", fmt.Sprint(out.Iteration)},
		{"tokens", fmt.Sprint(out.Spend.Tokens)},
		{"cost-usd", fmt.Sprintf("%.4f", out.Spend.CostUSD)},
		{"spend", spendJSON(r.ByProvider)},
		{"export-path", r.ExportPath},
		{"artifact-url", r.ArtifactURL},
		{"summary", summary},
		{"delivered-sha", dv.sha},
		{"delivered-ref", dv.ref},
		{"pull-request", pullOutput(dv.pull)},
	} {
		p.output(o[0], o[1])
	}
}

func pullOutput(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}

// ProviderSpend is what one provider's agents spent in a run.
type ProviderSpend struct {
	Tokens    int64   `json:"tokens"`
	CostUSD   float64 `json:"cost_usd"`
	Estimated bool    `json:"estimated"` // some of its tokens were estimated, not reported
}

// spendByProvider sums the spend of each node's calls in the run's ledger
// by the provider it was dispatched to, from the run's latest start (a new
// generation starts its spend afresh): the same calls the run's spend
// adds up.
func spendByProvider(evs []ledger.Event) map[string]ProviderSpend {
	type call struct {
		iteration int
		node      string
	}
	out := map[string]ProviderSpend{}
	to := map[call]string{}
	for _, e := range evs {
		switch e.Type {
		case ledger.RunStarted:
			clear(out)
			clear(to)
		case ledger.NodeDispatched:
			to[call{e.Iteration, e.Node}] = e.Provider
		case ledger.NodeSucceeded, ledger.NodeFailed:
			p, ok := to[call{e.Iteration, e.Node}]
			if !ok {
				continue // never dispatched: nothing spent
			}
			s := out[p]
			s.Tokens += e.Tokens
			s.CostUSD += e.CostUSD
			s.Estimated = s.Estimated || e.Estimated
			out[p] = s
		}
	}
	return out
}

// spendJSON is the spend output: {"<provider>": {"tokens", "cost_usd",
// "estimated"}}, {} when nothing ran.
func spendJSON(m map[string]ProviderSpend) string {
	if m == nil {
		m = map[string]ProviderSpend{}
	}
	b, err := json.Marshal(m) // sorted by provider
	if err != nil {
		return "{}"
	}
	return string(b)
}
