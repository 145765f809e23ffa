package provider

import (
	"slices"
	"testing"

	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

// standIns are the recordings the stand-in CLIs print (testdata/presets)
// and the parsers' tests read, each with the captures of the real CLI
// (testdata/real, written by scripts/realcli.sh -update) it must hold to,
// and the paths it may have that those captures lack, each with why.
var standIns = []struct {
	recording string
	real      []string
	extra     map[string]string // path: kind → why the real captures lack it
}{
	{recording: "claude/success.json", real: []string{"real/claude-code/success.out"}},
	{recording: "claude/is-error.json", real: []string{"real/claude-code/401.out", "real/claude-code/400.out"}},
	{recording: "codex/exec.jsonl", real: []string{"real/codex/success.out"}, extra: map[string]string{
		"item.completed:item.aggregated_output: string": "a command_execution item: the suite's model runs no shell command",
		"item.completed:item.command: string":           "a command_execution item",
		"item.completed:item.exit_code: number":         "a command_execution item",
		"item.started:item.aggregated_output: string":   "a command_execution item",
		"item.started:item.command: string":             "a command_execution item",
		"item.started:item.exit_code: null":             "a command_execution item",
	}},
	{recording: "gemini/success.json", real: []string{"real/gemini/success.out"}},
	{recording: "opencode/run.jsonl", real: []string{"real/opencode/success.out"}, extra: map[string]string{
		"step_start:part.snapshot: string":          "opencode snapshots a git work tree; the suite's project is none",
		"tool_use:part.state.input.command: string": "a bash tool call: the suite's model runs no shell command",
	}},
}

// TestStandInsHoldToRealOutput: every field of a stand-in recording, with
// the kind of its value, is one the real CLI prints (modelfake.Shape), so
// that the stand-ins test the parsers on output of the real form.
func TestStandInsHoldToRealOutput(t *testing.T) {
	t.Parallel()
	for _, s := range standIns {
		t.Run(s.recording, func(t *testing.T) {
			t.Parallel()
			var real []string
			for _, r := range s.real {
				real = append(real, modelfake.Shape(recording(t, r))...)
			}
			if len(real) == 0 {
				t.Fatalf("the real captures %v have no shape", s.real)
			}
			for _, path := range modelfake.Shape(recording(t, s.recording)) {
				if !slices.Contains(real, path) && s.extra[path] == "" {
					t.Errorf("%s has %q, which %v lack", s.recording, path, s.real)
				}
			}
		})
	}
}
