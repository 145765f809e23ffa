// Package loop owns the loop config: its types, loading it from TOML with the
// position of every key, the rules that make a config valid, the defaults,
// the agent CLI presets (preset.go), the execution plan derived from it
// (waves and stage order) and the JSON Schema generated from the same types.
//
// It must never run anything, read the environment on its own, or touch the
// workspace: loading a config is parsing and checking text. It must never
// spend more than linear time and memory on a config, whoever wrote it:
// size and nesting are bounded before decoding (limits.go).
//
// One TOML reader here is hand-written beside BurntSushi/toml: the key
// scanner (position.go), because the decoder exposes no key positions. It
// runs before the decoder, and also bounds the nesting (limits.go), since
// the decoder's cost in depth is what it bounds.
package loop

// Config is a loop config as written in TOML. Load fills in the defaults
// documented in docs/config.md.
type Config struct {
	Name      string              `toml:"name" json:"name" jsonschema:"required,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Name of the loop: used in run ids, the commit status loop/<name> and the success export's directory name."`
	Objective string              `toml:"objective" json:"objective,omitempty" jsonschema_description:"What the loop is for, in one or two sentences; given to every builder."`
	Stop      Stop                `toml:"stop" json:"stop" jsonschema_description:"Budgets and stop rules."`
	Run       Run                 `toml:"run" json:"run" jsonschema_description:"How nodes are run."`
	Context   Context             `toml:"context" json:"context" jsonschema_description:"What every builder prompt carries."`
	Protect   Protect             `toml:"protect" json:"protect" jsonschema_description:"Paths nodes may not change."`
	Providers map[string]Provider `toml:"providers" json:"providers,omitempty" jsonschema_description:"How nodes reach agents, by provider name."`
	Nodes     []Node              `toml:"node" json:"node,omitempty" jsonschema_description:"The agent steps of the loop."`
	Goals     []Goal              `toml:"goal" json:"goal" jsonschema:"required,minItems=1" jsonschema_description:"Named outcomes and the checks that decide them."`
	Metrics   Metrics             `toml:"metrics" json:"metrics" jsonschema_description:"The command whose output metric checks read: its stdout must be exactly one JSON object."`
	Stages    []Stage             `toml:"stage" json:"stage,omitempty" jsonschema_description:"Phases of the graph: a node with a stage runs only while its stage is open."`
	Export    Export              `toml:"export" json:"export" jsonschema_description:"What the success export carries."`
	Success   Success             `toml:"success" json:"success" jsonschema_description:"What overall success means."`
	Review    Review              `toml:"review" json:"review" jsonschema_description:"Who may decide manual reviews and steer the loop from pull-request comments."`
	Deliver   Deliver             `toml:"deliver" json:"deliver" jsonschema_description:"How the GitHub Action delivers certified work: the commit it pushes and the paths it never pushes."`
	Memory    Memory              `toml:"memory" json:"memory" jsonschema_description:"Cross-run memory: what earlier runs of this loop measured, shown to builders as data."`
	Hook      Hook                `toml:"hook" json:"hook" jsonschema_description:"What loop-action hook (the git pre-push and pre-commit hooks) gates, and the budgets of its --mode loop."`

	// File is the path the config was read from, as the user named it.
	File string `toml:"-" json:"-"`
	// Source is the config's text, verbatim (the success export copies it).
	Source []byte `toml:"-" json:"-"`

	// Warnings are the problems Load found that do not stop the config from being used.
	Warnings Diagnostics `toml:"-" json:"-"`

	keys keyIndex // where each key was written; empty for configs built in code
}

// Node roles.
const (
	RoleBuilder = "builder"
	RoleJudge   = "judge"
)

// Tiers, from cheapest to strongest. Perturbation escalates a builder one
// step along this ladder. The standard tier is the provider's command as
// written plus its tiers.standard arguments, if any.
const (
	TierCheap    = "cheap"
	TierStandard = "standard"
	TierStrong   = "strong"
)

