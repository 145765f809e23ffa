//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// A workflow emulator: act cannot run here (it fetches actions/checkout
// and the setup actions from github.com, which CI cannot reach), so a
// workflow's jobs run here as the runner runs them, for real: in needs
// order, with job if:, outputs and the needs context, each job in a fresh
// workspace, its steps by stepList (run: under bash, uses: by the
// stand-ins, loop-action/loop-action/host@v1 by the real host/action.yml
// through the composite runner). A key, an event or an expression it does
// not model fails the test, so the workflows cannot use more than it checks.

// workflowFile is a workflow as far as the workflows here use it.
type workflowFile struct {
	Name        string    `yaml:"name"`
	On          yaml.Node `yaml:"on"`
	Permissions yaml.Node `yaml:"permissions"`
	Concurrency struct {
		Group            string `yaml:"group"`
		CancelInProgress bool   `yaml:"cancel-in-progress"`
	} `yaml:"concurrency"`
	Env  map[string]string       `yaml:"env"`
	Jobs map[string]*workflowJob `yaml:"jobs"`
}

type workflowJob struct {
	If             string            `yaml:"if"`
	Needs          needsList         `yaml:"needs"`
	RunsOn         string            `yaml:"runs-on"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Permissions    yaml.Node         `yaml:"permissions"`
	Outputs        map[string]string `yaml:"outputs"`
	Env            map[string]string `yaml:"env"`
	Steps          []ciStep          `yaml:"steps"`
}

// needsList is needs: as one job or a list.
type needsList []string

func (n *needsList) UnmarshalYAML(v *yaml.Node) error {
	if v.Kind == yaml.ScalarNode {
		*n = []string{v.Value}
		return nil
	}
	return v.Decode((*[]string)(n))
}

// ghEvent is what triggers a workflow run.
type ghEvent struct {
	name     string         // pull_request, issue_comment, schedule, workflow_dispatch
	payload  map[string]any // the event's JSON
	sha, ref string         // GITHUB_SHA, GITHUB_REF
	actor    string
	fork     bool // a fork's pull_request: GitHub gives it no secrets
}

// emulator runs one workflow file against a world.
type emulator struct {
	t       *testing.T
	file    string
	wf      workflowFile
	host    string            // host/action.yml's directory
	token   string            // github.token
	secrets map[string]string // the repository's secrets
	env     []string          // the runner's environment: PATH, HOME, GITHUB_API_URL…
	cache   string            // actions/cache's store
	uses    map[string]standIn
	replace map[string]string // a step's name → the run: script the test runs instead
	log     *strings.Builder
	hosts   []map[string]string // the outputs of every use of loop-action (host mode or the container), in order
	runID   string              // GITHUB_RUN_ID: each run of a workflow has its own
}

// jobRun is a job's outcome.
type jobRun struct {
	result  string // success, failure, skipped
	outputs map[string]string
}

func loadWorkflow(t *testing.T, file string) workflowFile {
	t.Helper()
	var wf workflowFile
	loadStrict(t, file, &wf)
	checkPermissions(t, file, &wf.Permissions)
	for id, j := range wf.Jobs {
		checkPermissions(t, file+": job "+id, &j.Permissions)
		if !strings.HasPrefix(j.RunsOn, "ubuntu-") {
			t.Fatalf("%s: job %s runs on %q; only ubuntu is modelled", file, id, j.RunsOn)
		}
		for _, n := range j.Needs {
			if wf.Jobs[n] == nil {
				t.Fatalf("%s: job %s needs %q, which is no job", file, id, n)
			}
		}
	}
	return wf
}

// checkPermissions fails on a permissions: block GitHub would refuse.
func checkPermissions(t *testing.T, what string, n *yaml.Node) {
	scopes := []string{"actions", "checks", "contents", "deployments", "id-token", "issues", "packages", "pages", "pull-requests", "statuses"}
	switch n.Kind {
	case 0:
	case yaml.ScalarNode:
		if n.Value != "read-all" && n.Value != "write-all" {
			t.Fatalf("%s: permissions %q", what, n.Value)
		}
	case yaml.MappingNode:
		for i := 0; i < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1].Value
			if !slices.Contains(scopes, k) || !slices.Contains([]string{"read", "write", "none"}, v) {
				t.Fatalf("%s: permission %s: %s", what, k, v)
			}
		}
	default:
		t.Fatalf("%s: permissions is neither a mapping nor a string", what)
	}
}

// triggers reports whether ev starts the workflow: its name under on:,
// and its activity type among the types: given (pull_request's default
// being opened, synchronize and reopened).
func (e *emulator) triggers(ev ghEvent) bool {
	on := e.wf.On
	if on.Kind != yaml.MappingNode {
		e.t.Fatalf("%s: on: must be a mapping here", e.file)
	}
	for i := 0; i < len(on.Content); i += 2 {
		name, v := on.Content[i].Value, on.Content[i+1]
		allowed := map[string][]string{"pull_request": {"types"}, "issue_comment": {"types"}, "workflow_dispatch": {"inputs"}, "schedule": nil}
		keys, ok := allowed[name]
		if !ok {
			e.t.Fatalf("%s: event %s is not modelled", e.file, name)
		}
		var cfg struct {
			Types []string `yaml:"types"`
		}
		if v.Kind == yaml.MappingNode {
			for k := 0; k < len(v.Content); k += 2 {
				if !slices.Contains(keys, v.Content[k].Value) {
					e.t.Fatalf("%s: on.%s.%s is not modelled", e.file, name, v.Content[k].Value)
				}
			}
			if err := v.Decode(&cfg); err != nil {
				e.t.Fatalf("%s: on.%s: %v", e.file, name, err)
			}
		}
		if name != ev.name {
			continue
		}
		if cfg.Types == nil && name == "pull_request" {
			cfg.Types = []string{"opened", "synchronize", "reopened"}
		}
		action, _ := ev.payload["action"].(string)
		return cfg.Types == nil || slices.Contains(cfg.Types, action)
	}
	return false
}

// run runs the workflow for ev and returns its jobs' outcomes (none when
// the event does not trigger it).
func (e *emulator) run(ctx context.Context, ev ghEvent) map[string]*jobRun {
	e.t.Helper()
	runs := map[string]*jobRun{}
	if !e.triggers(ev) {
		fmt.Fprintf(e.log, "=== %s does not trigger %s\n", ev.name, e.file)
		return runs
	}
	event := filepath.Join(e.t.TempDir(), "event.json")
	b, err := json.Marshal(ev.payload)
	if err != nil {
		e.t.Fatal(err)
	}
	writeTestFile(e.t, event, string(b))
	github := e.github(ev, event)
	group := e.scopeFor(ev, github, nil, nil).expand(e.wf.Concurrency.Group)
	fmt.Fprintf(e.log, "=== %s: %s (concurrency group %q)\n", e.file, ev.name, group)
	for _, id := range e.order() {
		runs[id] = e.job(ctx, id, ev, github, runs)
	}
	return runs
}

// order is the jobs in needs order, ties by name.
func (e *emulator) order() []string {
	var out []string
	done := map[string]bool{}
	for len(out) < len(e.wf.Jobs) {
		n := len(out)
		for _, id := range slices.Sorted(maps.Keys(e.wf.Jobs)) {
			if !done[id] && !slices.ContainsFunc(e.wf.Jobs[id].Needs, func(n string) bool { return !done[n] }) {
				out, done[id] = append(out, id), true
			}
		}
		if len(out) == n {
			e.t.Fatalf("%s: the jobs' needs form a cycle", e.file)
		}
	}
	return out
}

// github is the github context of a run.
func (e *emulator) github(ev ghEvent, eventPath string) map[string]any {
	g := map[string]any{
		"event_name": ev.name, "event": ev.payload, "event_path": eventPath, "sha": ev.sha, "ref": ev.ref,
		"ref_name": strings.TrimPrefix(strings.TrimPrefix(ev.ref, "refs/heads/"), "refs/"), "actor": ev.actor,
		"token": e.token, "run_id": e.runID, "run_attempt": "1",
	}
	for _, kv := range e.env {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "GITHUB_") {
			g[strings.ToLower(strings.TrimPrefix(k, "GITHUB_"))] = v
		}
	}
	return g
}

// scopeFor is the expression scope of a job (and of its steps, through
// steps): github, secrets, needs, inputs, runner.
func (e *emulator) scopeFor(ev ghEvent, github map[string]any, needs map[string]*jobRun, steps *stepList) exprScope {
	lookup := func(path []string) (any, bool) {
		switch {
		case path[0] == "github" && len(path) > 2 && path[1] == "event":
			return property(github["event"], path[2:]), true
		case path[0] == "github" && len(path) == 2:
			v, ok := github[path[1]]
			return v, ok
		case path[0] == "secrets" && len(path) == 2:
			if ev.fork {
				return "", true // a fork's pull_request gets no secrets
			}
			return e.secrets[path[1]], true
		case path[0] == "inputs" && len(path) == 2:
			return property(ev.payload, []string{"inputs", path[1]}), true
		case path[0] == "runner" && len(path) == 2:
			v, ok := map[string]any{"os": "Linux", "arch": runnerArch}[path[1]]
			return v, ok
		case path[0] == "needs" && len(path) >= 3:
			r, ok := needs[path[1]]
			switch {
			case !ok:
				return nil, false
			case len(path) == 3 && path[2] == "result":
				return r.result, true
			case len(path) == 4 && path[2] == "outputs":
				return r.outputs[path[3]], true
			}
		case path[0] == "steps" && steps != nil:
			return steps.lookup(path)
		}
		return nil, false
	}
	return exprScope{fatalf: e.t.Fatalf, lookup: lookup, status: func(name string) bool {
		ok := true
		for _, r := range needs {
			ok = ok && r.result == "success"
		}
		if steps != nil {
			ok = ok && steps.failed == ""
		}
		return map[string]bool{"success": ok, "failure": !ok, "always": true}[name]
	}}
}

// job runs one job, or skips it.
func (e *emulator) job(ctx context.Context, id string, ev ghEvent, github map[string]any, runs map[string]*jobRun) *jobRun {
	job := e.wf.Jobs[id]
	needs := map[string]*jobRun{}
	for _, n := range job.Needs {
		needs[n] = runs[n]
	}
	github = maps.Clone(github)
	github["job"] = id
	if !e.scopeFor(ev, github, needs, nil).cond(job.If) {
		fmt.Fprintf(e.log, "=== job %s: skipped\n", id)
		return &jobRun{result: "skipped"}
	}
	fmt.Fprintf(e.log, "=== job %s\n", id)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(max(job.TimeoutMinutes, 1))*time.Minute)
	defer cancel()
	j := e.jobEnv(id, ev, github)
	defer os.RemoveAll(j.temp) // a job's RUNNER_TEMP holds a copy of loop-action
	list := &stepList{j: j, steps: e.replaced(job.Steps)}
	sc := e.scopeFor(ev, github, needs, list)
	list.context = sc.lookup
	for _, env := range []map[string]string{e.wf.Env, job.Env} {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			j.env = append(j.env, k+"="+sc.expand(env[k]))
		}
	}
	j.uses["loop-action/loop-action/host@v1"] = func(ctx context.Context, j *jobEnv, with map[string]string, env []string) (map[string]string, error) {
		g := maps.Clone(github)
		g["action_ref"], g["action_repository"], g["action_path"] = "v1", "loop-action/loop-action", e.host
		out, failed := runComposite(ctx, j, e.host, g, map[string]any{"os": "Linux", "arch": runnerArch, "temp": j.temp}, with, env)
		e.hosts = append(e.hosts, out)
		if failed != "" {
			return out, fmt.Errorf("host action: step %q failed", failed)
		}
		return out, nil
	}
	if container, ok := j.uses["loop-action/loop-action@v1"]; ok {
		j.uses["loop-action/loop-action@v1"] = func(ctx context.Context, j *jobEnv, with map[string]string, env []string) (map[string]string, error) {
			out, err := container(ctx, j, with, env)
			e.hosts = append(e.hosts, out)
			return out, err
		}
	}
	list.run(ctx)
	r := &jobRun{result: "success", outputs: map[string]string{}}
	if list.failed != "" {
		r.result = "failure"
	}
	for k, v := range job.Outputs {
		r.outputs[k] = sc.expand(v)
	}
	fmt.Fprintf(e.log, "=== job %s: %s, outputs %v\n", id, r.result, r.outputs)
	return r
}

// replaced is steps with those the test replaces swapped for its script.
func (e *emulator) replaced(steps []ciStep) []ciStep {
	out := slices.Clone(steps)
	for i, s := range out {
		if script, ok := e.replace[s.Name]; ok {
			out[i] = ciStep{Name: s.Name + " (replaced by the test)", ID: s.ID, If: s.If, Run: script}
		}
	}
	return out
}

// jobEnv is a fresh runner for one job: an empty workspace and temp, and
// the runner's environment for the event.
func (e *emulator) jobEnv(id string, ev ghEvent, github map[string]any) *jobEnv {
	base := e.t.TempDir()
	j := &jobEnv{t: e.t, dir: filepath.Join(base, "work"), temp: filepath.Join(base, "temp"), cache: e.cache, log: e.log, uses: maps.Clone(e.uses)}
	for _, d := range []string{j.dir, j.temp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	summary := filepath.Join(j.temp, "step_summary")
	writeTestFile(e.t, summary, "")
	j.env = append(slices.Clone(e.env),
		"GITHUB_ACTIONS=true", "CI=true", "GITHUB_EVENT_NAME="+ev.name, "GITHUB_EVENT_PATH="+github["event_path"].(string),
		"GITHUB_SHA="+ev.sha, "GITHUB_REF="+ev.ref, "GITHUB_REF_NAME="+github["ref_name"].(string), "GITHUB_ACTOR="+ev.actor,
		"GITHUB_JOB="+id, "GITHUB_WORKSPACE="+j.dir, "GITHUB_RUN_ID="+e.runID, "GITHUB_RUN_ATTEMPT=1", "GITHUB_STEP_SUMMARY="+summary,
		"RUNNER_OS=Linux", "RUNNER_ARCH="+runnerArch, "RUNNER_TEMP="+j.temp, "RUNNER_TOOL_CACHE="+filepath.Join(j.temp, "toolcache"))
	return j
}
