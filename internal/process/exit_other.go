//go:build !linux

package process

import "os"

// awaitExit cannot wait for an exit without reaping here: it reports false,
// and the caller reaps first, signalling the group afterwards as best it
// can (the pid may then be reused before the group is signalled).
func awaitExit(*os.Process) bool { return false }
