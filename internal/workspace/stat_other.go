//go:build !linux

package workspace

import "io/fs"

// inodeAndCtime is not implemented outside Linux: the cache then relies on
// size, mtime and mode only.
func inodeAndCtime(fs.FileInfo) (uint64, int64) {
	return 0, 0
}
