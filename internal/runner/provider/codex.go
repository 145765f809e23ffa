package provider

import "strings"

// codexEvent is one line of `codex exec --json`, in either of its formats:
// the current one ({"type":"turn.completed","usage":{…}},
// {"type":"item.completed","item":{…}}) or the older envelope
// ({"id":"0","msg":{"type":"token_count",…}}).
type codexEvent struct {
	Type  string      `json:"type"`
	Usage *codexUsage `json:"usage"`
	Item  *struct {
		Type string  `json:"type"`
		Text *string `json:"text"`
	} `json:"item"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Msg *codexMsg `json:"msg"`
}

// codexUsage is a token count. Input tokens include the cached ones, so
// cached_input_tokens is not added again. Reasoning tokens are part of the
// output tokens.
type codexUsage struct {
	InputTokens  *float64 `json:"input_tokens"`
	OutputTokens *float64 `json:"output_tokens"`
}

// codexMsg is the payload of an event in the older format. A token_count
// carries its numbers either flat (one model request each) or in info:
// total_token_usage is cumulative, last_token_usage one request.
type codexMsg struct {
	Type string `json:"type"`
	codexUsage
	Message          *string `json:"message"`
	LastAgentMessage *string `json:"last_agent_message"`
	Info             *struct {
		Total *codexUsage `json:"total_token_usage"`
		Last  *codexUsage `json:"last_token_usage"`
	} `json:"info"`
}

// codexTally adds up the usage of a codex stream.
type codexTally struct {
	in, out    int64      // summed over turns and per-request counts
	cumulative codexUsage // the last cumulative count, if any
	tokens     bool
	rep        report
	// items counts item events and completed turns: any means a model
	// answered.
	items int
}

// parseCodexJSONL reads the usage and the answer from the stdout of
// `codex exec --json`: usage is summed over turn.completed events (or, in
// the older format, over token_count events), and the answer is the last
// agent message. Lines that are not JSON objects are skipped; codex reports
// no cost.
func parseCodexJSONL(stdout []byte) report {
	var t codexTally
	eachJSONLine(stdout, t.add)
	return t.report()
}

// add takes one event into the tally.
func (t *codexTally) add(ev codexEvent) {
	if strings.HasPrefix(ev.Type, "item.") || ev.Type == "turn.completed" {
		t.items++
	}
	switch {
	case ev.Type == "turn.completed" && ev.Usage != nil:
		t.addUsage(*ev.Usage)
	case ev.Type == "item.completed" && ev.Item != nil && ev.Item.Type == "agent_message" && ev.Item.Text != nil:
		t.rep.Answer, t.rep.HasAnswer = *ev.Item.Text, true
	case ev.Type == "turn.failed" && ev.Error != nil:
		t.rep.Failure = lastLine([]byte(ev.Error.Message))
	case ev.Msg != nil:
		t.addMsg(*ev.Msg)
	}
}

// addMsg takes one event of the older format into the tally.
func (t *codexTally) addMsg(m codexMsg) {
	switch m.Type {
	case "token_count":
		switch {
		case m.Info != nil && m.Info.Total != nil && m.Info.Total.present():
			t.cumulative, t.tokens = *m.Info.Total, true
		case m.Info != nil && m.Info.Last != nil:
			t.addUsage(*m.Info.Last)
		default:
			t.addUsage(m.codexUsage)
		}
	case "agent_message":
		if m.Message != nil {
			t.rep.Answer, t.rep.HasAnswer = *m.Message, true
		}
	case "task_complete":
		if m.LastAgentMessage != nil {
			t.rep.Answer, t.rep.HasAnswer = *m.LastAgentMessage, true
		}
	}
}

// addUsage adds a per-turn or per-request count.
func (t *codexTally) addUsage(u codexUsage) {
	if !u.present() {
		return
	}
	in, out := u.counts()
	t.in, t.out, t.tokens = addTokens(t.in, in), addTokens(t.out, out), true
}

// report is the tally's result. A failed turn with no item and no
// completed turn before it failed before any model answered.
func (t *codexTally) report() report {
	rep := t.rep
	rep.Unstarted = rep.Failure != "" && t.items == 0 && !t.tokens
	if t.tokens {
		in, out := t.cumulative.counts()
		rep.Input, rep.Output = addTokens(t.in, in), addTokens(t.out, out)
		rep.Total, rep.Tokens = addTokens(rep.Input, rep.Output), true
	}
	return rep
}

// present reports whether u carries any count.
func (u codexUsage) present() bool { return u.InputTokens != nil || u.OutputTokens != nil }

// counts are u's input and output tokens; absent ones are 0.
func (u codexUsage) counts() (in, out int64) {
	in, _ = sumTokens(u.InputTokens)
	out, _ = sumTokens(u.OutputTokens)
	return in, out
}
