package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mattn/go-isatty"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/scaffold"
	"github.com/loop-action/loop-action/internal/workspace"
)

type initCmd struct {
	Template string   `placeholder:"NAME" default:"pr-fixer" enum:"pr-fixer,nightly,gate-only" help:"What to start with: pr-fixer (agents fix a PR's failing tests), nightly (scheduled maintenance), gate-only (a merge check without agents)."`
	Preset   string   `placeholder:"AGENT" default:"claude-code" enum:"claude-code,codex,aider,gemini,opencode" help:"The agent CLI (docs/config.md, Presets)."`
	Name     string   `placeholder:"NAME" help:"The loop's name (default: the root directory's name)."`
	Test     []string `placeholder:"CMD" help:"A test command for the gate, instead of the detected ones (repeatable)."`
	Yes      bool     `short:"y" help:"Take the defaults without asking (asked only on a terminal)."`
	Force    bool     `help:"Overwrite .github/loop.toml and .github/workflows/loop.yml when they exist."`
}

func (initCmd) Help() string {
	return `Writes .github/loop.toml and .github/workflows/loop.yml for the repository in
the loop root. The test command is detected (go.mod, package.json's test script,
pyproject.toml/pytest.ini/setup.cfg/tox.ini/setup.py, Cargo.toml, a Makefile's
test target); on a terminal a few questions confirm it, the template and the
agent. Existing files are never overwritten without --force. What it writes
passes validate and actionlint as written.

Example:
  loop-action init --yes --template gate-only`
}

func (i *initCmd) Run(c *cli, d *deps) error {
	root := c.root(d)
	o := scaffold.Options{Template: i.Template, Name: i.Name, Preset: i.Preset,
		Stacks: scaffold.Detect(os.DirFS(root)), Tests: i.Test}
	if o.Name == "" {
		o.Name = nameOf(root)
	}
	if !i.Yes && isTerminal(d.stdin) {
		if err := ask(d.stdin, d.stdout, &o); err != nil {
			return err
		}
	}
	files, err := scaffold.Render(o)
	if err != nil {
		return &usageError{err}
	}
	if err := checkRendered(files); err != nil {
		return err
	}
	if err := writeNew(root, files, i.Force); err != nil {
		return err
	}
	tellNext(d.stdout, o, files)
	return nil
}

// checkRendered loads the rendered config as a run would: init never
// writes a config that validate refuses.
func checkRendered(files []scaffold.File) error {
	if _, err := loop.Parse(scaffold.ConfigPath, files[0].Content); err != nil {
		return fmt.Errorf("init rendered a config that does not load (a bug): %v", err)
	}
	return nil
}

// notName is what a loop's name may not hold.
var notName = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// nameOf derives a loop name from the root directory's name.
func nameOf(root string) string {
	n := strings.TrimLeft(notName.ReplaceAllString(filepath.Base(root), "-"), "-_")
	if n == "" {
		return "loop"
	}
	return n
}

// isTerminal reports whether the stream s is a terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}

// ask confirms each choice on a terminal; an empty answer keeps the
// default shown in brackets.
func ask(in io.Reader, out io.Writer, o *scaffold.Options) error {
	sc := bufio.NewScanner(in)
	question := func(q, def string) string {
		fmt.Fprintf(out, "%s [%s]: ", q, def)
		if !sc.Scan() {
			return def
		}
		if a := strings.TrimSpace(sc.Text()); a != "" {
			return a
		}
		return def
	}
	o.Template = question("template ("+strings.Join(scaffold.Templates, ", ")+")", o.Template)
	if o.Template != "gate-only" {
		o.Preset = question("agent ("+scaffold.PresetList()+")", o.Preset)
	}
	tests := strings.Join(o.TestCommands(), " && ")
	if t := question("test command", tests); t != tests {
		o.Tests = []string{t}
	}
	o.Name = question("loop name", o.Name)
	return sc.Err()
}

// writeNew writes files under root, through an os.Root (a symlinked
// .github cannot send them elsewhere). Without force it refuses before
// writing anything when any of them exists.
func writeNew(root string, files []scaffold.File, force bool) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return &usageError{err}
	}
	defer r.Close()
	if !force {
		var there []string
		for _, f := range files {
			_, err := r.Lstat(f.Path)
			switch {
			case err == nil:
				there = append(there, f.Path)
			case !errors.Is(err, fs.ErrNotExist):
				return &usageError{fmt.Errorf("write %s: %w", f.Path, err)}
			}
		}
		if len(there) > 0 {
			verb := "exists"
			if len(there) > 1 {
				verb = "exist"
			}
			return &usageError{fmt.Errorf("%s already %s: nothing written; --force overwrites", strings.Join(there, " and "), verb)}
		}
	}
	// Every file is written whole under a temporary name first, so a
	// failure (a .github that links out of the root, a full disk) leaves
	// none of them in place.
	var tmps []string
	defer func() {
		for _, t := range tmps {
			_ = r.Remove(t)
		}
	}()
	for _, f := range files {
		tmp, err := writeTemp(r, f)
		if err != nil {
			return &usageError{fmt.Errorf("write %s: %w", f.Path, err)}
		}
		tmps = append(tmps, tmp)
	}
	for i, f := range files {
		if err := r.Rename(tmps[i], f.Path); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	return nil
}

// writeTemp writes f whole under a temporary name next to where it goes.
func writeTemp(r *os.Root, f scaffold.File) (string, error) {
	if err := r.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return "", err
	}
	return workspace.Atomic{Perm: 0o644, Temp: f.Path + ".init-tmp"}.Stage(r, f.Path, bytes.NewReader(f.Content))
}

// tellNext says what was written and what to do next.
func tellNext(w io.Writer, o scaffold.Options, files []scaffold.File) {
	for _, f := range files {
		fmt.Fprintf(w, "wrote %s\n", f.Path)
	}
	fmt.Fprintln(w, "\nnext:")
	if env := scaffold.Agents[o.Preset].Env; o.Template != "gate-only" && len(env) > 0 {
		fmt.Fprintf(w, "  - add the repository secret %s (Settings > Secrets and variables > Actions)\n", strings.Join(env, ", "))
	}
	fmt.Fprintln(w, "  - loop-action validate     # check the config")
	fmt.Fprintln(w, "  - loop-action gate         # run the gate here, now")
	fmt.Fprintf(w, "  - commit both files; the status loop/%s appears on pull requests (make it a required check)\n", o.Name)
}
