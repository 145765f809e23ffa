package workspace

import (
	"crypto/sha1"
	"slices"
	"strconv"
	"strings"
)

// objectID is a binary git object id (SHA-1).
type objectID [sha1.Size]byte

// Git tree entry modes, spelled as git writes them in tree objects.
const (
	modeFile    = "100644"
	modeExec    = "100755"
	modeSymlink = "120000"
	modeTree    = "40000"
)

// entry is one line of a git tree object.
type entry struct {
	name string
	mode string
	id   objectID
}

// sortKey is the name git compares entries by: directories sort as if
// their name had a trailing slash.
func (e entry) sortKey() string {
	if e.mode == modeTree {
		return e.name + "/"
	}
	return e.name
}

// sortEntries orders entries as git requires inside a tree object.
func sortEntries(es []entry) {
	slices.SortFunc(es, func(a, b entry) int {
		return strings.Compare(a.sortKey(), b.sortKey())
	})
}

// treeID returns the id of the tree object holding the sorted entries es.
func treeID(es []entry) objectID {
	size := 0
	for _, e := range es {
		size += len(e.mode) + 1 + len(e.name) + 1 + len(e.id)
	}
	body := make([]byte, 0, size)
	for _, e := range es {
		body = append(body, e.mode...)
		body = append(body, ' ')
		body = append(body, e.name...)
		body = append(body, 0)
		body = append(body, e.id[:]...)
	}
	return hashObject("tree", body)
}

// hashObject returns the git id of an object of the given kind and content.
func hashObject(kind string, content []byte) objectID {
	h := sha1.New()
	h.Write(objectHeader(kind, int64(len(content))))
	h.Write(content)
	return objectID(h.Sum(nil))
}

// objectHeader is the "<kind> <size>\x00" prefix hashed before an object's content.
func objectHeader(kind string, size int64) []byte {
	b := append([]byte(kind), ' ')
	b = strconv.AppendInt(b, size, 10)
	return append(b, 0)
}
