package evidence

import "github.com/loop-action/loop-action/internal/gate"

// Masked returns ev with mask applied to everything a command printed, to
// every judge answer, and to what was read from files (their content, the
// target of a symlink that leaves the root, a read error), so that a
// secret a check, a judge or an agent's file holds never reaches an
// evidence line, a summary, a comment or an export. A regex check sees
// the file with its secrets masked.
func Masked(ev gate.Evidence, mask func(string) string) gate.Evidence {
	if mask == nil {
		return ev
	}
	files := make(map[gate.CheckID]gate.FileResult, len(ev.Files))
	for id, f := range ev.Files {
		f.Escapes, f.Err = mask(f.Escapes), mask(f.Err)
		if f.Content != nil {
			f.Content = []byte(mask(string(f.Content)))
		}
		files[id] = f
	}
	if ev.Files != nil {
		ev.Files = files
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
	ev.Void = mask(ev.Void) // it names files of the workspace
	return ev
}

func maskCommand(r gate.CommandResult, mask func(string) string) gate.CommandResult {
	r.Command, r.Tail, r.Stdout, r.StartErr = mask(r.Command), mask(r.Tail), mask(r.Stdout), mask(r.StartErr)
	return r
}
