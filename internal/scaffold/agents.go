package scaffold

import (
	"maps"
	"slices"
	"strings"
)

// Agent is what a workflow needs to run an agent CLI preset on a runner.
type Agent struct {
	// Install installs the CLI on an ubuntu-latest runner.
	Install string
	// Env names the secrets the CLI reads its key from, passed to the
	// action from the repository's secrets of the same name.
	Env []string
}

// Agents are the presets init offers (docs/config.md, Presets), by name.
var Agents = map[string]Agent{
	"claude-code": {Install: "npm install -g @anthropic-ai/claude-code", Env: []string{"ANTHROPIC_API_KEY"}},
	"codex":       {Install: "npm install -g @openai/codex", Env: []string{"OPENAI_API_KEY"}},
	"aider":       {Install: "python -m pip install aider-chat", Env: []string{"ANTHROPIC_API_KEY"}},
	"gemini":      {Install: "npm install -g @google/gemini-cli", Env: []string{"GEMINI_API_KEY"}},
	"opencode":    {Install: "npm install -g opencode-ai", Env: []string{"ANTHROPIC_API_KEY"}},
}

// DefaultPreset is the agent init proposes.
const DefaultPreset = "claude-code"

// Presets lists the agents' names, sorted.
func Presets() []string { return slices.Sorted(maps.Keys(Agents)) }

// PresetList is Presets joined for a message.
func PresetList() string { return strings.Join(Presets(), ", ") }
