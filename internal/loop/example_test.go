package loop_test

import (
	"errors"
	"fmt"

	"github.com/loop-action/loop-action/internal/loop"
)

// Parse reports every problem at once, each with file:line:col.
func ExampleParse() {
	_, err := loop.Parse("loop.toml", []byte(`name = "demo"
[stop]
max_wall_clock = "45 minutes"
[[node]]
name = "fixer"
provider = "claud"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "go test ./..."
  retries = 2
`))
	var cerr *loop.ConfigError
	if errors.As(err, &cerr) {
		for _, d := range cerr.Diagnostics {
			fmt.Println(d)
		}
	}
	// Output:
	// loop.toml:3:1: stop.max_wall_clock "45 minutes" is not a duration (use a value such as "90s", "45m" or "1h30m")
	// loop.toml:5:1: warning: node "fixer" is a builder with no goals: its prompt will name no checks
	// loop.toml:6:1: node "fixer": unknown provider "claud"
	// loop.toml:12:3: unknown key "retries" in [[goal.check]]; a test check takes run, argv, timeout, expect_exit
}

// Waves groups nodes by their after dependencies; nodes in one wave run
// concurrently.
func ExampleConfig_Waves() {
	cfg, err := loop.Parse("loop.toml", []byte(`name = "demo"
[stop]
max_cost_usd = 2.0
[providers.a]
command = ["agent-a"]
[providers.b]
command = ["agent-b"]
[[node]]
name = "api"
provider = "a"
goals = ["tests"]
[[node]]
name = "ui"
provider = "a"
goals = ["tests"]
[[node]]
name = "review"
role = "judge"
provider = "b"
after = ["api", "ui"]
[[goal]]
name = "tests"
  [[goal.check]]
  type = "judge"
  node = "review"
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, wave := range cfg.Waves() {
		fmt.Print("wave ", i+1, ":")
		for _, n := range wave {
			fmt.Print(" ", n.Name)
		}
		fmt.Println()
	}
	// Output:
	// wave 1: api ui
	// wave 2: review
}
