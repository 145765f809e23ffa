package loop

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// presetConfig is a valid config whose provider p is the given table body.
func presetConfig(body string) string {
	return `name = "x"
[stop]
max_cost_usd = 1.0
[providers.p]
` + body + `
[[node]]
name = "n"
provider = "p"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "true"
`
}

// providerView is what a preset decides about a provider.
type providerView struct {
	Command      []string
	Prompt       string
	Usage        string
	Env          []string
	Optional     []string
	Cheap        []string
	Standard     []string
	Strong       []string
	Timeout      time.Duration
	HasPrice     bool
	StandardArgv []string
	AuthFailure  string
	EnvValues    map[string]string
}

func viewProvider(p Provider) providerView {
	return providerView{Command: p.Command, Prompt: p.Prompt, Usage: p.Usage, Env: p.Env, Optional: p.OptionalEnv,
		Cheap: p.Argv(TierCheap), Standard: p.Tiers[TierStandard], Strong: p.Argv(TierStrong),
		Timeout: p.Timeout.Duration, HasPrice: p.Price != nil, StandardArgv: p.Argv(TierStandard),
		AuthFailure: p.AuthFailure, EnvValues: p.EnvValues}
}

func parseProvider(t *testing.T, body string) Provider {
	t.Helper()
	cfg, err := Parse("loop.toml", []byte(presetConfig(body)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Providers["p"]
}

func TestPresetExpands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		preset string
		want   providerView
	}{
		{"claude-code", providerView{
			Command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "{tier}"},
			Prompt:  "stdin", Usage: "claude-json",
			Env: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"}, Optional: []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
			Cheap:        []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--model", "haiku"},
			Strong:       []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "--model", "opus"},
			StandardArgv: []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"},
			AuthFailure:  `^\{"type":"system","subtype":"api_retry",.*"error_status":40[13][,}]`,
		}},
		{"codex", providerView{
			Command: []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "{tier}", "-"},
			Prompt:  "stdin", Usage: "codex-jsonl",
			Env: []string{"OPENAI_API_KEY", "CODEX_API_KEY"}, Optional: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
			Cheap:        []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "-c", `model_reasoning_effort="low"`, "-"},
			Strong:       []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "-c", `model_reasoning_effort="high"`, "-"},
			StandardArgv: []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "-"},
		}},
		{"aider", func() providerView {
			argv := []string{"aider", "--message-file", "{prompt_file}", "--yes-always", "--no-auto-commits", "--no-dirty-commits",
				"--no-gitignore", "--no-detect-urls", "--no-pretty", "--no-stream", "--no-check-update", "--no-show-release-notes", "--no-analytics"}
			env := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY"}
			return providerView{Command: append(argv[:len(argv):len(argv)], "{tier}"), Prompt: "file", Usage: "aider-text",
				Env: env, Optional: env, Cheap: argv, Strong: argv, StandardArgv: argv}
		}()},
		{"gemini", providerView{
			Command: []string{"gemini", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust", "{tier}"},
			Prompt:  "stdin", Usage: "gemini-json",
			Env: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, Optional: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
			Cheap:        []string{"gemini", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust", "--model", "flash"},
			Strong:       []string{"gemini", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust", "--model", "pro"},
			StandardArgv: []string{"gemini", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust"},
		}},
		{"opencode", func() providerView {
			argv := []string{"opencode", "run", "--format", "json"}
			env := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"}
			return providerView{Command: append(argv[:len(argv):len(argv)], "{tier}"), Prompt: "stdin", Usage: "opencode-jsonl",
				Env: env, Optional: env, Cheap: argv, Strong: argv, StandardArgv: argv}
		}()},
	}
	if len(tests) != len(presets) {
		t.Fatalf("%d presets tested, %d known", len(tests), len(presets))
	}
	for _, tt := range tests {
		t.Run(tt.preset, func(t *testing.T) {
			t.Parallel()
			tt.want.Timeout = DefaultProviderTimeout
			got := viewProvider(parseProvider(t, `preset = "`+tt.preset+`"`))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("preset %q (-want +got):\n%s", tt.preset, diff)
			}
		})
	}
}

// TestPresetKeysOverride shows that every key written next to a preset wins
// over what the preset would fill in, and leaves the rest of the preset be.
func TestPresetKeysOverride(t *testing.T) {
	t.Parallel()
	base := viewProvider(parseProvider(t, `preset = "claude-code"`))
	tests := []struct {
		name string
		body string
		edit func(v *providerView)
	}{
		{"command", `command = ["my-claude", "--json", "{tier}"]`, func(v *providerView) {
			v.Command = []string{"my-claude", "--json", "{tier}"}
			v.Cheap = []string{"my-claude", "--json", "--model", "haiku"}
			v.Strong = []string{"my-claude", "--json", "--model", "opus"}
			v.StandardArgv = []string{"my-claude", "--json"}
		}},
		{"prompt", "prompt = \"file\"\ncommand = [\"claude\", \"-p\", \"@{prompt_file}\"]", func(v *providerView) {
			v.Prompt, v.Command = "file", []string{"claude", "-p", "@{prompt_file}"}
			v.Cheap = []string{"claude", "-p", "@{prompt_file}", "--model", "haiku"}
			v.Strong = []string{"claude", "-p", "@{prompt_file}", "--model", "opus"}
			v.StandardArgv = []string{"claude", "-p", "@{prompt_file}"}
		}},
		{"usage", `usage = "none"`, func(v *providerView) { v.Usage = "none" }},
		{"env", `env = ["MY_KEY"]`, func(v *providerView) { v.Env, v.Optional = []string{"MY_KEY"}, nil }},
		{"empty env", `env = []`, func(v *providerView) { v.Env, v.Optional = []string{}, nil }},
		// An env table sets values; the preset's names stay, masked.
		{"env table", `env = { ANTHROPIC_BASE_URL = "http://gateway.internal:8080" }`, func(v *providerView) {
			v.EnvValues = map[string]string{"ANTHROPIC_BASE_URL": "http://gateway.internal:8080"}
		}},
		{"args", `args = ["--max-turns", "30"]`, func(v *providerView) {
			for _, argv := range []*[]string{&v.Cheap, &v.Strong, &v.StandardArgv} {
				*argv = append((*argv)[:len(*argv):len(*argv)], "--max-turns", "30")
			}
		}},
		{"auth_failure", `auth_failure = "refused"`, func(v *providerView) { v.AuthFailure = "refused" }},
		{"auth_failure off", `auth_failure = ""`, func(v *providerView) { v.AuthFailure = "" }},
		{"one tier", `tiers = { strong = ["--model", "sonnet"] }`, func(v *providerView) {
			v.Strong = append(v.StandardArgv[:len(v.StandardArgv):len(v.StandardArgv)], "--model", "sonnet")
		}},
		{"a tier emptied", `tiers = { cheap = [] }`, func(v *providerView) { v.Cheap = v.StandardArgv }},
		{"standard tier", `tiers = { standard = ["--model", "sonnet"] }`, func(v *providerView) {
			v.Standard = []string{"--model", "sonnet"}
			v.StandardArgv = append(v.StandardArgv[:len(v.StandardArgv):len(v.StandardArgv)], "--model", "sonnet")
		}},
		{"timeout", `timeout = "5m"`, func(v *providerView) { v.Timeout = 5 * time.Minute }},
		{"price", `price = { input = 3.0, output = 15.0 }`, func(v *providerView) { v.HasPrice = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := base
			want.Command = append([]string(nil), base.Command...)
			tt.edit(&want)
			got := viewProvider(parseProvider(t, "preset = \"claude-code\"\n"+tt.body))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPresetInlineTable shows a preset in an inline table and in dotted keys.
func TestPresetInlineTable(t *testing.T) {
	t.Parallel()
	src := strings.Replace(presetConfig(""), "[providers.p]\n", "[providers]\np = { preset = \"codex\", usage = \"none\" }\n", 1)
	cfg, err := Parse("loop.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Providers["p"]
	if p.Command[0] != "codex" || p.Usage != "none" {
		t.Errorf("inline table: command %q usage %q", p.Command, p.Usage)
	}
}

func TestPresetErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want []string
	}{
		{"unknown", `preset = "claude"`, []string{
			`loop.toml:5:1: provider "p": unknown preset "claude" (presets are aider, claude-code, codex, gemini, opencode)`}},
		{"typo", `preset = "codx"`, []string{
			`loop.toml:5:1: provider "p": unknown preset "codx" (presets are aider, claude-code, codex, gemini, opencode); did you mean codex?`}},
		{"wrong case", `preset = "Aider"`, []string{
			`loop.toml:5:1: provider "p": unknown preset "Aider" (presets are aider, claude-code, codex, gemini, opencode); did you mean aider?`}},
		{"empty", `preset = ""`, []string{
			`loop.toml:5:1: provider "p": unknown preset "" (presets are aider, claude-code, codex, gemini, opencode)`}},
		{"not a string", `preset = 1`, []string{`loop.toml:5:1: providers.p.preset must be a string, not an integer`}},
		{"with another type", "type = \"openai\"\npreset = \"gemini\"", []string{
			`loop.toml:6:1: provider "p": preset "gemini" is an agent CLI, which needs type = "command", not "openai"`}},
		{"prompt mode without its placeholder", "preset = \"gemini\"\nprompt = \"arg\"", []string{
			`loop.toml:6:1: provider "p": prompt = "arg" needs {prompt} in the command`}},
		{"usage overridden badly", "preset = \"codex\"\nusage = \"codex-json\"", []string{
			`loop.toml:6:1: provider "p": usage must be none, claude-json, codex-jsonl, aider-text, gemini-json, opencode-jsonl or regex:<re>, not "codex-json"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("loop.toml", []byte(presetConfig(tt.body)))
			var cerr *ConfigError
			if !errors.As(err, &cerr) {
				t.Fatalf("Parse = %v, want a config error", err)
			}
			var got []string
			for _, d := range cerr.Diagnostics {
				if d.Severity == Error {
					got = append(got, d.String())
				}
			}
			if !containsAll(got, tt.want) {
				t.Errorf("errors:\n%s\nwant among them:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			return false
		}
	}
	return true
}

// TestPresetEnvIsNotRequired shows that a preset's variables are masked but
// not required (each CLI also has a login of its own), while variables the
// table names itself are required.
func TestPresetEnvIsNotRequired(t *testing.T) {
	t.Parallel()
	none := func(string) (string, bool) { return "", false }
	for _, name := range PresetNames() {
		cfg, err := Parse("loop.toml", []byte(presetConfig(`preset = "`+name+`"`)))
		if err != nil {
			t.Fatal(err)
		}
		if ds := cfg.CheckEnv(none, Error); len(ds) > 0 {
			t.Errorf("preset %q: CheckEnv with nothing set = %s, want nothing", name, ds)
		}
		if len(cfg.Providers["p"].Env) == 0 {
			t.Errorf("preset %q masks no variable", name)
		}
	}
	cfg, err := Parse("loop.toml", []byte(presetConfig("preset = \"claude-code\"\nenv = [\"ANTHROPIC_API_KEY\"]")))
	if err != nil {
		t.Fatal(err)
	}
	want := `loop.toml:6:1: provider "p" needs the environment variable ANTHROPIC_API_KEY, which is not set`
	if ds := cfg.CheckEnv(none, Error); len(ds) != 1 || ds[0].String() != want {
		t.Errorf("CheckEnv = %s, want %s", ds, want)
	}
}

// TestPresetExamples keeps an example config per preset in
// testdata/examples (TestExamplesLoadClean loads every one of them).
func TestPresetExamples(t *testing.T) {
	t.Parallel()
	for _, name := range PresetNames() {
		cfg, err := Load("../../testdata/examples/preset-" + name + ".toml")
		if err != nil {
			t.Errorf("preset %q: %v", name, err)
			continue
		}
		used := false
		for _, p := range cfg.Providers {
			used = used || p.Preset == name
		}
		if !used {
			t.Errorf("testdata/examples/preset-%s.toml uses no provider with preset = %q", name, name)
		}
	}
}
