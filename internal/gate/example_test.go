package gate_test

import (
	"fmt"
	"time"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/loop"
)

// The gate rules on goals from evidence the runner measured. Here the test
// suite failed, so the goal is not satisfied and the loop is no success.
func ExampleEvaluate() {
	cfg, err := loop.Parse("loop.toml", []byte(`
name = "green-build"
[stop]
max_wall_clock = "45m"
[[goal]]
name = "tests"
  [[goal.check]]
  type = "test"
  run = "go test ./..."
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	ev := gate.Evidence{Commands: map[gate.CheckID]gate.CommandResult{
		{Goal: "tests", Index: 0}: {
			Command:  "go test ./...",
			ExitCode: 1,
			Duration: 4200 * time.Millisecond,
			Tail:     "--- FAIL: TestParse (0.00s)\nFAIL\n",
		},
	}}
	verdicts := gate.Evaluate(cfg, ev)
	for _, v := range verdicts {
		fmt.Printf("%s: %s (%d/%d)\n", v.Goal, v.Status(), v.Passed, v.Total)
		for _, c := range v.Checks {
			fmt.Println(" ", c.Evidence)
		}
	}
	fmt.Println("success:", gate.OverallSuccess(cfg, verdicts))
	// Output:
	// tests: fail (0/1)
	//   `go test ./...` exited 1 (expected 0) after 4.2s: --- FAIL: TestParse (0.00s)
	// success: false
}

// A judge ends its answer with a JSON verdict; ParseVerdict finds the last one.
func ExampleParseVerdict() {
	v, err := gate.ParseVerdict("The diff keeps every assertion.\n" +
		"```json\n{\"verdict\": \"pass\", \"evidence\": \"parse_test.go:12 still asserts 2\", \"score\": 8}\n```")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Verdict, *v.Score, v.Evidence)
	// Output: pass 8 parse_test.go:12 still asserts 2
}
