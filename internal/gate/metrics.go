package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/phrase"
)

// metricValues is the metrics command's output, parsed once per evaluation.
type metricValues struct {
	values  map[string]json.RawMessage
	problem string // why no metric can be read; "" when values holds the output
}

// The metrics format. The metrics command's stdout must be exactly one
// JSON object, with nothing but JSON white space around it: it may span
// many lines (jq's output does). Anything else fails every metric check:
// no object, text or a second object before or after it, an array, a
// duplicated key (`{"coverage": 40, "coverage": 100}`: which one counts
// would be a guess) and a stdout longer than the part of it the runner
// keeps. The program the metrics command runs may be code agents wrote
// (a test suite, say): were a line it printed taken for the metrics, it
// could forge them. Its output belongs on stderr, which is never read.
// A key's value may be any JSON value: a check that names a key whose
// value is not a number fails (metricRuling), and other keys are
// ignored.

// parseMetrics reads the JSON object the metrics command printed.
func parseMetrics(m *MetricsResult, limit time.Duration) metricValues {
	if m == nil {
		return metricValues{problem: "no metrics: the metrics command did not run"}
	}
	r := m.Command
	if !r.OKRun() {
		return metricValues{problem: "metrics command " + CommandLine(r, 0, limit)}
	}
	vals, why := oneObject([]byte(r.Stdout))
	if r.StdoutCut {
		vals, why = nil, fmt.Sprintf("it is longer than the %s of it the runner keeps", phrase.Bytes(int64(len(r.Stdout))))
	}
	if why != "" {
		return metricValues{problem: fmt.Sprintf("metrics: stdout of `%s` is not exactly one JSON object: %s", phrase.Line(r.Command, 80), why)}
	}
	return metricValues{values: vals}
}

// oneObject decodes out as exactly one JSON object, or says why it is not
// one.
func oneObject(out []byte) (map[string]json.RawMessage, string) {
	start := skipSpace(out, 0)
	switch {
	case start == len(out):
		return nil, "it is empty"
	case out[start] != '{':
		return nil, notObject(out, start)
	}
	dec := json.NewDecoder(bytes.NewReader(out[start:]))
	vals, why := decodeObject(dec, out, start)
	if why != "" {
		return nil, why
	}
	rest := skipSpace(out, start+int(dec.InputOffset()))
	switch {
	case rest == len(out):
		return vals, ""
	case out[rest] == '{':
		return nil, fmt.Sprintf("another JSON object after it at line %d", lineAt(out, rest))
	}
	return nil, fmt.Sprintf("text after it at line %d: %s", lineAt(out, rest), lineFrom(out, rest))
}

// decodeObject decodes the object dec starts at (offset start of out),
// refusing a key that appears twice.
func decodeObject(dec *json.Decoder, out []byte, start int) (map[string]json.RawMessage, string) {
	if _, err := dec.Token(); err != nil { // the '{'
		return nil, syntax(err, out, start)
	}
	vals := map[string]json.RawMessage{}
	lines := map[string]int{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, syntax(err, out, start)
		}
		key, _ := t.(string) // an object's tokens before a value are its keys
		line := lineAt(out, start+int(dec.InputOffset()))
		if first, ok := lines[key]; ok {
			return nil, fmt.Sprintf("key %q appears twice, at lines %d and %d", key, first, line)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntax(err, out, start)
		}
		vals[key], lines[key] = raw, line
	}
	if _, err := dec.Token(); err != nil { // the '}'
		return nil, syntax(err, out, start)
	}
	return vals, ""
}

// syntax says where the object (at offset start of out) is not JSON.
func syntax(err error, out []byte, start int) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("it is not valid JSON at line %d: %s", lineAt(out, start+int(se.Offset)), se)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Sprintf("it ends inside the object that starts at line %d", lineAt(out, start))
	}
	return "it is not valid JSON: " + err.Error()
}

// notObject says what out holds from offset start, where no object starts.
func notObject(out []byte, start int) string {
	var v any
	if dec := json.NewDecoder(bytes.NewReader(out[start:])); dec.Decode(&v) == nil && skipSpace(out, start+int(dec.InputOffset())) == len(out) {
		return fmt.Sprintf("it is a JSON %s, not an object", jsonKind(v))
	}
	if bytes.IndexByte(out[start:], '{') < 0 {
		return fmt.Sprintf("no JSON object in it, only text, at line %d: %s", lineAt(out, start), lineFrom(out, start))
	}
	return fmt.Sprintf("text before it at line %d: %s", lineAt(out, start), lineFrom(out, start))
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	}
	return "null"
}

// skipSpace returns the offset of the first byte of out at or after i
// that is not JSON white space.
func skipSpace(out []byte, i int) int {
	for i < len(out) && (out[i] == ' ' || out[i] == '\t' || out[i] == '\n' || out[i] == '\r') {
		i++
	}
	return i
}

// lineAt is the line number of offset i in out.
func lineAt(out []byte, i int) int { return bytes.Count(out[:min(i, len(out))], []byte("\n")) + 1 }

// lineFrom is the rest of the line at offset i, cut for an evidence line.
func lineFrom(out []byte, i int) string {
	line, _, _ := bytes.Cut(out[i:], []byte("\n"))
	return phrase.Line(string(line), 60)
}

// OKRun reports whether the command ran and exited 0.
func (r CommandResult) OKRun() bool { return r.exited(0) }

// exited reports whether the command ran and exited with code.
func (r CommandResult) exited(code int) bool {
	return r.StartErr == "" && !r.TimedOut && r.Stopped == "" && r.Signal == "" && r.ExitCode == code
}

func metricRuling(m metricValues, ch loop.Check) (Status, string) {
	if m.problem != "" {
		return Fail, m.problem
	}
	raw, ok := m.values[ch.Name]
	if !ok {
		found := slices.Sorted(maps.Keys(m.values))
		return Fail, fmt.Sprintf("metric %q is missing from the metrics (found: %s)", ch.Name, listOrNone(found))
	}
	var num json.Number
	if err := json.Unmarshal(raw, &num); err != nil || !isNumber(raw) {
		return Fail, fmt.Sprintf("metric %q is %s, not a number", ch.Name, phrase.Line(string(raw), 40))
	}
	v, err := num.Float64()
	if err != nil {
		return Fail, fmt.Sprintf("metric %q is %s, not a usable number", ch.Name, num)
	}
	want := strconv.FormatFloat(ch.Value, 'g', -1, 64)
	got := strconv.FormatFloat(v, 'g', -1, 64)
	if compare(v, ch.Op, ch.Value) {
		return Pass, fmt.Sprintf("%s = %s (%s %s)", ch.Name, got, ch.Op, want)
	}
	return Fail, fmt.Sprintf("%s = %s, needs %s %s", ch.Name, got, ch.Op, want)
}

// isNumber reports whether raw is a JSON number (not a string holding one).
func isNumber(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9'))
}

func compare(v float64, op string, want float64) bool {
	switch op {
	case ">":
		return v > want
	case ">=":
		return v >= want
	case "<":
		return v < want
	case "<=":
		return v <= want
	case "==":
		return v == want
	case "!=":
		return v != want
	}
	return false
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