// TierLadder lists the tiers from cheapest to strongest.
var TierLadder = []string{TierCheap, TierStandard, TierStrong}

// Stop holds the budgets and the stop rules.
type Stop struct {
	MaxIterations       int      `toml:"max_iterations" json:"max_iterations,omitempty" jsonschema:"minimum=1,default=10" jsonschema_description:"Iterations in a run, summed across resumes."`
	NoProgress          int      `toml:"no_progress" json:"no_progress,omitempty" jsonschema:"minimum=0,default=3" jsonschema_description:"Stop after N iterations whose verdict signature did not change (0 = off)."`
	PerturbAfter        int      `toml:"perturb_after" json:"perturb_after,omitempty" jsonschema:"minimum=0" jsonschema_description:"Vary the approach after N stale iterations (0 = off; must be below no_progress). Default: no_progress - 1."`
	MaxWallClock        Duration `toml:"max_wall_clock" json:"max_wall_clock,omitempty" jsonschema_description:"Wall-clock budget summed across resumes, e.g. \"45m\" (unset = none)."`
	MaxTokens           int64    `toml:"max_tokens" json:"max_tokens,omitempty" jsonschema:"minimum=0" jsonschema_description:"Token budget summed across resumes (0 = none)."`
	MaxCostUSD          float64  `toml:"max_cost_usd" json:"max_cost_usd,omitempty" jsonschema:"minimum=0" jsonschema_description:"Cost budget in US dollars summed across resumes (0 = none)."`
	MaxRevisionsPerNode int      `toml:"max_revisions_per_node" json:"max_revisions_per_node,omitempty" jsonschema:"minimum=0" jsonschema_description:"Failed revisions before a builder stops being dispatched (0 = unlimited)."`
	MaxNodeFailures     int      `toml:"max_node_failures" json:"max_node_failures,omitempty" jsonschema:"minimum=0,default=3" jsonschema_description:"Node errors and timeouts in a run before it escalates (0 = off)."`
}

// Run says how nodes are run.
type Run struct {
	Concurrency      int  `toml:"concurrency" json:"concurrency,omitempty" jsonschema:"minimum=0,default=4" jsonschema_description:"Nodes at once inside a wave (0 = the wave's width)."`
	CheckConcurrency int  `toml:"check_concurrency" json:"check_concurrency,omitempty" jsonschema:"minimum=0,default=1" jsonschema_description:"Command checks run at once when the workspace is measured (1 = one after another, in config order; 0 = all at once). File checks are read once every command check has finished."`
	MaxFileSize      Size `toml:"max_file_size" json:"max_file_size,omitempty" jsonschema_description:"The largest file the workspace snapshot holds, e.g. \"100MiB\" (the default: GitHub refuses any pushed file over 100 MiB) or an integer of bytes. A larger file in the workspace voids the measurement, naming the file, without being read; isolated nodes neither copy one in nor publish one."`
}

// Context says what every builder prompt carries.
type Context struct {
	CarrySummaries int      `toml:"carry_summaries" json:"carry_summaries,omitempty" jsonschema:"minimum=0,default=2" jsonschema_description:"Deterministic summaries of earlier iterations carried into prompts."`
	Files          []string `toml:"files" json:"files,omitempty" jsonschema_description:"Extra context files: glob patterns (** allowed) relative to the loop root, named in every builder prompt; openai nodes get their contents, up to 256 KiB."`
}

// Protect lists paths nodes may not change.
type Protect struct {
	Paths []string `toml:"paths" json:"paths,omitempty" jsonschema_description:"Glob patterns (** allowed) relative to the loop root; changes by nodes here are reverted and logged. The loop config itself is always protected."`
}

