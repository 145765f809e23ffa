package state

import "time"

// SetClock makes d stamp checkpoints with now instead of time.Now.
func SetClock(d *Dir, now func() time.Time) { d.now = now }
