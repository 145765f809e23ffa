package loop

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidateHook(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra string
		want  []string
	}{
		{"a hook section", `
[hook]
goals = ["g"]
cache_env = ["GOFLAGS", "CGO_ENABLED"]
max_iterations = 2
max_wall_clock = "5m"
max_cost_usd = 0.5
`, nil},
		{"hook mistakes", `
[hook]
goals = ["gg", "g", "g"]
cache_env = ["GO FLAGS"]
max_iterations = -1
max_wall_clock = 10
max_cost_usd = -2
`, []string{
			`loop.toml:19:1: hook.goals: unknown goal "gg"; did you mean "g"?`,
			`loop.toml:19:1: hook.goals: goal "g" is listed twice`,
			`loop.toml:20:1: hook.cache_env: "GO FLAGS" is not an environment variable name`,
			`loop.toml:21:1: hook.max_iterations must be 0 (the default, 3) or more, not -1`,
			`loop.toml:22:1: hook.max_wall_clock 10 must be a string such as "30m", not a bare number`,
			`loop.toml:23:1: hook.max_cost_usd must be 0 (the default, 1) or more, not -2`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, d := range diagnostics(t, base+tt.extra) {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHookDefaults(t *testing.T) {
	t.Parallel()
	type budgets struct {
		Iterations int
		Wall       time.Duration
		Cost       float64
	}
	tests := []struct {
		hook Hook
		want budgets
	}{
		{Hook{}, budgets{DefaultHookIterations, DefaultHookWallClock, DefaultHookCostUSD}},
		{Hook{MaxIterations: 1, MaxWallClock: D(time.Minute), MaxCostUSD: 0.25}, budgets{1, time.Minute, 0.25}},
	}
	for _, tt := range tests {
		var got budgets
		got.Iterations, got.Wall, got.Cost = tt.hook.Budgets()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Budgets (-want +got):\n%s", diff)
		}
	}
	if h := (Hook{}); !h.Gated("any") {
		t.Error("an empty [hook] goals does not gate every goal")
	}
	if h := (Hook{Goals: []string{"a"}}); h.Gated("b") || !h.Gated("a") {
		t.Error("hook.goals does not say which goals are gated")
	}
}
