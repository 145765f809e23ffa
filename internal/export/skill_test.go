package export

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

func TestSecretValuesNeverExported(t *testing.T) {
	f := newFixture(t)
	const secret = "sk-ant-do-not-leak-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", secret)
	t.Setenv("OPENAI_API_KEY", secret)
	dir, _, err := Write(f.parent, f.in)
	if err != nil {
		t.Fatal(err)
	}
	skill := string(readExport(t, dir)["SKILL.md"])
	if !strings.Contains(skill, "`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`") {
		t.Errorf("SKILL.md does not name the providers' variables:\n%s", skill)
	}
	for name, data := range readExport(t, dir) {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("%s holds a secret value", name)
		}
	}
}

func TestSkillFrontmatter(t *testing.T) {
	t.Parallel()
	objective := "Fix: the \"parser\" \\ now\n---\n# not a heading\tnor\u2028a break, caf\u00e9 \x07 `code`\n"
	in := Input{
		Config:   &loop.Config{Name: "weird name/..", Objective: objective},
		RunID:    "weird/pr-1 \"quoted\"",
		Finished: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	dir, _, err := Write(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(dir) != "weird-name-success" {
		t.Errorf("export directory %q, want weird-name-success", filepath.Base(dir))
	}
	skill := string(readExport(t, dir)["SKILL.md"])
	lines := strings.Split(skill, "\n")
	end := slices.Index(lines[1:], "---") + 1
	if lines[0] != "---" || end < 1 {
		t.Fatalf("SKILL.md has no frontmatter:\n%s", skill)
	}
	got := map[string]string{}
	var keys []string
	for _, line := range lines[1:end] {
		key, quoted, ok := strings.Cut(line, ": ")
		value, err := strconv.Unquote(quoted)
		if !ok || err != nil {
			t.Fatalf("frontmatter line %q is not key: \"quoted value\"", line)
		}
		got[key] = value
		keys = append(keys, key)
	}
	want := map[string]string{
		"name":        "weird-name-success",
		"description": "Fix: the \"parser\" \\ now --- # not a heading nor a break, caf\u00e9 \x07 `code`",
		"run_id":      "weird/pr-1 \"quoted\"",
		"commit":      "",
		"finished":    "2026-01-02T03:04:05Z",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frontmatter (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"name", "description", "run_id", "commit", "finished"}, keys); diff != "" {
		t.Errorf("frontmatter keys (-want +got):\n%s", diff)
	}
}

func TestSkillLongDescriptionIsCut(t *testing.T) {
	t.Parallel()
	d := description(&loop.Config{Objective: strings.Repeat("word ", 500)})
	if n := utf8.RuneCountInString(d); n != maxDescription || !strings.HasSuffix(d, "…") {
		t.Errorf("description has %d runes, want %d ending in …", n, maxDescription)
	}
}

func TestSkillBlockingGoalLeftByMinPassRate(t *testing.T) {
	t.Parallel()
	yes := true
	cfg := &loop.Config{
		Name:    "rate",
		Success: loop.Success{MinPassRate: 0.5},
		Goals: []loop.Goal{
			{Name: "a", Blocking: &yes, Checks: []loop.Check{{Type: "file_exists", Path: "a.txt", NonEmpty: true}}},
			{Name: "b", Checks: []loop.Check{{Type: "command", Argv: []string{"sh", "-c", "exit 0"}, ExpectExit: 0}}},
		},
	}
	in := Input{Config: cfg, Verdicts: []gate.Verdict{
		{Goal: "a", Blocking: true, Satisfied: true, Passed: 1, Total: 1, Checks: []gate.CheckVerdict{{Type: "file_exists", Status: gate.Pass, Evidence: "`a.txt` exists (2 B)"}}},
		{Goal: "b", Blocking: true, Passed: 0, Total: 1, Checks: []gate.CheckVerdict{{Type: "command", Status: gate.Fail, Evidence: "`sh -c 'exit 0'` exited 1 (expected 0) after 0.0s"}}},
	}}
	skill := string(skillMarkdown(in, 0, 0))
	for _, want := range []string{
		"### ✅ `a`\n\n- ✅ `file_exists`: `a.txt` exists and is not empty\n",
		"### ❌ `b`\n\nNot satisfied at the end: [success] min_pass_rate = 0.5 let the run succeed without it.\n\n- ❌ `command`: `sh -c 'exit 0'` exits 0\n",
		"There were no advisory goals",
		"no environment variables",
	} {
		if !strings.Contains(skill, want) {
			t.Errorf("SKILL.md lacks %q:\n%s", want, skill)
		}
	}
	evidence := string(evidenceMarkdown(in, nil))
	if !strings.Contains(evidence, "Overall: success, with 1 of 2 blocking goals satisfied.") {
		t.Errorf("EVIDENCE.md does not count the blocking goals:\n%s", evidence)
	}
}
