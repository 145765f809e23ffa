package scaffold

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"
)

// The templates' own delimiters, since GitHub's ${{ }} and TOML's [[ ]]
// both appear in what they render.
const leftDelim, rightDelim = "{%", "%}"

//go:embed templates
var templates embed.FS

// Templates lists what init can write, the first being the default.
var Templates = []string{"pr-fixer", "nightly", "gate-only"}

// ConfigPath and WorkflowPath are where the rendered files go, relative to
// the repository's root.
const (
	ConfigPath   = ".github/loop.toml"
	WorkflowPath = ".github/workflows/loop.yml"
)

// Options say what to render.
type Options struct {
	// Template is one of Templates.
	Template string
	// Name is the loop's name.
	Name string
	// Preset names the agent (one of Agents); gate-only has none.
	Preset string
	// Stacks are the toolchains whose tests the gate runs.
	Stacks []Stack
	// Tests replaces the stacks' test commands when not empty.
	Tests []string
}

// File is one rendered file.
type File struct {
	Path    string
	Content []byte
}

// view is what the templates see.
type view struct {
	Options
	Objective string
	Protect   []string
	Install   string
	Env       []string
	// Excludes are the stacks' Writes, each once.
	Excludes []string
}

// loopName is what a loop's name may be (loop.Config.Name).
var loopName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// Render returns the loop config and the workflow for o.
func Render(o Options) ([]File, error) {
	v, err := viewOf(o)
	if err != nil {
		return nil, err
	}
	t, err := template.New("").Delims(leftDelim, rightDelim).
		Funcs(template.FuncMap{"toml": tomlString, "list": tomlList, "words": shellWords}).
		ParseFS(templates, "templates/*")
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	var files []File
	for _, f := range []struct{ path, tmpl string }{
		{ConfigPath, o.Template + ".toml"}, {WorkflowPath, o.Template + ".yml"},
	} {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, f.tmpl, v); err != nil {
			return nil, fmt.Errorf("render %s: %w", f.path, err)
		}
		files = append(files, File{Path: f.path, Content: tidy(b.Bytes())})
	}
	return files, nil
}

func viewOf(o Options) (view, error) {
	if !slices.Contains(Templates, o.Template) {
		return view{}, fmt.Errorf("unknown template %q (known: %s)", o.Template, strings.Join(Templates, ", "))
	}
	if !loopName.MatchString(o.Name) {
		return view{}, fmt.Errorf("loop name %q: use letters, digits, - and _, starting with a letter or digit", o.Name)
	}
	o.Tests = o.TestCommands()
	if len(o.Tests) == 0 {
		return view{}, fmt.Errorf("no test command: none was detected (go.mod, package.json, pyproject.toml, Cargo.toml, a Makefile's test target); name one")
	}
	v := view{Options: o, Objective: objective(o), Protect: protect(o), Excludes: excludes(o.Stacks)}
	if o.Template == "gate-only" {
		v.Preset = ""
		return v, nil
	}
	agent, ok := Agents[o.Preset]
	if !ok {
		return view{}, fmt.Errorf("unknown preset %q (known: %s)", o.Preset, PresetList())
	}
	v.Install, v.Env = agent.Install, agent.Env
	return v, nil
}

// TestCommands is Tests, or else the stacks' test commands.
func (o Options) TestCommands() []string {
	if len(o.Tests) > 0 {
		return o.Tests
	}
	var tests []string
	for _, s := range o.Stacks {
		tests = append(tests, s.Test)
	}
	return tests
}

func objective(o Options) string {
	tests := "`" + strings.Join(o.Tests, "`, `") + "`"
	if o.Template == "gate-only" {
		return "The tests pass: " + tests + "."
	}
	return "Make the tests pass (" + tests + ") without deleting, skipping or weakening a test."
}

// protect is what agents may not change: the workflows and the loop config
// always, and the stacks' tests.
func protect(o Options) []string {
	return union([]string{".github/**"}, o.Stacks, func(s Stack) []string { return s.Tests })
}

// excludes is what the stacks write into the repository.
func excludes(stacks []Stack) []string {
	return union(nil, stacks, func(s Stack) []string { return s.Writes })
}

// union is first, then the items of each stack's list, each once.
func union(first []string, stacks []Stack, list func(Stack) []string) []string {
	out := slices.Clone(first)
	for _, s := range stacks {
		for _, p := range list(s) {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// tidy drops the blank lines that template actions leave at the ends and
// doubles inside.
func tidy(b []byte) []byte {
	s := strings.TrimSpace(string(b))
	for strings.Contains(s, "\n\n\n") {
		s = strings.ReplaceAll(s, "\n\n\n", "\n\n")
	}
	return []byte(s + "\n")
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\u%04X", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// shellWords quotes items as the words of a POSIX shell command line, each
// single-quoted (process.Quote would leave the safe ones bare).
func shellWords(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// tomlList renders strings as the items of a TOML array.
func tomlList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = tomlString(s)
	}
	return strings.Join(quoted, ", ")
}
