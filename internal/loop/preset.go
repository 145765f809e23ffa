package loop

import (
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// preset is what `preset = "..."` fills into a [providers.X] table: the
// agent CLI's non-interactive command line, how the prompt reaches it, the
// usage parser of its output, the environment variables it reads its keys
// from, and the model arguments of each tier. Every flag is the CLI's own
// documented one; docs/config.md ("Presets") says where each comes from and
// why the permission flags are the ones they are.
type preset struct {
	command []string
	prompt  string
	usage   string
	// env are variables the CLI may read a key from. None is required: each
	// CLI also runs from a login of its own (a subscription, `codex login`,
	// a Google account, `opencode auth login`) or a config file, so a preset
	// only masks them (Provider.OptionalEnv).
	env   []string
	tiers map[string][]string
	// authFailure is the CLI's own report of a refused key, where it
	// retries one (Provider.AuthFailure).
	authFailure string
}

// presets are the known presets by name. Prompts go on stdin wherever the
// CLI reads them there (no argv length limit, nothing in `ps`); aider reads
// them from a file.
var presets = map[string]preset{
	// claude -p (print mode) reads the prompt from stdin; with
	// --output-format stream-json --verbose it prints one JSON line per
	// event and last the result object (total_cost_usd, usage,
	// modelUsage); see https://docs.claude.com/en/docs/claude-code/headless.
	// The stream, unlike the one object of --output-format json, shows
	// Claude Code's retries as they happen: a refused key is retried
	// silently for minutes, and authFailure ends the call at the first
	// retry of a 401 or 403. acceptEdits approves file edits without a
	// prompt, and shell commands that only edit files in the working
	// directory (sed -i); others stay unapproved (refused in print mode).
	"claude-code": {
		command: []string{"claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits", "{tier}"},
		prompt:  "stdin", usage: "claude-json",
		env:         []string{"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"},
		tiers:       map[string][]string{TierCheap: {"--model", "haiku"}, TierStrong: {"--model", "opus"}},
		authFailure: `^\{"type":"system","subtype":"api_retry",.*"error_status":40[13][,}]`,
	},
	// codex exec reads the prompt from stdin when it is "-" and prints JSONL
	// events with --json (turn.completed carries usage); see
	// https://developers.openai.com/codex/noninteractive. workspace-write
	// lets it edit and run commands inside the working directory only; exec
	// never asks for approval. --skip-git-repo-check: the loop root need
	// not be a git repository.
	"codex": {
		command: []string{"codex", "exec", "--json", "--sandbox", "workspace-write", "--skip-git-repo-check", "{tier}", "-"},
		prompt:  "stdin", usage: "codex-jsonl",
		env: []string{"OPENAI_API_KEY", "CODEX_API_KEY"},
		tiers: map[string][]string{
			TierCheap:  {"-c", `model_reasoning_effort="low"`},
			TierStrong: {"-c", `model_reasoning_effort="high"`},
		},
	},
	// aider --message-file runs one message and exits; see
	// https://aider.chat/docs/scripting.html. --yes-always approves edits
	// (aider still never runs shell commands on it: they need an explicit
	// yes); no commits of its own, no .gitignore edits, no fetching of URLs
	// found in the prompt, nothing written to the home directory, plain
	// output for the "Tokens: … Cost: …" report lines.
	"aider": {
		command: []string{"aider", "--message-file", "{prompt_file}", "--yes-always", "--no-auto-commits",
			"--no-dirty-commits", "--no-gitignore", "--no-detect-urls", "--no-pretty", "--no-stream",
			"--no-check-update", "--no-show-release-notes", "--no-analytics", "{tier}"},
		prompt: "file", usage: "aider-text",
		env: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY"},
	},
	// gemini runs headless when stdin is not a terminal and prints one JSON
	// object with --output-format json (response, stats.models.*.tokens);
	// see https://geminicli.com/docs/cli/headless. auto_edit approves edits
	// only: without a terminal its shell tool is left out. --skip-trust:
	// Gemini CLI trusts no folder by default and, headless, exits 55 in one
	// it does not trust (every fresh checkout); the loop root is the
	// repository the user runs the loop on.
	"gemini": {
		command: []string{"gemini", "--output-format", "json", "--approval-mode", "auto_edit", "--skip-trust", "{tier}"},
		prompt:  "stdin", usage: "gemini-json",
		env:   []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"},
		tiers: map[string][]string{TierCheap: {"--model", "flash"}, TierStrong: {"--model", "pro"}},
	},
	// opencode run appends piped stdin to its message and prints JSON
	// events with --format json (step_finish carries tokens and cost); see
	// packages/opencode/src/cli/cmd/run.ts in sst/opencode. Its permission
	// questions are answered "reject" without a terminal.
	"opencode": {
		command: []string{"opencode", "run", "--format", "json", "{tier}"},
		prompt:  "stdin", usage: "opencode-jsonl",
		env: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"},
	},
}

// PresetNames lists the known presets, sorted.
func PresetNames() []string {
	return slices.Sorted(maps.Keys(presets))
}

// applyPreset fills in what p's preset provides and the table leaves out.
// A key written in the table wins over the preset's; tiers are merged tier
// by tier. Unknown presets are left for validation to report.
func applyPreset(md toml.MetaData, name string, p Provider) Provider {
	ps, ok := presets[p.Preset]
	if !ok {
		return p
	}
	set := func(key string) bool { return md.IsDefined("providers", name, key) }
	if !set("command") {
		p.Command = slices.Clone(ps.command)
	}
	if !set("prompt") {
		p.Prompt = ps.prompt
	}
	if !set("usage") {
		p.Usage = ps.usage
	}
	if len(p.Env) == 0 && (!set("env") || p.EnvValues != nil) {
		// An env table sets values; the preset's names stay, to be masked.
		p.Env, p.OptionalEnv = slices.Clone(ps.env), slices.Clone(ps.env)
	}
	if !set("auth_failure") {
		p.AuthFailure = ps.authFailure
	}
	for t, args := range ps.tiers {
		if _, mine := p.Tiers[t]; !mine {
			if p.Tiers == nil {
				p.Tiers = map[string][]string{}
			}
			p.Tiers[t] = slices.Clone(args)
		}
	}
	return p
}

// providerPreset checks a provider's preset key. It reports false when the
// preset is unknown: the rest of the table is then not worth checking.
func (v *validator) providerPreset(name string, p Provider) bool {
	at := providerPath(name, "preset")
	if p.Preset == "" && !v.c.has(at) {
		return true
	}
	if _, ok := presets[p.Preset]; !ok {
		hint := ""
		if s := v.suggest.closest(p.Preset, PresetNames()); s != "" {
			hint = "; did you mean " + s + "?"
		}
		v.errorf(at, "provider %q: unknown preset %q (presets are %s)%s", name, p.Preset, strings.Join(PresetNames(), ", "), hint)
		return false
	}
	if p.Type != "command" {
		v.report(Error, []string{at, providerPath(name, "type")},
			"provider %q: preset %q is an agent CLI, which needs type = \"command\", not %q", name, p.Preset, p.Type)
	}
	return true
}

// RequiredEnv lists the variables the provider needs set: every name in
// env, except those a preset lists only to mask them (OptionalEnv).
func (p Provider) RequiredEnv() []string {
	var out []string
	for _, e := range p.Env {
		if !slices.Contains(p.OptionalEnv, e) {
			out = append(out, e)
		}
	}
	return out
}
