package process

import (
	"fmt"
	"os"
	"testing"
)

// TestMain guards the test process as a program would: the sweep needs the
// subreaper, and the spawning threads are then started before any test
// counts goroutines. With confineHelper set, the test binary is instead a
// program that confines itself (confineMain).
func TestMain(m *testing.M) {
	if stage, ok := os.LookupEnv(confineHelper); ok {
		os.Exit(confineMain(stage))
	}
	if err := Guard(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
