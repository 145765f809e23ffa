package loop

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/loop-action/loop-action/internal/process"
)

// Check types.
const (
	CheckCommand    = "command"
	CheckTest       = "test"
	CheckBuild      = "build"
	CheckLint       = "lint"
	CheckFileExists = "file_exists"
	CheckRegex      = "regex"
	CheckMetric     = "metric"
	CheckJudge      = "judge"
	CheckManual     = "manual"
)

// CheckTypes lists every check type in documentation order.
var CheckTypes = []string{CheckCommand, CheckTest, CheckBuild, CheckLint, CheckFileExists, CheckRegex, CheckMetric, CheckJudge, CheckManual}

// MetricOps lists the comparison operators of metric checks.
var MetricOps = []string{">", ">=", "<", "<=", "==", "!="}

// Check is one measurement that decides a goal. Which keys apply depends on
// Type; a key that does not apply to the type is an error.
type Check struct {
	Type       string   `toml:"type" json:"type" jsonschema:"required,enum=command,enum=test,enum=build,enum=lint,enum=file_exists,enum=regex,enum=metric,enum=judge,enum=manual" jsonschema_description:"What the check measures. test, build and lint are command checks with a clearer name."`
	Run        string   `toml:"run" json:"run,omitempty" jsonschema_description:"command checks: run with /bin/sh -c in the loop root."`
	Argv       []string `toml:"argv" json:"argv,omitempty" jsonschema:"minItems=1" jsonschema_description:"command checks: run this argv without a shell (instead of run)."`
	Timeout    Duration `toml:"timeout" json:"timeout,omitempty" jsonschema_description:"command checks: limit, after which the process group is killed. Default 10m."`
	ExpectExit int      `toml:"expect_exit" json:"expect_exit,omitempty" jsonschema:"minimum=0,maximum=255,default=0" jsonschema_description:"command checks: the exit code that passes."`
	Path       string   `toml:"path" json:"path,omitempty" jsonschema_description:"file_exists and regex: a path relative to the loop root."`
	NonEmpty   bool     `toml:"non_empty" json:"non_empty,omitempty" jsonschema_description:"file_exists: the file must not be empty (a directory must have entries)."`
	Pattern    string   `toml:"pattern" json:"pattern,omitempty" jsonschema_description:"regex: a Go regular expression searched in the file (multi-line mode: ^ and $ match at line breaks)."`
	Name       string   `toml:"name" json:"name,omitempty" jsonschema_description:"metric: the key in the JSON object that is the metrics command's stdout; its value must be a JSON number."`
	Op         string   `toml:"op" json:"op,omitempty" jsonschema:"enum=>,enum=>=,enum=<,enum=<=,enum===,enum=!=" jsonschema_description:"metric: how the value compares with value."`
	Value      float64  `toml:"value" json:"value,omitempty" jsonschema_description:"metric: the number the metric is compared with."`
	Node       string   `toml:"node" json:"node,omitempty" jsonschema_description:"judge: the judge node whose verdict decides the check."`
	MinScore   float64  `toml:"min_score" json:"min_score,omitempty" jsonschema:"minimum=0,maximum=10" jsonschema_description:"judge: the lowest passing score (0-10)."`
	Prompt     string   `toml:"prompt" json:"prompt,omitempty" jsonschema_description:"manual: the question the reviewer answers."`
}

// IsCommand reports whether the check runs a command (command, test, build, lint).
func (c Check) IsCommand() bool {
	switch c.Type {
	case CheckCommand, CheckTest, CheckBuild, CheckLint:
		return true
	}
	return false
}

// checkKeys lists the keys each kind of check accepts besides type.
var checkKeys = map[string][]string{
	CheckCommand:    {"run", "argv", "timeout", "expect_exit"},
	CheckFileExists: {"path", "non_empty"},
	CheckRegex:      {"path", "pattern"},
	CheckMetric:     {"name", "op", "value"},
	CheckJudge:      {"node", "min_score"},
	CheckManual:     {"prompt"},
}

// keysFor returns the keys a check of type typ accepts, or nil for an unknown type.
func keysFor(typ string) []string {
	if (Check{Type: typ}).IsCommand() {
		typ = CheckCommand
	}
	return checkKeys[typ]
}

// accepts reports whether a check of type typ accepts key.
func accepts(typ, key string) bool { return slices.Contains(keysFor(typ), key) }

// Describe renders the check in one line, for plans and prompts.
func (c Check) Describe() string {
	switch {
	case c.IsCommand():
		return fmt.Sprintf("%s `%s` (exit %d, timeout %s)", c.Type, cmp.Or(c.Run, process.Quote(c.Argv)), c.ExpectExit, c.Timeout)
	case c.Type == CheckFileExists && c.NonEmpty:
		return fmt.Sprintf("file_exists `%s`, not empty", c.Path)
	case c.Type == CheckFileExists:
		return fmt.Sprintf("file_exists `%s`", c.Path)
	case c.Type == CheckRegex:
		return fmt.Sprintf("regex /%s/ in `%s`", c.Pattern, c.Path)
	case c.Type == CheckMetric:
		return fmt.Sprintf("metric %s %s %g", c.Name, c.Op, c.Value)
	case c.Type == CheckJudge && c.MinScore > 0:
		return fmt.Sprintf("judge %s, min_score %g", c.Node, c.MinScore)
	case c.Type == CheckJudge:
		return fmt.Sprintf("judge %s", c.Node)
	case c.Prompt != "":
		return fmt.Sprintf("manual review: %s", c.Prompt)
	}
	return "manual review"
}
