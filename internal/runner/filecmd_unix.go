//go:build unix

package runner

import (
	"io/fs"
	"os"
	"syscall"
)

// chownLike gives path the owner of like, when this process may: the
// action runs as root in its container while the runner's user owns the
// file-command files. It is best effort; a failure leaves this process's
// user as the owner.
func chownLike(path string, like fs.FileInfo) {
	if st, ok := like.Sys().(*syscall.Stat_t); ok {
		_ = os.Lchown(path, int(st.Uid), int(st.Gid))
	}
}
