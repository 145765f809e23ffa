package provider

import "strings"

// opencodeEvent is one line of `opencode run --format json`: an object with
// a type, a timestamp, the session id and the event's data, as run.ts in
// packages/opencode/src/cli/cmd (sst/opencode) writes it with
// outputJsonEvent. step_finish carries a step's tokens and cost (USD), text
// a finished text part, and error the session's error.
type opencodeEvent struct {
	Type string `json:"type"`
	Part *struct {
		Text   *string         `json:"text"`
		Cost   *float64        `json:"cost"`
		Tokens *opencodeTokens `json:"tokens"`
	} `json:"part"`
	Error *struct {
		Name string `json:"name"`
		Data *struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

// opencodeTokens is one step's token count. Input tokens leave out the
// cache's, which are counted here as input too; reasoning tokens are output.
type opencodeTokens struct {
	Input     *float64 `json:"input"`
	Output    *float64 `json:"output"`
	Reasoning *float64 `json:"reasoning"`
	Cache     struct {
		Read  *float64 `json:"read"`
		Write *float64 `json:"write"`
	} `json:"cache"`
}

// parseOpencodeJSONL reads the usage, cost and answer from the stdout of
// `opencode run --format json`: tokens and cost are summed over step_finish
// events, the answer is the text of the last step that had any (its text
// parts, one per line), and an error event is a failure. Lines that are not
// JSON objects are skipped. What the agent's tools print reaches stdout only
// inside the JSON strings of these events, so a forged report would have to
// come from opencode itself.
func parseOpencodeJSONL(stdout []byte) report {
	var t opencodeTally
	eachJSONLine(stdout, t.add)
	rep := t.rep
	if rep.Tokens {
		rep.Total = addTokens(rep.Input, rep.Output)
	}
	// An error before any step: no model answered.
	rep.Unstarted = rep.Failure != "" && !t.stepped
	if t.answer != nil {
		rep.Answer, rep.HasAnswer = strings.Join(t.answer, "\n"), true
	}
	return rep
}

// opencodeTally adds up an opencode stream.
type opencodeTally struct {
	rep     report
	stepped bool     // a step started: a model answered
	step    []string // the text parts of the current step
	answer  []string // those of the last step with any
}

// add takes one event into the tally.
func (t *opencodeTally) add(ev opencodeEvent) {
	switch {
	case ev.Type == "step_start":
		t.step, t.stepped = nil, true
	case ev.Type == "step_finish" && ev.Part != nil:
		t.addStep(ev)
	case ev.Type == "text" && ev.Part != nil && ev.Part.Text != nil:
		t.step = append(t.step, *ev.Part.Text)
		t.answer = t.step
	case ev.Type == "error" && ev.Error != nil:
		msg := ev.Error.Name
		if ev.Error.Data != nil && ev.Error.Data.Message != "" {
			msg = ev.Error.Data.Message
		}
		t.rep.Failure = failureLine("", msg)
	}
}

// addStep adds a finished step's tokens and cost.
func (t *opencodeTally) addStep(ev opencodeEvent) {
	r := &t.rep
	if tk := ev.Part.Tokens; tk != nil {
		in, out := tk.counts()
		r.Input, r.Output, r.Tokens = addTokens(r.Input, in), addTokens(r.Output, out), true
	}
	if ev.Part.Cost != nil {
		if c, ok := costUSD(*ev.Part.Cost); ok {
			r.CostUSD, r.Cost = addCost(r.CostUSD, c), true
		}
	}
}

// counts are t's input tokens (with the cache's) and output tokens (with
// reasoning); absent ones are 0.
func (t opencodeTokens) counts() (in, out int64) {
	in, _ = sumTokens(t.Input, t.Cache.Read, t.Cache.Write)
	out, _ = sumTokens(t.Output, t.Reasoning)
	return in, out
}

// addCost adds two costs in [0, maxAmount], saturating at maxAmount, so that
// no sum of reported costs becomes infinite.
func addCost(a, b float64) float64 {
	return min(a+b, maxAmount)
}