// Provider says how a node reaches an agent.
type Provider struct {
	Preset  string              `toml:"preset" json:"preset,omitempty" jsonschema:"enum=claude-code,enum=codex,enum=aider,enum=gemini,enum=opencode" jsonschema_description:"An agent CLI whose non-interactive command, prompt mode, usage parser, env and tier flags fill in the keys this table leaves out (see Presets in docs/config.md)."`
	Type    string              `toml:"type" json:"type,omitempty" jsonschema:"enum=command,enum=openai,default=command" jsonschema_description:"command runs an argv template; openai calls an OpenAI-compatible Chat Completions API."`
	Command []string            `toml:"command" json:"command,omitempty" jsonschema:"minItems=1" jsonschema_description:"The argv template, run without a shell. {prompt}, {prompt_file} and {tier} are replaced."`
	Prompt  string              `toml:"prompt" json:"prompt,omitempty" jsonschema:"enum=stdin,enum=arg,enum=file,default=stdin" jsonschema_description:"How the prompt reaches the agent: on stdin, as the {prompt} argument, or in the file named by {prompt_file}."`
	Usage   string              `toml:"usage" json:"usage,omitempty" jsonschema:"pattern=^(none|claude-json|codex-jsonl|aider-text|gemini-json|opencode-jsonl|regex:.+)$,default=none" jsonschema_description:"How tokens and cost are read from the agent's output: none | claude-json | codex-jsonl | aider-text | gemini-json | opencode-jsonl | regex:<re> with named groups input/output/total/cost."`
	Timeout Duration            `toml:"timeout" json:"timeout,omitempty" jsonschema_description:"Limit on one call; the process group is killed after it. Default 30m."`
	EnvKey  EnvSetting          `toml:"env" json:"env,omitempty"`
	Tiers   map[string][]string `toml:"tiers" json:"tiers,omitempty" jsonschema_description:"Extra arguments per tier (cheap, standard, strong), spliced at {tier} or appended."`
	Args    []string            `toml:"args" json:"args,omitempty" jsonschema_description:"Extra arguments after the command's and the tier's (at {tier}, else at the end): a preset's command without rewriting it."`
	Price   *Price              `toml:"price" json:"price,omitempty" jsonschema_description:"USD per million tokens, for agents that report tokens but not cost (or a cost of 0)."`

	IdleTimeout Duration `toml:"idle_timeout" json:"idle_timeout,omitempty" jsonschema_description:"A call whose agent prints nothing on stdout for this long is ended (the process group is killed). Default: none."`
	AuthFailure string   `toml:"auth_failure" json:"auth_failure,omitempty" jsonschema_description:"A regular expression: a line of the agent's stdout that matches it ends the call at once as an authentication failure, so that a wrong key fails in seconds. Presets set one where their CLI retries a refused key; \"\" turns it off."`

	// Env are the names of the variables the agent needs (the env array,
	// or a preset's), EnvValues the values an env table sets.
	Env       []string          `toml:"-" json:"-"`
	EnvValues map[string]string `toml:"-" json:"-"`

	// OptionalEnv are the names in Env that a preset put there only to be
	// masked: the CLI may read its key from them but need not (CheckEnv).
	OptionalEnv []string `toml:"-" json:"-"`

	OpenAI // the keys of type = "openai" (openai.go)
}

// Price is what a provider's tokens cost, in US dollars per million tokens.
type Price struct {
	Input  float64 `toml:"input" json:"input" jsonschema:"minimum=0" jsonschema_description:"USD per million input tokens."`
	Output float64 `toml:"output" json:"output" jsonschema:"minimum=0" jsonschema_description:"USD per million output tokens."`
}

