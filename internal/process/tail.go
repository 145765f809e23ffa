package process

import "sync"

// tailBuffer is an io.Writer that keeps only the last limit bytes written to
// it and counts every byte. It is safe for concurrent use, so the stdout and
// stderr draining goroutines can share one to build the interleaved tail.
//
// Memory grows with the data actually written, up to limit bytes; after that
// buf is used as a ring whose oldest byte is at buf[start].
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	start int
	total int64
}

// newTailBuffer returns a tailBuffer keeping the last limit bytes; limit must
// be positive.
func newTailBuffer(limit int) *tailBuffer {
	if limit <= 0 {
		panic("process: tailBuffer limit must be positive")
	}
	return &tailBuffer{limit: limit}
}

// Write records p. It never fails and always reports len(p) bytes written.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	t.total += int64(n)
	p = p[max(0, n-t.limit):] // only the last limit bytes can stay
	if room := t.limit - len(t.buf); room > 0 {
		// Still filling up; start is 0 until the buffer is full.
		k := min(room, len(p))
		t.buf = append(t.grow(len(t.buf)+k), p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes, wrapping at most once
		k := copy(t.buf[t.start:], p)
		p = p[k:]
		t.start = (t.start + k) % t.limit
	}
	return n, nil
}

// grow returns t.buf with capacity for at least need bytes, doubling up to
// (but never beyond) t.limit so that the memory held stays bounded.
func (t *tailBuffer) grow(need int) []byte {
	if need <= cap(t.buf) {
		return t.buf
	}
	newCap := min(max(need, 2*cap(t.buf), 4096), t.limit)
	nb := make([]byte, len(t.buf), newCap)
	copy(nb, t.buf)
	return nb
}

// Bytes returns a copy of the retained bytes, oldest first; nil when nothing
// has been written.
func (t *tailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.buf) == 0 {
		return nil
	}
	out := make([]byte, 0, len(t.buf))
	out = append(out, t.buf[t.start:]...)
	return append(out, t.buf[:t.start]...)
}

// Total returns the number of bytes ever written, including discarded ones.
func (t *tailBuffer) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// Truncated reports whether bytes have been discarded.
func (t *tailBuffer) Truncated() bool {
	return t.Total() > int64(t.limit)
}
