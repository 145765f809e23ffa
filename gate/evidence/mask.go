package evidence

import "github.com/loop-action/loop-action/gate"

// Masked returns ev with mask applied to everything a command printed and
// to every judge answer, so that a secret a check or a judge prints never
// reaches an evidence line, a summary, a comment or an export.
func Masked(ev gate.Evidence, mask func(string) string) gate.Evidence {
	if mask == nil {
		return ev
	}
	cmds := make(map[gate.CheckID]gate.CommandResult, len(ev.Commands))
	for id, r := range ev.Commands {
		cmds[id] = maskCommand(r, mask)
	}
	ev.Commands = cmds
	if ev.Metrics != nil {
		m := *ev.Metrics
		m.Command = maskCommand(m.Command, mask)
		ev.Metrics = &m
	}
	judges := make(map[string]gate.JudgeResult, len(ev.Judges))
	for name, j := range ev.Judges {
		answers := make([]string, len(j.Answers))
		for i, a := range j.Answers {
			answers[i] = mask(a)
		}
		j.Answers, j.Err = answers, mask(j.Err)
		judges[name] = j
	}
	ev.Judges = judges
	return ev
}

func maskCommand(r gate.CommandResult, mask func(string) string) gate.CommandResult {
	r.Command, r.Tail, r.Stdout, r.StartErr = mask(r.Command), mask(r.Tail), mask(r.Stdout), mask(r.StartErr)
	return r
}
