package loop

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

func (v *validator) goals() {
	c := v.c
	blocking := 0
	for _, g := range c.Goals {
		if g.IsBlocking() && len(g.Checks) > 0 {
			blocking++
		}
	}
	v.names("goal", v.ix.goals, goalPath)
	for gi, g := range c.Goals {
		if len(g.Checks) == 0 {
			v.errorf(fmt.Sprintf("goal[%d]", gi), "goal %q has no checks: add at least one [[goal.check]]", g.Name)
		}
		for ci, ch := range g.Checks {
			v.check(gi, ci, ch)
		}
	}
	switch {
	case len(c.Goals) == 0:
		v.errorf("name", "no goals: add a [[goal]] with at least one [[goal.check]]")
	case blocking == 0:
		v.report(Error, []string{"goal[0]", "name"}, "no blocking goal with checks: overall success needs at least one goal with blocking = true (the default) and a check")
	}
}

func (v *validator) check(gi, ci int, ch Check) {
	at := func(key string) string { return checkPath(gi, ci, key) }
	owner := fmt.Sprintf("goal %q check %d", v.c.Goals[gi].Name, ci+1)
	if !slices.Contains(CheckTypes, ch.Type) {
		what := fmt.Sprintf("unknown check type %q", ch.Type)
		if ch.Type == "" {
			what = "check needs a type"
		}
		v.report(Error, []string{at("type"), fmt.Sprintf("goal[%d].check[%d]", gi, ci)}, "%s: %s (one of %s)", owner, what, strings.Join(CheckTypes, ", "))
		return
	}
	v.checkKeysApply(gi, ci, ch, owner)
	switch {
	case ch.IsCommand():
		v.commandCheck(at, owner, ch)
	case ch.Type == CheckFileExists:
		v.pathCheck(at, owner, ch)
	case ch.Type == CheckRegex:
		v.pathCheck(at, owner, ch)
		v.regexCheck(at, owner, ch)
	case ch.Type == CheckMetric:
		v.metricCheck(at, owner, ch)
	case ch.Type == CheckJudge:
		v.judgeCheck(gi, at, owner, ch)
	}
}

// checkKeysApply reports keys written on a check that its type ignores.
func (v *validator) checkKeysApply(gi, ci int, ch Check, owner string) {
	set := map[string]bool{
		"run": ch.Run != "", "argv": len(ch.Argv) > 0, "expect_exit": ch.ExpectExit != 0,
		"path": ch.Path != "", "non_empty": ch.NonEmpty, "pattern": ch.Pattern != "",
		"name": ch.Name != "", "op": ch.Op != "", "value": ch.Value != 0,
		"node": ch.Node != "", "min_score": ch.MinScore != 0, "prompt": ch.Prompt != "",
		"timeout": ch.Timeout.IsSet() && !ch.IsCommand(),
	}
	for _, key := range knownKeys([]string{"goal", "check"}) {
		if key == "type" || accepts(ch.Type, key) {
			continue
		}
		if set[key] || v.c.has(checkPath(gi, ci, key)) {
			v.errorf(checkPath(gi, ci, key), "%s: %q does not apply to a %s check (it takes %s)",
				owner, key, ch.Type, strings.Join(keysFor(ch.Type), ", "))
		}
	}
}

func (v *validator) commandCheck(at func(string) string, owner string, ch Check) {
	switch {
	case ch.Run == "" && len(ch.Argv) == 0:
		v.report(Error, []string{at("type")}, "%s: a %s check needs run (a shell command) or argv", owner, ch.Type)
	case ch.Run != "" && len(ch.Argv) > 0:
		v.errorf(at("argv"), "%s: give run or argv, not both", owner)
	}
	v.usable(at("timeout"), owner+": timeout", ch.Timeout)
	if ch.ExpectExit < 0 || ch.ExpectExit > 255 {
		v.errorf(at("expect_exit"), "%s: expect_exit must be between 0 and 255, not %d", owner, ch.ExpectExit)
	}
}

func (v *validator) pathCheck(at func(string) string, owner string, ch Check) {
	if ch.Path == "" {
		v.errorf(at("type"), "%s: a %s check needs a path", owner, ch.Type)
		return
	}
	if p := relPathProblem(ch.Path); p != "" {
		v.errorf(at("path"), "%s: path %q %s", owner, ch.Path, p)
	}
}

func (v *validator) regexCheck(at func(string) string, owner string, ch Check) {
	if ch.Pattern == "" {
		v.errorf(at("type"), "%s: a regex check needs a pattern", owner)
		return
	}
	if _, err := regexp.Compile(ch.Pattern); err != nil {
		v.errorf(at("pattern"), "%s: pattern /%s/ does not compile: %s", owner, ch.Pattern, regexpError(err))
	}
}

func (v *validator) metricCheck(at func(string) string, owner string, ch Check) {
	if ch.Name == "" {
		v.errorf(at("type"), "%s: a metric check needs the metric's name", owner)
	}
	if !slices.Contains(MetricOps, ch.Op) {
		v.report(Error, []string{at("op"), at("type")}, "%s: op must be one of %s, not %q", owner, strings.Join(MetricOps, " "), ch.Op)
	}
	if !v.c.has(at("value")) && ch.Value == 0 && v.c.keys.byPath != nil {
		v.errorf(at("type"), "%s: a metric check needs a value to compare with", owner)
	}
	if !v.c.Metrics.Configured() {
		v.errorf(at("type"), "%s: metric checks need a [metrics] command that prints the metrics as JSON", owner)
	}
}

func (v *validator) judgeCheck(gi int, at func(string) string, owner string, ch Check) {
	if ch.MinScore < 0 || ch.MinScore > 10 {
		v.errorf(at("min_score"), "%s: min_score must be between 0 and 10, not %g", owner, ch.MinScore)
	}
	ni := v.ix.nodes.index(ch.Node)
	switch {
	case ch.Node == "":
		v.errorf(at("type"), "%s: a judge check needs the judge node's name", owner)
		return
	case ni < 0:
		v.errorf(at("node"), "%s: unknown judge node %q%s", owner, ch.Node, v.didYouMean(ch.Node, v.ix.nodes))
		return
	case v.c.Nodes[ni].Role != RoleJudge:
		v.errorf(at("node"), "%s: node %q is a %s, not a judge", owner, ch.Node, v.c.Nodes[ni].Role)
		return
	}
	v.judgeIndependence(gi, ni, at("node"), owner)
}

// judgeIndependence enforces that a judge shares no provider with the
// goal's builders and runs after them, so it rules on their finished work.
// A goal with many builders and judges can have quadratically many such
// problems: once the sink is full they are only counted, not formatted.
func (v *validator) judgeIndependence(gi, ji int, at, owner string) {
	c := v.c
	judge := c.Nodes[ji]
	for _, bi := range v.ix.builders[c.Goals[gi].Name] {
		b := c.Nodes[bi]
		if b.Provider == judge.Provider && !v.out.full(Error) {
			v.errorf(at, "%s: judge %q uses provider %q, which also runs builder %q of this goal; a judge must not share a provider with the builders it judges",
				owner, judge.Name, judge.Provider, b.Name)
		}
		if !v.ix.reaches(ji, bi) && !v.out.full(Error) {
			v.report(Error, []string{nodePath(ji, "after"), nodePath(ji, "name")},
				"node %q: judge of goal %q must run after its builder %q (add %q to after)", judge.Name, c.Goals[gi].Name, b.Name, b.Name)
		}
	}
}
