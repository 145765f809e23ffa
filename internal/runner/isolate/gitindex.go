package isolate

import (
	"crypto/sha1"
	"encoding/binary"
	"os"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/loop-action/loop-action/internal/workspace"
)

// indexEntry is one path of the node's index: its base, and the stat of
// the worktree's file when it last held that base. Should the file have
// changed since, git sees a different stat and compares the content.
type indexEntry struct {
	path string
	mode filemode.FileMode
	id   plumbing.Hash
	key  workspace.StatKey
}

// writeIndex writes the node's index (git's index format, version 2) of
// entries, which are in path order.
func writeIndex(r *os.Root, entries []indexEntry) error {
	buf := make([]byte, 0, 12+len(entries)*80+sha1.Size)
	buf = append(buf, "DIRC"...)
	buf = binary.BigEndian.AppendUint32(buf, 2)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(entries)))
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	for _, e := range entries {
		buf = e.append(buf, uid, gid)
	}
	sum := sha1.Sum(buf)
	return writeNew(r, ".git/index", append(buf, sum[:]...))
}

// append appends e's index entry to buf.
func (e indexEntry) append(buf []byte, uid, gid uint32) []byte {
	size, mtime, ctime, dev, ino := e.key.IndexStat()
	start := len(buf)
	for _, v := range []uint32{
		uint32(ctime / 1e9), uint32(ctime % 1e9), uint32(mtime / 1e9), uint32(mtime % 1e9),
		uint32(dev), uint32(ino), uint32(e.mode), uid, gid, uint32(size),
	} {
		buf = binary.BigEndian.AppendUint32(buf, v)
	}
	buf = append(buf, e.id[:]...)
	buf = binary.BigEndian.AppendUint16(buf, uint16(min(len(e.path), 0xfff)))
	buf = append(buf, e.path...)
	pad := 8 - (len(buf)-start)%8 // one to eight NULs
	for range pad {
		buf = append(buf, 0)
	}
	return buf
}
