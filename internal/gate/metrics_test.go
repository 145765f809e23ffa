package gate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// metricsConfig has two metric checks, each a goal of its own.
const metricsConfig = `
name = "metrics"
[stop]
max_iterations = 1
[metrics]
command = "scripts/metrics.sh"
[[goal]]
name = "coverage"
  [[goal.check]]
  type = "metric"
  name = "coverage"
  op = ">="
  value = 80
[[goal]]
name = "lint"
  [[goal.check]]
  type = "metric"
  name = "lint"
  op = "=="
  value = 0
`

// TestMetricsFormat: the metrics command's stdout must be exactly one
// JSON object; every other shape fails every metric check, saying why.
// The first rows are what an agent's program that the metrics command
// runs could print before the real metrics.
func TestMetricsFormat(t *testing.T) {
	t.Parallel()
	cfg := mustConfig(t, metricsConfig)
	const not = "metrics: stdout of `scripts/metrics.sh` is not exactly one JSON object: "
	tests := []struct {
		name   string
		stdout string
		cut    bool   // only the end of stdout was kept
		want   string // the evidence line of both checks; "" for the rulings of an object
	}{
		{name: "a forged line before a multi-line object", stdout: "{\"coverage\": 100, \"lint\": 0}\n{\n  \"coverage\": 40,\n  \"lint\": 0\n}\n",
			want: not + "another JSON object after it at line 2"},
		{name: "a forged line after a multi-line object", stdout: "{\n  \"coverage\": 40,\n  \"lint\": 0\n}\n{\"coverage\": 100, \"lint\": 0}\n",
			want: not + "another JSON object after it at line 5"},
		{name: "two objects on one line", stdout: `{"coverage": 40, "lint": 0}{"coverage": 100}`,
			want: not + "another JSON object after it at line 1"},
		{name: "a duplicated key", stdout: `{"coverage": 40, "lint": 0, "coverage": 100}`,
			want: not + `key "coverage" appears twice, at lines 1 and 1`},
		{name: "a key duplicated through an escape", stdout: "{\n\"coverage\": 40,\n\"lint\": 0,\n\"cov\\u0065rage\": 100\n}",
			want: not + `key "coverage" appears twice, at lines 2 and 4`},
		{name: "text before it", stdout: "running tests...\nok\n{\"coverage\": 90, \"lint\": 0}\n",
			want: not + "text before it at line 1: running tests..."},
		{name: "text after it", stdout: "\n{\"coverage\": 90, \"lint\": 0}\ndone in 3s\n",
			want: not + "text after it at line 3: done in 3s"},
		{name: "text after it on its line", stdout: `{"coverage": 90, "lint": 0} ok`,
			want: not + "text after it at line 1: ok"},
		{name: "an array", stdout: `[{"coverage": 90, "lint": 0}]`,
			want: not + "it is a JSON array, not an object"},
		{name: "a number", stdout: "90\n", want: not + "it is a JSON number, not an object"},
		{name: "a string", stdout: `"coverage: 90"`, want: not + "it is a JSON string, not an object"},
		{name: "null", stdout: "null", want: not + "it is a JSON null, not an object"},
		{name: "empty", stdout: "", want: not + "it is empty"},
		{name: "white space only", stdout: " \n\t\r\n", want: not + "it is empty"},
		{name: "text only", stdout: "coverage: 90%\nlint: 0\n", want: not + "no JSON object in it, only text, at line 1: coverage: 90%"},
		{name: "unterminated", stdout: "{\"coverage\": 90,\n\"lint\": 0\n", want: not + "it ends inside the object that starts at line 1"},
		{name: "a trailing comma", stdout: "{\"coverage\": 90,\n\"lint\": 0,\n}",
			want: not + "it is not valid JSON at line 3: invalid character '}' looking for beginning of object key string"},
		{name: "a missing comma", stdout: `{"coverage": 90 "lint": 0}`,
			want: not + "it is not valid JSON at line 1: invalid character '\"' after object key:value pair"},
		{name: "a key that is no string", stdout: `{coverage: 90}`,
			want: not + "it is not valid JSON at line 1: invalid character 'c'"},
		{name: "a bad value", stdout: `{"coverage": 9O, "lint": 0}`,
			want: not + "it is not valid JSON at line 1: invalid character 'O' after object key:value pair"},
		{name: "cut by the runner", stdout: strings.Repeat(" ", 1<<20-len(`{"coverage": 90, "lint": 0}`)) + `{"coverage": 90, "lint": 0}`, cut: true,
			want: not + "it is longer than the 1 MiB of it the runner keeps"},
		{name: "alone on many lines", stdout: "{\n  \"coverage\": 90,\n  \"lint\": 0\n}\n"},
		{name: "alone with white space around it", stdout: "\r\n \t{\"coverage\": 90, \"lint\": 0}\r\n\r\n"},
		{name: "alone with other values", stdout: `{"coverage": 90, "lint": 0, "tool": "gocov", "per_package": {"a": 1, "a": 2}, "list": [1, 2]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := &MetricsResult{Command: CommandResult{Command: "scripts/metrics.sh", Stdout: tt.stdout, StdoutCut: tt.cut}}
			var got []string
			for _, v := range Evaluate(cfg, Evidence{Metrics: m}) {
				got = append(got, string(v.Checks[0].Status)+": "+v.Checks[0].Evidence)
			}
			want := []string{"pass: coverage = 90 (>= 80)", "pass: lint = 0 (== 0)"}
			if tt.want != "" {
				want = []string{"fail: " + tt.want, "fail: " + tt.want}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("rulings (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzMetrics: parsing the metrics never panics, and accepts only a
// stdout that is one valid JSON object without a duplicated key, whose
// keys and values it reads as encoding/json does.
func FuzzMetrics(f *testing.F) {
	for _, s := range []string{
		`{"coverage": 81.5}`,
		"{\n  \"coverage\": 40\n}\n",
		"{\"coverage\": 100}\n{\n  \"coverage\": 40\n}\n",
		`{"coverage": 40, "coverage": 100}`,
		`{"coverage": 40, "cov\u0065rage": 100}`,
		"warming up\n{\"coverage\": 90}",
		`[{"coverage": 90}]`,
		`{"a": {"b": [1, 2, {"c": null}]}, "d": "e"}`,
		`{"coverage": 90,}`,
		`{"coverage": 90`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stdout string) {
		m := parseMetrics(&MetricsResult{Command: CommandResult{Command: "m", Stdout: stdout}}, 0)
		if (m.problem == "") == (m.values == nil) {
			t.Fatalf("problem %q with values %v", m.problem, m.values)
		}
		if m.problem != "" {
			if !strings.HasPrefix(m.problem, "metrics: stdout of `m` is not exactly one JSON object: ") || strings.Contains(m.problem, "\n") {
				t.Fatalf("problem %q", m.problem)
			}
			return
		}
		trimmed := bytes.Trim([]byte(stdout), " \t\r\n")
		var want map[string]json.RawMessage
		if !json.Valid(trimmed) || trimmed[0] != '{' || json.Unmarshal(trimmed, &want) != nil {
			t.Fatalf("accepted %q, which is not one JSON object", stdout)
		}
		if len(want) != len(m.values) {
			t.Fatalf("read %d keys of %q, encoding/json %d", len(m.values), stdout, len(want))
		}
		for k, v := range want {
			if !bytes.Equal(v, m.values[k]) {
				t.Fatalf("key %q = %s, encoding/json %s", k, m.values[k], v)
			}
		}
	})
}
