//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// compositeAction is an action.yml with runs.using: composite, as the
// runner reads it.
type compositeAction struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Author      string `yaml:"author"`
	Branding    struct {
		Icon  string `yaml:"icon"`
		Color string `yaml:"color"`
	} `yaml:"branding"`
	Inputs map[string]struct {
		Description string `yaml:"description"`
		Required    bool   `yaml:"required"`
		Default     string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Description string `yaml:"description"`
		Value       string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string   `yaml:"using"`
		Steps []ciStep `yaml:"steps"`
	} `yaml:"runs"`
}

// ciStep is a step of a job or of a composite action: the keys the
// runners here understand (an unknown key fails the test).
type ciStep struct {
	Name            string            `yaml:"name"`
	ID              string            `yaml:"id"`
	If              string            `yaml:"if"`
	Shell           string            `yaml:"shell"`
	Run             string            `yaml:"run"`
	Uses            string            `yaml:"uses"`
	Env             map[string]string `yaml:"env"`
	With            map[string]string `yaml:"with"`
	ContinueOnError bool              `yaml:"continue-on-error"`
}

func (s ciStep) title() string {
	switch {
	case s.Name != "":
		return s.Name
	case s.Uses != "":
		return "uses " + s.Uses
	}
	return "run " + strings.SplitN(s.Run, "\n", 2)[0]
}

// loadStrict decodes the YAML file into v, failing the test on a key v
// does not have.
func loadStrict(t *testing.T, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func loadComposite(t *testing.T, file string) compositeAction {
	t.Helper()
	var a compositeAction
	loadStrict(t, file, &a)
	if a.Runs.Using != "composite" {
		t.Fatalf("%s: runs.using is %q, not composite", file, a.Runs.Using)
	}
	return a
}

// standIn runs a uses: step the runner cannot run for real here.
type standIn func(ctx context.Context, j *jobEnv, with map[string]string, env []string) (map[string]string, error)

// jobEnv is what every step of one job shares, a composite action's
// steps included: the runner's environment for run steps, the PATH
// entries steps added (GITHUB_PATH), the working directory, the stand-ins
// for uses: steps, and the job's log.
type jobEnv struct {
	t     *testing.T
	env   []string // GITHUB_*, RUNNER_*, PATH, HOME…
	path  []string // added by steps, the newest first
	dir   string   // GITHUB_WORKSPACE
	temp  string   // RUNNER_TEMP
	cache string   // actions/cache's store, shared by the jobs of a test
	uses  map[string]standIn
	log   *strings.Builder
}

// environ is the environment of a process a step starts: the job's, the
// variables given (later ones win), and PATH with what steps added first.
func (j *jobEnv) environ(more ...string) []string {
	env := map[string]string{}
	var order []string
	for _, kv := range append(slices.Clone(j.env), more...) {
		k, v, _ := strings.Cut(kv, "=")
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	if len(j.path) > 0 {
		env["PATH"] = strings.Join(append(slices.Clone(j.path), env["PATH"]), ":")
	}
	out := make([]string, 0, len(order))
	for _, k := range order {
		out = append(out, k+"="+env[k])
	}
	return out
}

// getenv is a variable of the job's environment.
func (j *jobEnv) getenv(name string) string {
	v := ""
	for _, kv := range j.env {
		if k, val, _ := strings.Cut(kv, "="); k == name {
			v = val
		}
	}
	return v
}

func (j *jobEnv) logf(format string, args ...any) { fmt.Fprintf(j.log, format+"\n", args...) }

// stepResult is what the steps context says about a step.
type stepResult struct {
	outputs             map[string]string
	outcome, conclusion string
}

// stepList runs steps in order the way the runner does: a step's if:
// (default success()), continue-on-error, run: steps under bash -eo
// pipefail with the environment and a GITHUB_OUTPUT, GITHUB_PATH and
// GITHUB_ENV file of their own, uses: steps by the stand-ins. ${{ }} is
// expanded with scope's contexts and the steps context.
type stepList struct {
	j       *jobEnv
	steps   []ciStep
	context func(path []string) (any, bool) // the contexts but steps
	env     []string                        // more variables for run steps (a composite's GITHUB_ACTION_PATH, the uses step's env)
	results map[string]*stepResult
	failed  string // the first step that failed
}

func (l *stepList) scope() exprScope {
	return exprScope{fatalf: l.j.t.Fatalf, lookup: l.lookup, status: func(name string) bool {
		switch name {
		case "success":
			return l.failed == ""
		case "failure":
			return l.failed != ""
		}
		return name == "always"
	}}
}

func (l *stepList) lookup(path []string) (any, bool) {
	if path[0] != "steps" {
		return l.context(path)
	}
	if len(path) < 3 || !slices.ContainsFunc(l.steps, func(s ciStep) bool { return s.ID == path[1] }) {
		return nil, false
	}
	r := l.results[path[1]]
	if r == nil {
		r = &stepResult{} // not run yet, or skipped: no outputs
	}
	switch {
	case len(path) == 4 && path[2] == "outputs":
		return r.outputs[path[3]], true
	case len(path) == 3 && (path[2] == "outcome" || path[2] == "conclusion"):
		return map[string]string{"outcome": r.outcome, "conclusion": r.conclusion}[path[2]], true
	}
	return nil, false
}

func (l *stepList) run(ctx context.Context) {
	l.results = map[string]*stepResult{}
	sc := l.scope()
	for i, s := range l.steps {
		r := &stepResult{outputs: map[string]string{}, outcome: "skipped", conclusion: "skipped"}
		if s.ID != "" {
			l.results[s.ID] = r
		}
		if !sc.cond(s.If) {
			l.j.logf("--- skipped: %s", s.title())
			continue
		}
		l.j.logf("--- step %d: %s", i+1, s.title())
		out, err := l.step(ctx, s)
		r.outputs, r.outcome, r.conclusion = out, "success", "success"
		if err != nil {
			l.j.logf("step failed: %v", err)
			r.outcome, r.conclusion = "failure", "failure"
			if s.ContinueOnError {
				r.conclusion = "success"
				l.j.logf("(continue-on-error: the job goes on)")
			} else if l.failed == "" {
				l.failed = s.title()
			}
		}
	}
}

func (l *stepList) step(ctx context.Context, s ciStep) (map[string]string, error) {
	sc := l.scope()
	var env []string
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+sc.expand(s.Env[k]))
	}
	switch {
	case s.Uses != "" && s.Run != "":
		l.j.t.Fatalf("step %q has both uses and run", s.title())
	case s.Uses != "":
		with := map[string]string{}
		for k, v := range s.With {
			with[k] = sc.expand(v)
		}
		use, ok := l.j.uses[s.Uses]
		if !ok {
			l.j.t.Fatalf("step %q uses %s, which this runner has no stand-in for", s.title(), s.Uses)
		}
		return use(ctx, l.j, with, append(slices.Clone(l.env), env...))
	case s.Shell != "" && s.Shell != "bash":
		l.j.t.Fatalf("step %q: shell %q (only bash is modelled)", s.title(), s.Shell)
	case len(s.With) > 0:
		l.j.t.Fatalf("step %q: with: on a run step", s.title())
	}
	return l.j.script(ctx, sc.expand(s.Run), append(slices.Clone(l.env), env...))
}

