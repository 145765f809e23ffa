//go:build unix

package isolate

import "syscall"

// oNoFollow makes an open fail on a symbolic link instead of following it.
const oNoFollow = syscall.O_NOFOLLOW
