//go:build !linux

package workspace

import "io/fs"

// statIDs is not implemented outside Linux: stat keys then rely on size,
// mtime and mode only.
func statIDs(fs.FileInfo) (dev, ino uint64, ctime int64) {
	return 0, 0, 0
}

// links is not implemented outside Linux: 0 means unknown, and copies are
// then always written beside and renamed.
func links(fs.FileInfo) uint64 {
	return 0
}