// script runs a run: step as the runner runs shell: bash, and takes in
// what it wrote to GITHUB_PATH and GITHUB_ENV.
func (j *jobEnv) script(ctx context.Context, body string, env []string) (map[string]string, error) {
	dir, err := os.MkdirTemp(j.temp, "step-")
	if err != nil {
		j.t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	files := map[string]string{"step.sh": body, "output": "", "path": "", "env": ""}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			j.t.Fatal(err)
		}
	}
	// Bounded as a whole: a go build the step started dies with it.
	cmd := subprocess.Command(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", filepath.Join(dir, "step.sh"))
	cmd.Dir = j.dir
	cmd.Env = j.environ(append(env, "GITHUB_OUTPUT="+filepath.Join(dir, "output"),
		"GITHUB_PATH="+filepath.Join(dir, "path"), "GITHUB_ENV="+filepath.Join(dir, "env"))...)
	cmd.Stdout, cmd.Stderr = j.log, j.log
	err = cmd.Run()
	for p := range strings.Lines(readFile(j.t, filepath.Join(dir, "path"))) {
		if p = strings.TrimSpace(p); p != "" {
			j.path = append([]string{p}, j.path...)
		}
	}
	for k, v := range readOutputFile(j.t, filepath.Join(dir, "env")) {
		j.env = append(j.env, k+"="+v)
	}
	return readOutputFile(j.t, filepath.Join(dir, "output")), err
}

// readOutputFile parses a GITHUB_OUTPUT file: name=value lines and
// name<<DELIMITER blocks.
func readOutputFile(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var v []string
			for sc.Scan() && sc.Text() != delim {
				v = append(v, sc.Text())
			}
			out[name] = strings.Join(v, "\n")
		} else if name, v, ok := strings.Cut(line, "="); ok {
			out[name] = v
		}
	}
	return out
}

// composite is one use of a composite action in a job: its steps run
// with the job's environment, the uses step's env:, GITHUB_ACTION_PATH,
// and ${{ }} from its inputs (given over their defaults), the job's github
// context (with action_path, action_ref and action_repository of this
// use), the runner context and its own steps.
type composite struct {
	action  compositeAction
	path    string         // the action's directory
	github  map[string]any // the job's github context and this use's action_*
	runner  map[string]any
	inputs  map[string]string
	list    *stepList
	outputs map[string]string
}

func (c *composite) context(path []string) (any, bool) {
	switch path[0] {
	case "inputs":
		v, ok := c.inputs[path[1]]
		return v, ok && len(path) == 2
	case "github":
		if len(path) > 2 && path[1] == "event" {
			return property(c.github["event"], path[2:]), true
		}
		v, ok := c.github[path[1]]
		return v, ok && len(path) == 2
	case "runner":
		v, ok := c.runner[path[1]]
		return v, ok && len(path) == 2
	}
	return nil, false
}

// runComposite runs the action at dir as one step of j, given with and
// env, and returns its outputs; failed names the step that failed.
func runComposite(ctx context.Context, j *jobEnv, dir string, github, runner map[string]any, with map[string]string, env []string) (outputs map[string]string, failed string) {
	c := &composite{action: loadComposite(j.t, filepath.Join(dir, "action.yml")), path: dir, github: github, runner: runner, inputs: map[string]string{}}
	c.list = &stepList{j: j, steps: c.action.Runs.Steps, context: c.context, env: append(slices.Clone(env), "GITHUB_ACTION_PATH="+dir)}
	sc := c.list.scope()
	for name, in := range c.action.Inputs {
		c.inputs[name] = sc.expand(in.Default)
	}
	for name, v := range with {
		if _, ok := c.action.Inputs[name]; !ok {
			j.t.Fatalf("with: %s is not an input of %s", name, dir)
		}
		c.inputs[name] = v
	}
	c.list.run(ctx)
	c.outputs = map[string]string{}
	for name, o := range c.action.Outputs {
		c.outputs[name] = sc.expand(o.Value)
	}
	return c.outputs, c.list.failed
}

func yamlUnmarshal(b []byte, v any) error { return yaml.Unmarshal(b, v) }
