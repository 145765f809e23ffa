package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// parseMetrics reads the JSON object the metrics command printed: its whole
// stdout, or else its last line that is a JSON object.
func parseMetrics(m *MetricsResult, limit time.Duration) metricValues {
	if m == nil {
		return metricValues{problem: "no metrics: the metrics command did not run"}
	}
	r := m.Command
	if !r.OKRun() {
		return metricValues{problem: "metrics command " + CommandLine(r, 0, limit)}
	}
	out := bytes.TrimSpace([]byte(r.Stdout))
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(out, &vals); err == nil && vals != nil {
		return metricValues{values: vals}
	}
	lines := bytes.Split(out, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if err := json.Unmarshal(bytes.TrimSpace(lines[i]), &vals); err == nil && vals != nil {
			return metricValues{values: vals}
		}
	}
	return metricValues{problem: fmt.Sprintf("the metrics command printed no JSON object: %q", phrase.Line(string(out), 80))}
}

// OKRun reports whether the command ran and exited 0.
func (r CommandResult) OKRun() bool {
	return r.StartErr == "" && !r.TimedOut && r.Stopped == "" && r.Signal == "" && r.ExitCode == 0
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