// Node is one agent step in the graph.
type Node struct {
	Name        string   `toml:"name" json:"name" jsonschema:"required,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Unique node name."`
	Role        string   `toml:"role" json:"role,omitempty" jsonschema:"enum=builder,enum=judge,default=builder" jsonschema_description:"builder changes the workspace; judge rules on goals."`
	Provider    string   `toml:"provider" json:"provider" jsonschema:"required" jsonschema_description:"Name of a provider in [providers]."`
	Tier        string   `toml:"tier" json:"tier,omitempty" jsonschema:"enum=cheap,enum=standard,enum=strong,default=standard" jsonschema_description:"Which of the provider's tiers to start on."`
	Goals       []string `toml:"goals" json:"goals,omitempty" jsonschema_description:"Goals this builder advances; its prompt names their checks."`
	Isolate     bool     `toml:"isolate" json:"isolate,omitempty" jsonschema_description:"Run in its own worktree; changes are published after the wave."`
	Stage       string   `toml:"stage" json:"stage,omitempty" jsonschema_description:"The stage this node belongs to: it runs only while that stage is open."`
	After       []string `toml:"after" json:"after,omitempty" jsonschema_description:"Nodes that must run in an earlier wave."`
	Instruction string   `toml:"instruction" json:"instruction,omitempty" jsonschema_description:"What this node is asked to do."`
}

// Goal is a named outcome with checks.
type Goal struct {
	Name        string  `toml:"name" json:"name" jsonschema:"required,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Unique goal name (used in /loop approve <goal>)."`
	Description string  `toml:"description" json:"description,omitempty" jsonschema_description:"What the goal means, for prompts and reports."`
	Blocking    *bool   `toml:"blocking" json:"blocking,omitempty" jsonschema:"default=true" jsonschema_description:"Blocking goals decide overall success; advisory ones (false) are only reported."`
	Checks      []Check `toml:"check" json:"check" jsonschema:"required,minItems=1" jsonschema_description:"Every check must pass for the goal to be satisfied."`
}

// IsBlocking reports whether the goal decides overall success (the default).
func (g Goal) IsBlocking() bool { return g.Blocking == nil || *g.Blocking }

// Metrics names the command whose JSON output metric checks read: its
// stdout must be exactly one JSON object (package gate reads it).
type Metrics struct {
	Command string   `toml:"command" json:"command,omitempty" jsonschema_description:"Run with /bin/sh -c in the loop root after each iteration. Its stdout must be exactly one JSON object (on one line or many, white space around it allowed; a number for each key a check names, no key twice); anything else, such as text or a second object before or after it, fails every metric check. Programs it runs should print to stderr or have their output captured."`
	Argv    []string `toml:"argv" json:"argv,omitempty" jsonschema_description:"The same as an argv, without a shell (instead of command); its stdout must be exactly one JSON object as well."`
	Timeout Duration `toml:"timeout" json:"timeout,omitempty" jsonschema_description:"Limit on the metrics command. Default 5m."`
}

// Configured reports whether a metrics command is set.
func (m Metrics) Configured() bool { return m.Command != "" || len(m.Argv) > 0 }

// Stage is a phase of the graph.
type Stage struct {
	Name      string   `toml:"name" json:"name" jsonschema:"required,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Unique stage name."`
	After     []string `toml:"after" json:"after,omitempty" jsonschema_description:"Stages that must close before this one opens."`
	Guideline string   `toml:"guideline" json:"guideline,omitempty" jsonschema_description:"Given to builders while the stage is open."`
	Goals     []string `toml:"goals" json:"goals,omitempty" jsonschema_description:"Goals whose satisfaction closes the stage. Default: the goals of the stage's builders."`
}

// Export says what the success export carries.
type Export struct {
	Paths []string `toml:"paths" json:"paths,omitempty" jsonschema_description:"Glob patterns (** allowed) of files copied into the export's out/."`
}

// Review says who may use /loop commands that change a run.
type Review struct {
	Approvers []string `toml:"approvers" json:"approvers,omitempty" jsonschema_description:"GitHub logins allowed to /loop approve, reject, run and stop. Empty: anyone with write, maintain or admin permission. Listed users still need that permission."`
}

// Success says what overall success means.
type Success struct {
	MinPassRate float64 `toml:"min_pass_rate" json:"min_pass_rate,omitempty" jsonschema:"exclusiveMinimum=0,maximum=1,default=1" jsonschema_description:"Fraction of blocking goals that must be satisfied (1 = all)."`
}
