package workspace

import "sort"

// Blobs is what one completed snapshot of a [Hasher] found: the blob id of
// each file it hashed. It is a view of the Hasher's cache, which no later
// walk changes, so keeping one costs nothing.
type Blobs struct {
	m  map[string]stamped[cacheEntry]
	ok bool // a snapshot was taken
}

// Blobs returns what the Hasher's last completed snapshot found; its zero
// value (no snapshot yet) says so through Taken.
func (h *Hasher) Blobs() Blobs {
	h.cache.mu.Lock()
	defer h.cache.mu.Unlock()
	return Blobs{m: h.cache.last, ok: h.cache.last != nil}
}

// Taken reports whether b comes from a snapshot.
func (b Blobs) Taken() bool { return b.ok }

// Changed returns, sorted, the files added, removed or changed in content
// from before to b. Links are not counted: a snapshot hashes their
// targets without caching them.
func (b Blobs) Changed(before Blobs) []string {
	var out []string
	for rel, e := range b.m {
		if was, ok := before.m[rel]; !ok || was.v.id != e.v.id {
			out = append(out, rel)
		}
	}
	for rel := range before.m {
		if _, ok := b.m[rel]; !ok {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out
}
