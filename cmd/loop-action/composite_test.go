//go:build linux

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// compositeAction is an action.yml with runs.using: composite, as the
// runner reads it.
type compositeAction struct {
	Inputs  map[string]struct{ Default string } `yaml:"inputs"`
	Outputs map[string]struct{ Value string }   `yaml:"outputs"`
	Runs    struct {
		Using string          `yaml:"using"`
		Steps []compositeStep `yaml:"steps"`
	} `yaml:"runs"`
}

type compositeStep struct {
	Name  string            `yaml:"name"`
	ID    string            `yaml:"id"`
	If    string            `yaml:"if"`
	Shell string            `yaml:"shell"`
	Run   string            `yaml:"run"`
	Uses  string            `yaml:"uses"`
	Env   map[string]string `yaml:"env"`
	With  map[string]string `yaml:"with"`
}

// composite runs a composite action's steps in order the way the runner
// does: ${{ }} expressions expanded from the inputs (given over their
// defaults), the github and runner contexts and earlier steps' outputs; a
// step's if: (default success()); run: steps under bash -eo pipefail with
// the job's environment, the step's env:, GITHUB_ACTION_PATH and a
// GITHUB_OUTPUT file of their own; uses: steps by the stand-ins in uses.
// An expression it does not understand fails the test, so the action
// cannot use more than this runner checks.
type composite struct {
	t       *testing.T
	action  compositeAction
	path    string // the action's directory
	inputs  map[string]string
	github  map[string]string
	runner  map[string]string
	env     []string // the job's environment
	dir     string   // the working directory (the workspace)
	uses    map[string]func(with map[string]string) (map[string]string, error)
	outputs map[string]map[string]string // by step id
	failed  string                       // the first step that failed
	log     strings.Builder
}

func loadComposite(t *testing.T, file string) compositeAction {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var a compositeAction
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("%s: runs.using is %q, not composite", file, a.Runs.Using)
	}
	return a
}

// run runs every step and returns the action's outputs.
func (c *composite) run(ctx context.Context, with map[string]string) map[string]string {
	c.inputs, c.outputs = map[string]string{}, map[string]map[string]string{}
	for name, in := range c.action.Inputs {
		c.inputs[name] = c.expand(in.Default)
	}
	for name, v := range with {
		if _, ok := c.action.Inputs[name]; !ok {
			c.t.Fatalf("with: %s is not an input of the action", name)
		}
		c.inputs[name] = v
	}
	for i, s := range c.action.Runs.Steps {
		if !c.should(s) {
			fmt.Fprintf(&c.log, "--- skipped: %s\n", s.Name)
			continue
		}
		fmt.Fprintf(&c.log, "--- step %d: %s\n", i+1, s.Name)
		out, err := c.step(ctx, s)
		if err != nil {
			fmt.Fprintf(&c.log, "step failed: %v\n", err)
			if c.failed == "" {
				c.failed = s.Name
			}
		}
		if s.ID != "" {
			c.outputs[s.ID] = out
		}
	}
	outs := map[string]string{}
	for name, o := range c.action.Outputs {
		outs[name] = c.expand(o.Value)
	}
	return outs
}

// should evaluates a step's if:, which without a status function is
// success() && (if).
func (c *composite) should(s compositeStep) bool {
	cond := strings.TrimSpace(s.If)
	cond = strings.TrimSuffix(strings.TrimPrefix(cond, "${{"), "}}")
	switch {
	case cond == "":
		return c.failed == ""
	case strings.Contains(cond, "always()"):
		c.t.Fatalf("step %q: status functions other than success() are not modelled", s.Name)
	}
	return c.failed == "" && truthy(c.eval(cond))
}

func (c *composite) step(ctx context.Context, s compositeStep) (map[string]string, error) {
	with := map[string]string{}
	for k, v := range s.With {
		with[k] = c.expand(v)
	}
	switch {
	case s.Uses != "" && s.Run != "":
		c.t.Fatalf("step %q has both uses and run", s.Name)
	case s.Uses != "":
		use, ok := c.uses[s.Uses]
		if !ok {
			c.t.Fatalf("step %q uses %s, which this runner has no stand-in for", s.Name, s.Uses)
		}
		return use(with)
	case s.Shell != "bash":
		c.t.Fatalf("step %q: shell %q (composite run steps must name one; this action uses bash on every OS)", s.Name, s.Shell)
	}
	return c.script(ctx, s)
}

// script runs a run: step as the runner runs shell: bash.
func (c *composite) script(ctx context.Context, s compositeStep) (map[string]string, error) {
	dir := c.t.TempDir()
	file, output := filepath.Join(dir, "step.sh"), filepath.Join(dir, "output")
	for f, content := range map[string]string{file: c.expand(s.Run), output: ""} {
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-eo", "pipefail", file)
	cmd.Dir = c.dir
	cmd.Env = append(append([]string{}, c.env...), "GITHUB_ACTION_PATH="+c.path, "GITHUB_OUTPUT="+output)
	for k, v := range s.Env {
		cmd.Env = append(cmd.Env, k+"="+c.expand(v))
	}
	cmd.Stdout, cmd.Stderr = &c.log, &c.log
	err := cmd.Run()
	return readOutputFile(c.t, output), err
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

var exprRE = regexp.MustCompile(`\$\{\{(.*?)\}\}`)

// expand replaces every ${{ expression }} in s by its value.
func (c *composite) expand(s string) string {
	return exprRE.ReplaceAllStringFunc(s, func(m string) string {
		return fmt.Sprint(c.eval(exprRE.FindStringSubmatch(m)[1]))
	})
}

func yamlUnmarshal(b []byte, v any) error { return yaml.Unmarshal(b, v) }
