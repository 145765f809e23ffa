package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// claudeResult is the part of Claude Code's result object that usage reads.
// `claude -p --output-format json` prints it alone; with --verbose it is the
// last element of an array of messages, and with --output-format
// stream-json it is the last line.
type claudeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	// APIErrorStatus is the HTTP status of the API error that ended the
	// session, when one did.
	APIErrorStatus *int         `json:"api_error_status"`
	Result         *string      `json:"result"`
	TotalCostUSD   *float64     `json:"total_cost_usd"`
	CostUSD        *float64     `json:"cost_usd"` // versions before total_cost_usd
	Usage          *claudeUsage `json:"usage"`
	// ModelUsage is the session's usage per model: every request, the
	// title request, small-model and subagent calls too, where usage
	// holds the main conversation's only.
	ModelUsage map[string]claudeModelUsage `json:"modelUsage"`
}

// claudeModelUsage is one model's entry in modelUsage.
type claudeModelUsage struct {
	InputTokens              *float64 `json:"inputTokens"`
	CacheCreationInputTokens *float64 `json:"cacheCreationInputTokens"`
	CacheReadInputTokens     *float64 `json:"cacheReadInputTokens"`
	OutputTokens             *float64 `json:"outputTokens"`
	CostUSD                  *float64 `json:"costUSD"`
}

// claudeUsage is the token usage of a Claude Code result. Numbers are read as
// floats so that an odd value spoils only itself; absent ones are nil.
type claudeUsage struct {
	InputTokens              *float64 `json:"input_tokens"`
	CacheCreationInputTokens *float64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *float64 `json:"cache_read_input_tokens"`
	OutputTokens             *float64 `json:"output_tokens"`
}

// counts are u's input tokens (uncached, cache-writing and cache-reading
// together) and output tokens; ok reports that u carries any of them.
func (u claudeUsage) counts() (in, out int64, ok bool) {
	in, hasIn := sumTokens(u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
	out, hasOut := sumTokens(u.OutputTokens)
	return in, out, hasIn || hasOut
}

// claudeModelCounts sums the input tokens (uncached, cache-writing and
// cache-reading) and output tokens of every model; ok reports that any
// entry carries a count.
func claudeModelCounts(models map[string]claudeModelUsage) (in, out int64, ok bool) {
	for _, m := range models {
		u := claudeUsage{InputTokens: m.InputTokens, CacheCreationInputTokens: m.CacheCreationInputTokens,
			CacheReadInputTokens: m.CacheReadInputTokens, OutputTokens: m.OutputTokens}
		i, o, has := u.counts()
		in, out, ok = addTokens(in, i), addTokens(out, o), ok || has
	}
	return in, out, ok
}

// claudeModelCost sums the models' costs, for a result without
// total_cost_usd; ok reports that every model has a valid one.
func claudeModelCost(models map[string]claudeModelUsage) (float64, bool) {
	sum := 0.0
	for _, m := range models {
		if m.CostUSD == nil {
			return 0, false
		}
		c, ok := costUSD(*m.CostUSD)
		if !ok {
			return 0, false
		}
		sum = addCost(sum, c)
	}
	return sum, true
}

// parseClaudeJSON reads the usage, cost and answer from the stdout of
// `claude -p --output-format json` (or stream-json, or --verbose). Tokens
// are summed over modelUsage, every model the session used, when it has
// any (total_cost_usd covers them all), else read from usage; input tokens
// are the uncached, cache-writing and cache-reading ones together.
// A result with is_error, or with an error_* subtype (such as
// error_max_turns, which Claude Code does not flag with is_error), is a
// failure.
func parseClaudeJSON(stdout []byte) report {
	res, ok := findClaudeResult(stdout)
	if !ok {
		return claudeStream(stdout)
	}
	var rep report
	switch {
	case len(res.ModelUsage) > 0:
		rep.Input, rep.Output, rep.Tokens = claudeModelCounts(res.ModelUsage)
	case res.Usage != nil:
		rep.Input, rep.Output, rep.Tokens = res.Usage.counts()
	}
	if rep.Tokens {
		rep.Total = addTokens(rep.Input, rep.Output)
	}
	switch {
	case res.TotalCostUSD != nil:
		rep.CostUSD, rep.Cost = costUSD(*res.TotalCostUSD)
	case res.CostUSD != nil:
		rep.CostUSD, rep.Cost = costUSD(*res.CostUSD)
	case len(res.ModelUsage) > 0:
		rep.CostUSD, rep.Cost = claudeModelCost(res.ModelUsage)
	}
	if res.Result != nil {
		rep.Answer, rep.HasAnswer = *res.Result, true
	}
	if res.IsError || strings.HasPrefix(res.Subtype, "error") {
		rep.Failure = claudeFailure(res)
	}
	return rep
}

// claudeFailure describes a failed result in one line: its result text,
// after the subtype when that says what failed (error_max_turns). An API
// error comes with subtype "success" and is_error, which say nothing: its
// text already reads "API Error: 400 …", or else is prefixed with the
// status ("API error 401: Invalid API key · …").
func claudeFailure(res claudeResult) string {
	what := res.Subtype
	if what == "success" || what == "" {
		what = ""
		if res.APIErrorStatus != nil {
			what = fmt.Sprintf("API error %d", *res.APIErrorStatus)
		}
	}
	line := ""
	if res.Result != nil {
		line = lastLine([]byte(*res.Result))
	}
	switch {
	case line != "" && (what == "" || strings.HasPrefix(strings.ToLower(line), "api error")):
		return line
	case line != "":
		return what + ": " + line
	case what != "":
		return what
	}
	return "is_error"
}

// findClaudeResult finds the result object in stdout: the whole of it, the
// last result in a JSON array, or else the last line that is a result object
// (stream-json, or a result after lines of noise).
func findClaudeResult(stdout []byte) (claudeResult, bool) {
	trimmed := bytes.TrimSpace(stdout)
	var msgs []json.RawMessage
	if len(trimmed) == 0 || trimmed[0] != '[' || json.Unmarshal(trimmed, &msgs) != nil {
		msgs = nil
		for line := range bytes.Lines(trimmed) {
			msgs = append(msgs, line)
		}
		msgs = append(msgs, trimmed) // tried first
	}
	for _, m := range slices.Backward(msgs) {
		if res, ok := decodeClaudeResult(m); ok {
			return res, true
		}
	}
	return claudeResult{}, false
}

// decodeClaudeResult decodes b when it is a result object: one whose type is
// "result", or that has no type but a result field (early versions). A value
// of an unexpected type spoils only its own field.
func decodeClaudeResult(b []byte) (claudeResult, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return claudeResult{}, false
	}
	var res claudeResult
	if err := json.Unmarshal(b, &res); err != nil && !isTypeError(err) {
		return claudeResult{}, false
	}
	if res.Type == "result" || (res.Type == "" && res.Result != nil) {
		return res, true
	}
	return claudeResult{}, false
}

