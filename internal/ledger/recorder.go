package ledger

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// Recorder numbers events and writes each one, in the same call, as a JSON
// line to the ledger buffer, as a timestamped line to the run-log buffer,
// and to the live progress writer. Take hands the buffers to a checkpoint.
type Recorder struct {
	mu       sync.Mutex
	now      func() time.Time
	seq      int
	ledger   bytes.Buffer
	log      bytes.Buffer
	events   int
	progress Progress
	mask     func(string) string
}

// Progress shows events as they happen; nil shows nothing.
type Progress interface {
	Event(e Event)
}

// NewRecorder starts numbering after seq (the events already committed).
func NewRecorder(seq int, now func() time.Time, p Progress) *Recorder {
	return &Recorder{seq: seq, now: now, progress: p}
}

// Mask sets a function applied to every event's free text (its reason)
// before it is recorded anywhere, to keep secrets out of the record.
func (r *Recorder) Mask(f func(string) string) { r.mask = f }

// Record completes e with its number and time and records it everywhere.
func (r *Recorder) Record(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	mask := r.mask
	if mask == nil {
		mask = func(s string) string { return s }
	}
	// Paths are an agent's to name as much as reasons are its to word.
	e.Reason, e.Path, e.Winner = mask(e.Reason), mask(e.Path), mask(e.Winner)
	r.seq++
	e.Seq, e.Time = r.seq, r.now().UTC()
	b, err := json.Marshal(e)
	if err != nil { // an Event always marshals; keep the record anyway
		b = []byte(fmt.Sprintf(`{"seq":%d,"type":"unencodable"}`, e.Seq))
	}
	r.ledger.WriteString(mask(string(b))) // and whatever other field carried one
	r.ledger.WriteByte('\n')
	fmt.Fprintf(&r.log, "%s  %3d  %s\n", e.Time.Format(time.RFC3339), e.Iteration, mask(e.Line()))
	r.events++
	if r.progress != nil {
		r.progress.Event(e)
	}
	return e
}

// Take returns what was recorded since the last Take and starts afresh.
func (r *Recorder) Take() (ledger, log []byte, events int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ledger = bytes.Clone(r.ledger.Bytes())
	log = bytes.Clone(r.log.Bytes())
	events = r.events
	r.ledger.Reset()
	r.log.Reset()
	r.events = 0
	return ledger, log, events
}

// Pending returns the ledger lines recorded since the last Take, without
// taking them.
func (r *Recorder) Pending() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.ledger.Bytes())
}

// Decode reads a ledger: JSON lines, one event each. A line that does not
// parse is an error naming its line number.
func Decode(rd io.Reader) ([]Event, error) {
	var out []Event
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("ledger line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, sc.Err()
}
