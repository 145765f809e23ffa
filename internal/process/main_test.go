package process

import (
	"fmt"
	"os"
	"testing"
)

// TestMain guards the test process as a program would: the sweep needs the
// subreaper, and the spawning threads are then started before any test
// counts goroutines.
func TestMain(m *testing.M) {
	if err := Guard(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
