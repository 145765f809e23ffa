package workspace

import (
	"io/fs"
	"syscall"
)

// statIDs returns the device, inode number and status change time of fi.
func statIDs(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Dev, st.Ino, st.Ctim.Nano()
	}
	return 0, 0, 0
}

// links returns the number of hard links of fi.
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
