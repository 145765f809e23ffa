package loop

import (
	"cmp"
	"slices"
	"time"
)

// Hook configures `loop-action hook`: which goals a git hook gates, what
// else its verdict cache depends on, and the budgets of a loop the hook
// runs in --mode loop. The hook's checks are the config's own.
type Hook struct {
	Goals         []string `toml:"goals" json:"goals,omitempty" jsonschema_description:"The goals the hook gates (default: every goal). Judge checks never run in a hook and fail there, so list the goals without them when the loop has judges."`
	CleanIgnored  bool     `toml:"clean_ignored" json:"clean_ignored,omitempty" jsonschema_description:"Remove ignored files (build output, dependencies) from the hook's isolated checkout before each measurement, as a fresh CI checkout has none: slower, but nothing an earlier commit's checks built can stand in for this one's. Off: they stay, as a build cache."`
	CacheEnv      []string `toml:"cache_env" json:"cache_env,omitempty" jsonschema_description:"Environment variables whose values the checks depend on: part of the key of the hook's verdict cache (PATH always is)."`
	MaxIterations int      `toml:"max_iterations" json:"max_iterations,omitempty" jsonschema:"minimum=0,default=3" jsonschema_description:"--mode loop: iterations of the loop the hook runs when the gate fails (0 = the default)."`
	MaxWallClock  Duration `toml:"max_wall_clock" json:"max_wall_clock,omitempty" jsonschema_description:"--mode loop: wall-clock budget of that loop, e.g. \"10m\" (default 10m)."`
	MaxCostUSD    float64  `toml:"max_cost_usd" json:"max_cost_usd,omitempty" jsonschema:"minimum=0,default=1" jsonschema_description:"--mode loop: cost budget of that loop in US dollars (0 = the default)."`
}

// Defaults of [hook]'s loop budgets: a hook makes someone wait.
const (
	DefaultHookIterations = 3
	DefaultHookWallClock  = 10 * time.Minute
	DefaultHookCostUSD    = 1.0
)

// Budgets returns the loop budgets of --mode loop, defaults filled in.
func (h Hook) Budgets() (iterations int, wall time.Duration, costUSD float64) {
	return cmp.Or(h.MaxIterations, DefaultHookIterations), cmp.Or(h.MaxWallClock.Duration, DefaultHookWallClock),
		cmp.Or(h.MaxCostUSD, DefaultHookCostUSD)
}

// Gated reports whether the hook gates the goal named goal.
func (h Hook) Gated(goal string) bool {
	return len(h.Goals) == 0 || slices.Contains(h.Goals, goal)
}

func (v *validator) hook() {
	h := v.c.Hook
	v.refs("hook.goals", "hook.goals", "goal", h.Goals, v.ix.goals)
	for _, name := range h.CacheEnv {
		if !envRE.MatchString(name) {
			v.errorf("hook.cache_env", "hook.cache_env: %q is not an environment variable name", name)
		}
	}
	if h.MaxIterations < 0 {
		v.errorf("hook.max_iterations", "hook.max_iterations must be 0 (the default, %d) or more, not %d", DefaultHookIterations, h.MaxIterations)
	}
	if h.MaxCostUSD < 0 {
		v.errorf("hook.max_cost_usd", "hook.max_cost_usd must be 0 (the default, %g) or more, not %g", DefaultHookCostUSD, h.MaxCostUSD)
	}
	v.usable("hook.max_wall_clock", "hook.max_wall_clock", h.MaxWallClock)
}