// isTypeError reports whether err is only about a JSON value of the wrong
// type, after which encoding/json has filled in every other field.
func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// claudeEvent is a line of stream-json that is not the result: an
// assistant message, or a system event such as api_retry, which Claude
// Code prints before each retry of a failed request.
type claudeEvent struct {
	Type        string   `json:"type"`
	Subtype     string   `json:"subtype"`
	Attempt     *float64 `json:"attempt"`
	MaxRetries  *float64 `json:"max_retries"`
	ErrorStatus *float64 `json:"error_status"`
	Error       string   `json:"error"`
}

// claudeStream reads a stream-json output that has no result, as when the
// call was ended early: the last api_retry event is its failure, and with
// no assistant message before it no model answered (Unstarted).
func claudeStream(stdout []byte) report {
	var rep report
	var retry *claudeEvent
	answered := false
	eachJSONLine(stdout, func(ev claudeEvent) {
		switch {
		case ev.Type == "assistant":
			answered = true
		case ev.Type == "system" && ev.Subtype == "api_retry":
			retry = &ev
		}
	})
	if retry != nil {
		rep.Failure = retryLine(*retry)
		rep.Unstarted = !answered
	}
	return rep
}

// retryLine describes an api_retry event: "API error 401
// (authentication_failed), retry 1 of 10".
func retryLine(ev claudeEvent) string {
	line := "API error"
	if ev.ErrorStatus != nil {
		line += fmt.Sprintf(" %.0f", *ev.ErrorStatus)
	}
	if e := lastLine([]byte(ev.Error)); e != "" {
		line += " (" + e + ")"
	}
	if ev.Attempt != nil && ev.MaxRetries != nil {
		line += fmt.Sprintf(", retry %.0f of %.0f", *ev.Attempt, *ev.MaxRetries)
	}
	return line
}
