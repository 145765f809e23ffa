package runner

import (
	"fmt"
	"os"
	"sync"
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

// steps are the tests' hooks at the steps of an iteration (testStep), by
// loop root.
var steps sync.Map // string → func(step string)

func init() {
	testStep = func(r *run, step string) {
		if f, ok := steps.Load(r.opts.Root); ok {
			f.(func(string))(step)
		}
	}
}

// onStep has f called at each step of an iteration (testStep) of the
// harness's runs.
func (h *harness) onStep(f func(step string)) {
	steps.Store(h.root, f)
	h.t.Cleanup(func() { steps.Delete(h.root) })
}
