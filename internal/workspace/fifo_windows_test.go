package workspace

import "testing"

// fifo: Windows has no named pipes in the file system; a case that needs
// one is skipped there.
func fifo(string) op {
	return func(t *testing.T, _ string) { t.Skip("no named pipes on Windows") }
}
