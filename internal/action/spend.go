package action

import (
	"encoding/json"

	"github.com/loop-action/loop-action/internal/ledger"
)

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
