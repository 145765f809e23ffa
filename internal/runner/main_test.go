package runner

import (
	"fmt"
	"os"
	"testing"

	"github.com/loop-action/loop-action/internal/process"
)

// confinedVar marks the test binary's second execution, so that a process
// that cannot be confined runs its tests as it is instead of executing
// itself forever.
const confinedVar = "LOOP_RUNNER_TEST_CONFINED"

// TestMain runs the tests in the process the loop-action binary gives the
// runner: confined (process.Exec), so that children are forked on any
// thread, as they are in production, and the benchmarks measure that.
func TestMain(m *testing.M) {
	if _, again := os.LookupEnv(confinedVar); !again && !process.Confined() {
		err := process.Exec(os.Args, append(os.Environ(), confinedVar+"=1"))
		fmt.Fprintf(os.Stderr, "runner tests: not confined: %v\n", err)
	}
	os.Exit(m.Run())
}
