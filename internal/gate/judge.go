package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// JudgeVerdict is the JSON object a judge ends its answer with.
type JudgeVerdict struct {
	Verdict      string   `json:"verdict"` // "pass" or "fail"
	Reason       string   `json:"reason,omitempty"`
	Evidence     string   `json:"evidence,omitempty"`
	Score        *float64 `json:"score,omitempty"` // 0-10 when given
	SuggestedFix string   `json:"suggested_fix,omitempty"`
}

// Limits on the search for a verdict, so that a huge or hostile answer
// cannot make parsing slow.
const (
	verdictWindow   = 256 << 10 // only the end of an answer is searched
	verdictAttempts = 512       // at most this many '{' are tried
)

// ErrNoVerdict is returned when an answer holds no JSON object with a
// "verdict" key.
var ErrNoVerdict = errors.New(`no JSON object with a "verdict" key`)

// ParseVerdict finds a judge's verdict: the last JSON object in the answer
// that has a "verdict" key, fenced in a ```json block or not. The verdict
// must be "pass" or "fail" and a score, when given, a number from 0 to 10.
func ParseVerdict(answer string) (JudgeVerdict, error) {
	s := answer
	if len(s) > verdictWindow {
		s = s[len(s)-verdictWindow:]
	}
	end := len(s)
	for tries := 0; tries < verdictAttempts; tries++ {
		i := strings.LastIndexByte(s[:end], '{')
		if i < 0 {
			break
		}
		end = i
		var fields map[string]json.RawMessage
		if json.NewDecoder(strings.NewReader(s[i:])).Decode(&fields) != nil {
			continue
		}
		if _, ok := fields["verdict"]; ok {
			return decodeVerdict(fields)
		}
	}
	return JudgeVerdict{}, ErrNoVerdict
}

func decodeVerdict(f map[string]json.RawMessage) (JudgeVerdict, error) {
	var v JudgeVerdict
	if err := json.Unmarshal(f["verdict"], &v.Verdict); err != nil {
		return v, fmt.Errorf(`"verdict" must be a string: %s`, phrase.Line(string(f["verdict"]), 40))
	}
	v.Verdict = strings.ToLower(strings.TrimSpace(v.Verdict))
	if v.Verdict != "pass" && v.Verdict != "fail" {
		return v, fmt.Errorf(`"verdict" must be "pass" or "fail", not %q`, phrase.Line(v.Verdict, 40))
	}
	v.Reason = textField(f["reason"])
	v.Evidence = textField(f["evidence"])
	v.SuggestedFix = textField(f["suggested_fix"])
	if raw, ok := f["score"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var score float64
		if err := json.Unmarshal(raw, &score); err != nil || score < 0 || score > 10 {
			return v, fmt.Errorf(`"score" must be a number from 0 to 10, not %s`, phrase.Line(string(raw), 40))
		}
		v.Score = &score
	}
	return v, nil
}

// textField reads a string, or an array of strings joined with "; ".
// Anything else reads as empty.
func textField(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s)
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.TrimSpace(strings.Join(list, "; "))
	}
	return ""
}

// judgeRuling rules on a judge check from the judge's answers, refusing a
// judge that shares a provider with a builder of the goal.
func judgeRuling(cfg *loop.Config, g loop.Goal, ch loop.Check, judges map[string]JudgeResult) (Status, string) {
	who := fmt.Sprintf("judge %q", ch.Node)
	r, ok := judges[ch.Node]
	switch {
	case !ok:
		return Fail, who + " gave no verdict this iteration"
	case r.Err != "":
		return Fail, fmt.Sprintf("%s could not run: %s", who, phrase.Line(r.Err, 200))
	}
	for _, b := range cfg.Builders(g.Name) {
		if b.Provider == r.Provider {
			return Fail, fmt.Sprintf("%s refused: it ran on provider %q, which also runs builder %q of this goal; a judge must be independent",
				who, r.Provider, b.Name)
		}
	}
	if len(r.Answers) == 0 {
		return Fail, who + " gave no answer"
	}
	v, err := ParseVerdict(r.Answers[len(r.Answers)-1])
	if err != nil {
		return Fail, fmt.Sprintf("%s gave no parseable verdict in %s: %v", who, phrase.Plural(len(r.Answers), "attempt", "attempts"), err)
	}
	return verdictRuling(who, v, ch.MinScore)
}

func verdictRuling(who string, v JudgeVerdict, minScore float64) (Status, string) {
	score := ""
	if v.Score != nil {
		score = fmt.Sprintf(" (score %g/10)", *v.Score)
	}
	switch {
	case v.Verdict == "fail":
		return Fail, fmt.Sprintf("%s ruled fail%s: %s", who, score, phrase.Line(cmp.Or(v.Reason, "no reason given"), 200))
	case v.Evidence == "":
		return Fail, fmt.Sprintf("%s ruled pass without evidence, which counts as a fail", who)
	case minScore > 0 && v.Score == nil:
		return Fail, fmt.Sprintf("%s ruled pass without a score; min_score is %g", who, minScore)
	case minScore > 0 && *v.Score < minScore:
		return Fail, fmt.Sprintf("%s ruled pass with score %g, below min_score %g: %s", who, *v.Score, minScore, phrase.Line(cmp.Or(v.Reason, v.Evidence), 200))
	}
	return Pass, fmt.Sprintf("%s ruled pass%s: %s", who, score, phrase.Line(v.Evidence, 200))
}
