package workspace

import (
	"crypto/sha1"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
)

// ObjectID is a binary git object id (SHA-1).
type ObjectID [sha1.Size]byte

// String returns id in hex, as git prints it.
func (id ObjectID) String() string { return hex.EncodeToString(id[:]) }

// Git tree entry modes, as tree objects spell them.
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
	id   ObjectID
	obj  *toStore // when storing ([Hasher.WriteObjects]): what storing the object takes
}

// toStore is what storing an entry's object takes beyond its id.
type toStore struct {
	unverified bool       // a file hashed from the cache, or a symbolic link: its blob may be missing from the store
	rel        string     // an unverified file's path, slash-separated
	link       string     // a symbolic link's target
	sub        []entry    // a tree's entries
	conv       *converted // how an unverified file converts (nil: nothing converts it)
}

// sortKey is what git sorts entries by: a directory's name with a slash.
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

// treeBody is the content of the tree holding the sorted entries es.
func treeBody(es []entry) []byte {
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
	return body
}

// treeID is the id of the tree holding the sorted entries es.
func treeID(es []entry) ObjectID {
	return hashObject("tree", treeBody(es))
}

// hashObject returns the id of an object of kind and content.
func hashObject(kind string, content []byte) ObjectID {
	h := sha1.New()
	h.Write(objectHeader(kind, int64(len(content))))
	h.Write(content)
	return ObjectID(h.Sum(nil))
}

// objectHeader is the "<kind> <size>\x00" an object's id hashes first.
func objectHeader(kind string, size int64) []byte {
	b := append([]byte(kind), ' ')
	b = strconv.AppendInt(b, size, 10)
	return append(b, 0)
}
