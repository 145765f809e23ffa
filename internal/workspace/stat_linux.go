package workspace

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// statIDs returns the device, inode number and status change time of fi:
// one os made, or one a dirList's Lstat made (statInfo).
func statIDs(fi fs.FileInfo) (dev, ino uint64, ctime int64) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return st.Dev, st.Ino, st.Ctim.Nano()
	case *unix.Stat_t:
		return st.Dev, st.Ino, st.Ctim.Nano()
	}
	return 0, 0, 0
}

// links returns the number of hard links of fi.
func links(fi fs.FileInfo) uint64 {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return uint64(st.Nlink)
	case *unix.Stat_t:
		return uint64(st.Nlink)
	}
	return 0
}

// sameFile is os.SameFile for the status of files os or a dirList took:
// the same device and inode.
func sameFile(a, b fs.FileInfo) bool {
	ad, ai, _ := statIDs(a)
	bd, bi, _ := statIDs(b)
	if ai == 0 || bi == 0 {
		return os.SameFile(a, b)
	}
	return ad == bd && ai == bi
}
