package loop

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/bmatcuk/doublestar/v4"
)

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)
	envRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// validator collects the diagnostics of one Validate call.
type validator struct {
	c       *Config
	ix      *index
	suggest suggester
	out     *sink
}

func (v *validator) report(sev Severity, at []string, format string, args ...any) {
	if !v.out.full(sev) {
		v.out.add(Diagnostic{Pos: v.c.pos(at...), Severity: sev, Message: fmt.Sprintf(format, args...)})
	}
}

func (v *validator) errorf(at string, format string, args ...any) {
	v.report(Error, []string{at}, format, args...)
}

// value is a Duration or a Size.
type value interface {
	problem() string
	shown() string
}

// usable reports a value that cannot be used, at the key at, as
// "<what> <the value as written> <why>".
func (v *validator) usable(at, what string, x value) {
	if p := x.problem(); p != "" {
		v.errorf(at, "%s %s %s", what, x.shown(), p)
	}
}

// Validate checks every rule of a loop config and returns all problems
// found, errors and warnings, in file order. It reads no environment: see
// CheckEnv for the provider variables.
//
// At most MaxDiagnostics problems are listed; a first diagnostic says how
// many more there are.
func (c *Config) Validate() Diagnostics {
	s := &sink{}
	c.validate(s)
	return s.result(c.File)
}

func (c *Config) validate(out *sink) {
	v := &validator{c: c, ix: newIndex(c), suggest: newSuggester(), out: out}
	v.top()
	v.stop()
	v.paths()
	v.providers()
	v.nodes()
	v.goals()
	v.stages()
	v.deliver()
	v.hook()
	v.memory()
}

func (v *validator) top() {
	switch c := v.c; {
	case c.Name == "":
		v.errorf("name", "name is required: it names the run, the commit status and the export")
	case !nameRE.MatchString(c.Name):
		v.errorf("name", "name %q may contain only letters, digits, '-' and '_', and must start with a letter or digit", c.Name)
	}
	if r := v.c.Run.Concurrency; r < 0 {
		v.errorf("run.concurrency", "run.concurrency must be 0 (the wave's width) or more, not %d", r)
	}
	if r := v.c.Run.CheckConcurrency; r < 0 {
		v.errorf("run.check_concurrency", "run.check_concurrency must be 0 (every check at once) or more, not %d", r)
	}
	v.usable("run.max_file_size", "run.max_file_size", v.c.Run.MaxFileSize)
	if n := v.c.Context.CarrySummaries; n < 0 {
		v.errorf("context.carry_summaries", "context.carry_summaries must be 0 or more, not %d", n)
	}
	if r := v.c.Success.MinPassRate; r <= 0 || r > 1 {
		v.errorf("success.min_pass_rate", "success.min_pass_rate must be above 0 and at most 1, not %g", r)
	}
	v.metrics()
	for _, a := range v.c.Review.Approvers {
		if !loginRE.MatchString(a) {
			v.errorf("review.approvers", "review.approvers: %q is not a GitHub login", a)
		}
	}
}

// loginRE matches GitHub logins: letters, digits and single hyphens, not
// at either end, at most 39 characters.
var loginRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)

func (v *validator) stop() {
	s := v.c.Stop
	if s.MaxIterations < 1 {
		v.errorf("stop.max_iterations", "stop.max_iterations must be at least 1, not %d", s.MaxIterations)
	}
	for _, f := range []struct {
		key string
		val float64
	}{
		{"no_progress", float64(s.NoProgress)}, {"perturb_after", float64(s.PerturbAfter)},
		{"max_tokens", float64(s.MaxTokens)}, {"max_cost_usd", s.MaxCostUSD},
		{"max_revisions_per_node", float64(s.MaxRevisionsPerNode)}, {"max_node_failures", float64(s.MaxNodeFailures)},
	} {
		if f.val < 0 {
			v.errorf("stop."+f.key, "stop.%s must be 0 (off) or more, not %g", f.key, f.val)
		}
	}
	if s.NoProgress > 0 && s.PerturbAfter >= s.NoProgress {
		v.report(Error, []string{"stop.perturb_after", "stop.no_progress"},
			"stop.perturb_after (%d) must be less than stop.no_progress (%d): the loop has to vary its approach before it stops for lack of progress",
			s.PerturbAfter, s.NoProgress)
	}
	v.usable("stop.max_wall_clock", "stop.max_wall_clock", s.MaxWallClock)
	if !s.MaxWallClock.IsSet() && s.MaxTokens == 0 && s.MaxCostUSD == 0 {
		v.report(Warning, []string{"stop", "name"},
			"no wall-clock, token or cost budget: only stop.max_iterations (%d) bounds this loop", s.MaxIterations)
	}
}

func (v *validator) metrics() {
	m := v.c.Metrics
	if m.Command != "" && len(m.Argv) > 0 {
		v.errorf("metrics.argv", "metrics takes command or argv, not both")
	}
	v.usable("metrics.timeout", "metrics.timeout", m.Timeout)
}

// paths checks the path lists: context files, protected and exported globs.
func (v *validator) paths() {
	lists := map[string][]string{"context.files": v.c.Context.Files, "protect.paths": v.c.Protect.Paths, "export.paths": v.c.Export.Paths}
	for _, key := range slices.Sorted(maps.Keys(lists)) {
		for i, g := range lists[key] {
			if p := globProblem(g); p != "" {
				v.errorf(key, "%s[%d] %q %s", key, i, g, p)
			}
		}
	}
}

