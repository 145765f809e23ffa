package process

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// promptly is the generous bound for "returns at once" on a noisy machine.
const promptly = 5 * time.Second

// confineTests, set to 1 in the environment of the test binary, makes it
// confine itself first (Exec), as the loop-action binary does, so that the
// tests and benchmarks run with children forked on any thread.
const confineTests = "PROCESS_TEST_CONFINED"

// TestMain guards the test process as a program would: the sweep needs the
// subreaper, and Guard's first-call work is then done before any test
// counts goroutines. On Linux, with confineHelper set, the test binary is
// instead a program that confines itself (helperMain).
func TestMain(m *testing.M) {
	if code, ok := helperMain(); ok {
		os.Exit(code)
	}
	if os.Getenv(confineTests) == "1" && !Confined() {
		env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, confineTests+"=") })
		err := Exec(os.Args, append(env, confineTests+"=again"))
		fmt.Fprintf(os.Stderr, "process tests: not confined: %v\n", err)
		os.Exit(1)
	}
	if err := Guard(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
