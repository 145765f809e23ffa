package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// geminiOutput is what `gemini --output-format json` prints: one JSON object
// (indented over many lines) with the final response, the session's stats
// and, when the call failed, an error. See JsonOutput in
// packages/core/src/output/types.ts and the SessionMetrics of its tests in
// json-formatter.test.ts (google-gemini/gemini-cli).
type geminiOutput struct {
	Response *string `json:"response"`
	Stats    *struct {
		Models map[string]struct {
			Tokens *geminiTokens `json:"tokens"`
		} `json:"models"`
	} `json:"stats"`
	Error *struct {
		Type    string  `json:"type"`
		Message string  `json:"message"`
		Code    float64 `json:"code"`
	} `json:"error"`
}

// geminiTokens is one model's token count: prompt tokens include the cached
// ones and tool-use prompts come on top; candidates and thoughts are output.
// Numbers are read as floats so that an odd value spoils only itself.
type geminiTokens struct {
	Prompt     *float64 `json:"prompt"`
	Tool       *float64 `json:"tool"`
	Candidates *float64 `json:"candidates"`
	Thoughts   *float64 `json:"thoughts"`
}

// maxGeminiStarts bounds how many lines parseGeminiJSON tries to decode the
// object from when stdout is not one JSON object, so that output of many
// lines starting with '{' costs linear time.
const maxGeminiStarts = 16

// parseGeminiJSON reads the usage, the answer and any error from the stdout
// of `gemini --output-format json`: the tokens of every model the session
// used, summed. Gemini CLI reports no cost. When stdout holds more than the
// object (a warning before it), the object is read from the last of the
// final lines that starts with '{'.
func parseGeminiJSON(stdout []byte) report {
	out, ok := findGeminiOutput(stdout)
	if !ok {
		return report{}
	}
	var rep report
	if out.Stats != nil {
		for _, m := range out.Stats.Models {
			if m.Tokens != nil {
				in, o, ok := m.Tokens.counts()
				rep.Input, rep.Output = addTokens(rep.Input, in), addTokens(rep.Output, o)
				rep.Tokens = rep.Tokens || ok
			}
		}
	}
	if rep.Tokens {
		rep.Total = addTokens(rep.Input, rep.Output)
	}
	if out.Response != nil {
		rep.Answer, rep.HasAnswer = *out.Response, true
	}
	if out.Error != nil {
		rep.Failure = geminiFailure(out.Error.Type, out.Error.Message)
		// The key was refused: no request went through.
		rep.Unstarted = !rep.Tokens && (out.Error.Code == 401 || out.Error.Code == 403)
	}
	return rep
}

// geminiFailure describes Gemini CLI's error report in one line. Its
// message is often the API's error body, as JSON: that becomes
// "400 INVALID_ARGUMENT: the API's message".
func geminiFailure(typ, msg string) string {
	var api struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(strings.TrimSpace(msg)), &api) == nil && api.Error != nil && api.Error.Message != "" {
		head := strings.TrimSpace(fmt.Sprintf("%d %s", api.Error.Code, api.Error.Status))
		if api.Error.Code == 0 {
			head = api.Error.Status
		}
		return failureLine(head, api.Error.Message)
	}
	return failureLine(typ, msg)
}

// parseGeminiOutput is parseGeminiJSON of stdout, or, when stdout holds no
// output object, of the tail of everything printed: Gemini CLI prints its
// JSON error report on stderr and nothing on stdout.
func parseGeminiOutput(stdout, tail []byte) report {
	if rep := parseGeminiJSON(stdout); rep.found() || rep.HasAnswer || rep.Failure != "" {
		return rep
	}
	rep := parseGeminiJSON(tail)
	rep.Answer, rep.HasAnswer = "", false // stderr is no answer
	if bytes.Contains(tail, []byte(geminiUntrusted)) {
		rep.Unstarted = true
	}
	return rep
}

// geminiUntrusted is how Gemini CLI refuses a folder it does not trust,
// before any request.
const geminiUntrusted = "Gemini CLI is not running in a trusted directory"

// counts are t's input and output tokens; ok reports that t carries any.
func (t geminiTokens) counts() (in, out int64, ok bool) {
	in, hasIn := sumTokens(t.Prompt, t.Tool)
	out, hasOut := sumTokens(t.Candidates, t.Thoughts)
	return in, out, hasIn || hasOut
}

// failureLine describes an error an agent reported, of a kind, in one line.
func failureLine(typ, msg string) string {
	line := lastLine([]byte(msg))
	switch {
	case typ != "" && line != "":
		return typ + ": " + line
	case typ != "":
		return typ
	case line != "":
		return line
	}
	return "error"
}

// findGeminiOutput decodes the output object: the whole of stdout, or else
// the first JSON value from one of the last maxGeminiStarts lines that start
// with '{', trying the latest first.
func findGeminiOutput(stdout []byte) (geminiOutput, bool) {
	if out, ok := decodeGeminiOutput(bytes.TrimSpace(stdout)); ok {
		return out, true
	}
	tries := 0
	for end := len(stdout); end > 0 && tries < maxGeminiStarts; {
		start := bytes.LastIndexByte(stdout[:end], '\n') + 1
		if start < len(stdout) && stdout[start] == '{' {
			tries++
			dec := json.NewDecoder(bytes.NewReader(stdout[start:]))
			var raw json.RawMessage
			if dec.Decode(&raw) == nil {
				if out, ok := decodeGeminiOutput(raw); ok {
					return out, true
				}
			}
		}
		end = start - 1
	}
	return geminiOutput{}, false
}

// decodeGeminiOutput decodes b when it is an object with a response, stats
// or error. A value of an unexpected type spoils only its own field.
func decodeGeminiOutput(b []byte) (geminiOutput, bool) {
	if len(b) == 0 || b[0] != '{' {
		return geminiOutput{}, false
	}
	var out geminiOutput
	if err := json.Unmarshal(b, &out); err != nil && !isTypeError(err) {
		return geminiOutput{}, false
	}
	return out, out.Response != nil || out.Stats != nil || out.Error != nil
}