// relPathProblem says why p is not a path inside the loop root, or "".
func relPathProblem(p string) string {
	switch {
	case p == "":
		return "is empty"
	case path.IsAbs(p) || strings.HasPrefix(p, `\`) || windowsDrive(p):
		return "must be relative to the loop root"
	case path.Clean(p) == ".." || strings.HasPrefix(path.Clean(p), "../"):
		return "must not leave the loop root"
	}
	return ""
}

// windowsDrive reports whether p starts with a drive such as "C:\".
func windowsDrive(p string) bool {
	return len(p) >= 2 && p[1] == ':' && ('A' <= p[0] && p[0] <= 'Z' || 'a' <= p[0] && p[0] <= 'z') &&
		(len(p) == 2 || p[2] == '/' || p[2] == '\\')
}

func globProblem(g string) string {
	if p := relPathProblem(g); p != "" {
		return p
	}
	if !doublestar.ValidatePattern(g) {
		return "is not a valid glob pattern"
	}
	return ""
}

// providerPath is the indexed path of a provider's key.
func providerPath(name string, key ...string) string {
	return toml.Key(append([]string{"providers", name}, key...)).String()
}

func (v *validator) providers() {
	for _, n := range v.ix.providers.list {
		v.provider(n, v.c.Providers[n])
	}
}

func (v *validator) provider(name string, p Provider) {
	at := func(key string) string { return providerPath(name, key) }
	if !nameRE.MatchString(name) {
		v.errorf(providerPath(name), "provider name %q may contain only letters, digits, '-' and '_', and must start with a letter or digit", name)
	}
	if !v.providerPreset(name, p) {
		return
	}
	switch p.Type {
	case "command":
		v.commandProvider(name, p)
	case "openai":
		v.openAI(name, p)
	default:
		v.errorf(at("type"), "provider %q: unknown type %q (use \"command\" or \"openai\")", name, p.Type)
		return
	}
	v.usable(at("timeout"), fmt.Sprintf("provider %q: timeout", name), p.Timeout)
	v.providerEnv(name, p)
	for _, t := range slices.Sorted(maps.Keys(p.Tiers)) {
		if !slices.Contains(TierLadder, t) {
			v.errorf(providerPath(name, "tiers", t), "provider %q: unknown tier %q (tiers are %s)", name, t, strings.Join(TierLadder, ", "))
		}
	}
	if p.Price != nil && (p.Price.Input < 0 || p.Price.Output < 0) {
		v.errorf(at("price"), "provider %q: prices must not be negative", name)
	}
}

func (v *validator) commandProvider(name string, p Provider) {
	v.notOpenAI(name, p)
	if len(p.Command) == 0 || p.Command[0] == "" {
		v.errorf(providerPath(name, "command"), "provider %q needs a command: the agent's argv, e.g. [\"claude\", \"-p\"]", name)
	}
	v.providerPrompt(name, p)
	if msg := usageProblem(p.Usage); msg != "" {
		v.errorf(providerPath(name, "usage"), "provider %q: %s", name, msg)
	}
	v.providerArgs(name, p)
	v.providerWatch(name, p)
}

func (v *validator) providerPrompt(name string, p Provider) {
	count := func(ph string) int {
		n := 0
		for _, a := range p.Command {
			n += strings.Count(a, ph)
		}
		return n
	}
	at := []string{providerPath(name, "prompt"), providerPath(name, "command")}
	switch p.Prompt {
	case "stdin", "arg", "file":
	default:
		v.errorf(at[0], "provider %q: prompt must be \"stdin\", \"arg\" or \"file\", not %q", name, p.Prompt)
		return
	}
	for _, mp := range [][2]string{{"arg", "{prompt}"}, {"file", "{prompt_file}"}} {
		mode, ph := mp[0], mp[1]
		switch n := count(ph); {
		case p.Prompt == mode && n == 0:
			v.report(Error, at, "provider %q: prompt = %q needs %s in the command", name, mode, ph)
		case p.Prompt != mode && n > 0:
			v.report(Error, at, "provider %q: the command has %s, which only prompt = %q fills (prompt is %q)", name, ph, mode, p.Prompt)
		}
	}
	for _, a := range p.Command {
		if strings.Contains(a, "{tier}") && a != "{tier}" {
			v.errorf(providerPath(name, "command"), "provider %q: {tier} must be a whole argument of the command, not part of %q", name, a)
		}
	}
}

// usageProblem says why a usage setting cannot be used, or "".
func usageProblem(u string) string {
	switch u {
	case "none", "claude-json", "codex-jsonl", "aider-text", "gemini-json", "opencode-jsonl":
		return ""
	}
	re, ok := strings.CutPrefix(u, "regex:")
	if !ok {
		return fmt.Sprintf("usage must be none, claude-json, codex-jsonl, aider-text, gemini-json, opencode-jsonl or regex:<re>, not %q", u)
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return fmt.Sprintf("usage regex /%s/ does not compile: %s", re, regexpError(err))
	}
	for _, g := range r.SubexpNames() {
		if slices.Contains(UsageGroups, g) {
			return ""
		}
	}
	return fmt.Sprintf("usage regex /%s/ needs a named group: one of %s, e.g. (?P<total>\\d+)", re, strings.Join(UsageGroups, ", "))
}

// UsageGroups are the named groups a regex: usage parser may capture.
var UsageGroups = []string{"input", "output", "total", "cost"}

// regexpError says what is wrong with a pattern without repeating it.
func regexpError(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return string(se.Code)
	}
	return err.Error()
}
