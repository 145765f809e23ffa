package runner

import (
	"maps"

	"github.com/loop-action/loop-action/internal/gate"
	"github.com/loop-action/loop-action/internal/state"
)

// record keeps what the gate saw in iteration it (0: the baseline) for
// the save that ends it: the measured snapshot, the judges' answers
// (masked, as the gate read them), each node call and the verdicts. It is
// data for replay (replay.go), never evidence.
func (r *run) record(it int, m measurement, d dispatched) {
	rec := &state.Recording{Iteration: it, Snapshot: m.snapshot, Void: m.void, Verdicts: m.verdicts}
	if len(d.judges) > 0 {
		rec.Judges = map[string]gate.JudgeResult{}
		for name, jr := range maps.All(d.judges) {
			jr.Answers = maskAll(r.mask, jr.Answers)
			jr.Err = r.mask(jr.Err)
			rec.Judges[name] = jr
		}
	}
	for _, nr := range d.runs {
		if !nr.queued || nr.skip != "" {
			continue
		}
		c := state.Call{Node: nr.node.Name, Role: string(nr.node.Role), Tier: nr.tier, Tokens: nr.usage.Total, CostUSD: nr.usage.CostUSD}
		if nr.resp.Err != nil {
			c.Failure = r.mask(nr.resp.Err.Error())
		}
		rec.Calls = append(rec.Calls, c)
	}
	r.recording = rec
}

func maskAll(mask func(string) string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mask(s)
	}
	return out
}

// attachRecording adds the pending recording to a save that reads the
// loop root (an interrupted save reads nothing of it, and has none).
func (r *run) attachRecording(c *state.Commit) {
	if r.recording == nil || c.Interrupted {
		return
	}
	r.recording.Spend = r.cp.Spend
	c.Recording, c.Objects = r.recording, r.hasher.WriteObjects
}
