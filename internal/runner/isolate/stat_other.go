//go:build !linux

package isolate

import "io/fs"

// inodeAndCtime is not implemented outside Linux: stat keys then rely on
// size, mtime and mode only.
func inodeAndCtime(fs.FileInfo) (uint64, int64) {
	return 0, 0
}

// links is not implemented outside Linux: 0 means unknown, and files are
// then always written beside and renamed.
func links(fs.FileInfo) uint64 {
	return 0
}
