package loop

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// Defaults used where a config leaves a key out (docs/config.md lists them).
const (
	DefaultMaxIterations    = 10
	DefaultNoProgress       = 3
	DefaultMaxNodeFailures  = 3
	DefaultConcurrency      = 4
	DefaultCheckConcurrency = 1
	DefaultCarrySummaries   = 2
	DefaultProviderTimeout  = 30 * time.Minute
	DefaultCheckTimeout     = 10 * time.Minute
	DefaultMetricsTimeout   = 5 * time.Minute
	// DefaultMaxFileSize is run.max_file_size's default, 100 MiB: GitHub
	// refuses any pushed file larger, so no delivery could carry one.
	DefaultMaxFileSize = 100 << 20
)

// DefaultPaths are where the CLI looks for a config, in order.
var DefaultPaths = []string{".github/loop.toml", "loop.toml"}

// Load reads and parses the config at path. See Parse and ReadSource.
func Load(path string) (*Config, error) {
	src, err := ReadSource(path)
	if err != nil {
		return nil, fmt.Errorf("read config %q: %w", path, err)
	}
	return Parse(path, src)
}

// ReadSource reads a config file for Parse: at most one byte more than
// MaxConfigSize, whatever the file's size (Parse refuses the rest), and
// only a regular file — it is opened without blocking, so a FIFO an agent
// put in the config's place fails at once instead of waiting for a writer.
func ReadSource(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	return io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
}

// Find returns the first of DefaultPaths that exists under root.
func Find(root string) (string, error) {
	for _, p := range DefaultPaths {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no loop config: looked for %s (use --config)", strings.Join(DefaultPaths, " and "))
}

// Parse decodes a config from src, applies the defaults and validates it.
// file names the source in diagnostics. A config larger than MaxConfigSize
// or nested deeper than MaxNesting is refused before it is decoded. When the config has errors, Parse
// returns a *ConfigError carrying all of them, warnings included; otherwise
// the returned config's Warnings holds any warnings.
func Parse(file string, src []byte) (*Config, error) {
	keys, d := checkLimits(file, src)
	if d != nil {
		return nil, &ConfigError{Diagnostics: Diagnostics{*d}}
	}
	cfg := defaults()
	md, err := toml.Decode(string(src), cfg)
	if err != nil {
		return nil, &ConfigError{Diagnostics: Diagnostics{decodeDiagnostic(file, src, keys, err)}}
	}
	if len(md.Keys()) == 0 {
		return nil, &ConfigError{Diagnostics: Diagnostics{{Pos: Position{File: file, Line: 1, Col: 1},
			Message: "the config is empty: it needs a name and at least one [[goal]] with a check"}}}
	}
	cfg.File, cfg.Source = file, src
	cfg.keys = newKeyIndex(keys)
	s := &sink{}
	unknownKeys(cfg, md, s)
	cfg.applyDefaults(md)
	cfg.validate(s)
	ds := s.result(file)
	if ds.HasErrors() {
		return nil, &ConfigError{Diagnostics: ds}
	}
	cfg.Warnings = ds
	return cfg, nil
}

// defaults returns a config holding every default that does not depend on
// other keys; TOML decoding overwrites what the file sets.
func defaults() *Config {
	return &Config{
		Stop: Stop{
			MaxIterations:   DefaultMaxIterations,
			NoProgress:      DefaultNoProgress,
			MaxNodeFailures: DefaultMaxNodeFailures,
		},
		Run:     Run{Concurrency: DefaultConcurrency, CheckConcurrency: DefaultCheckConcurrency, MaxFileSize: Size{Bytes: DefaultMaxFileSize, written: written{text: "100MiB", quoted: true}}},
		Context: Context{CarrySummaries: DefaultCarrySummaries},
		Memory:  Memory{Carry: DefaultMemoryCarry},
		Success: Success{MinPassRate: 1},
		Deliver: Deliver{Message: DefaultDeliverMessage, AuthorName: DefaultAuthorName, AuthorEmail: DefaultAuthorEmail},
	}
}

// applyDefaults fills in defaults inside tables and arrays of tables, and
// those that depend on other keys.
func (c *Config) applyDefaults(md toml.MetaData) {
	if !md.IsDefined("stop", "perturb_after") {
		c.Stop.PerturbAfter = max(c.Stop.NoProgress-1, 0)
	}
	if !c.Metrics.Timeout.IsSet() {
		c.Metrics.Timeout = D(DefaultMetricsTimeout)
	}
	for name, p := range c.Providers {
		p.Env, p.EnvValues = p.EnvKey.Names, p.EnvKey.Values
		p = applyPreset(md, name, p)
		p.Type = cmp.Or(p.Type, "command")
		if p.Type == "openai" {
			c.Providers[name] = p.openAIDefaults()
			continue
		}
		p.Prompt = cmp.Or(p.Prompt, "stdin")
		p.Usage = cmp.Or(p.Usage, "none")
		if !p.Timeout.IsSet() {
			p.Timeout = D(DefaultProviderTimeout)
		}
		c.Providers[name] = p
	}
	for i := range c.Nodes {
		c.Nodes[i].Role = cmp.Or(c.Nodes[i].Role, RoleBuilder)
		c.Nodes[i].Tier = cmp.Or(c.Nodes[i].Tier, TierStandard)
	}
	for gi := range c.Goals {
		for ci := range c.Goals[gi].Checks {
			ch := &c.Goals[gi].Checks[ci]
			if ch.IsCommand() && !ch.Timeout.IsSet() {
				ch.Timeout = D(DefaultCheckTimeout)
			}
		}
	}
}

// decodeDiagnostic turns a toml error into a positioned diagnostic.
func decodeDiagnostic(file string, src []byte, keys []keyPos, err error) Diagnostic {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return parseDiagnostic(file, src, pe)
	}
	return typeDiagnostic(file, keys, err)
}

var (
	definedRE   = regexp.MustCompile(`^Key '(.+)' has already been defined\.$`)
	goalArrayRE = regexp.MustCompile(`(?m)^[ \t]*(goal)[ \t]*=`)
)

// parseDiagnostic positions a syntax error. The line and column come from
// the error's byte offset: toml's own line can be one past a newline.
func parseDiagnostic(file string, src []byte, pe toml.ParseError) Diagnostic {
	pos := Position{File: file, Line: pe.Position.Line, Col: max(pe.Position.Col, 1)}
	if pe.Position.Start > 0 && pe.Position.Start <= len(src) {
		pos.Line, pos.Col = lineCol(src, pe.Position.Start)
	}
	msg := pe.Message
	switch m := definedRE.FindStringSubmatch(msg); {
	case strings.HasPrefix(msg, "Key 'goal' was already created"):
		if loc := goalArrayRE.FindSubmatchIndex(src); loc != nil {
			pos.Line, pos.Col = lineCol(src, loc[2])
		}
		msg = `goal is both a string and [[goal]] tables: the loop's objective is written objective = "...", and [[goal]] tables are its goals`
	case m != nil && pe.LastKey == "":
		msg = fmt.Sprintf("table [%s] is defined twice", m[1])
	case m != nil:
		msg = fmt.Sprintf("%s is set twice", m[1])
	case pe.Usage != "":
		msg += " (" + strings.TrimSpace(firstLine(pe.Usage)) + ")"
	}
	return Diagnostic{Pos: pos, Message: msg}
}

// lineCol returns the 1-based line and byte column of offset in src.
func lineCol(src []byte, offset int) (int, int) {
	before := src[:offset]
	line := 1 + strings.Count(string(before), "\n")
	col := offset - strings.LastIndexByte(string(before), '\n')
	return line, col
}

var (
	lastKeyRE  = regexp.MustCompile(`^toml: line (\d+) \(last key "((?:[^"\\]|\\.)*)"\): (.*)$`)
	typeMismRE = regexp.MustCompile(`TOML value has type (\S+); destination has type (\S+)`)
	tableMisRE = regexp.MustCompile(`type mismatch for \S+: expected (\w+) but found (.+)$`)
)

// typeDiagnostic positions a decoding error, such as a value of the wrong
// type, at the key it names.
func typeDiagnostic(file string, keys []keyPos, err error) Diagnostic {
	m := lastKeyRE.FindStringSubmatch(err.Error())
	if m == nil {
		return Diagnostic{Pos: Position{File: file}, Message: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	key, _ := strconv.Unquote(`"` + m[2] + `"`)
	pos := Position{File: file, Line: line, Col: 1}
	for _, kp := range keys {
		if kp.Key == key && kp.Line == line {
			pos.Col = kp.Col
			break
		}
	}
	msg := m[3]
	if t := typeMismRE.FindStringSubmatch(msg); t != nil {
		msg = fmt.Sprintf("%s must be %s, not %s", key, typeName(t[2]), typeName(t[1]))
		if key == "goal" {
			msg += ` (the loop's objective is written objective = "..."; [[goal]] tables are its goals)`
		}
	} else if t := tableMisRE.FindStringSubmatch(msg); t != nil {
		msg = fmt.Sprintf("%s must be %s, not %s", key, typeName(t[1]), typeName(t[2]))
	}
	return Diagnostic{Pos: pos, Message: msg}
}

// typeName names a toml or Go type for a user.
func typeName(t string) string {
	switch t {
	case "string":
		return "a string"
	case "integer", "int64", "int", "Integer":
		return "an integer"
	case "float", "float64", "Float":
		return "a number"
	case "bool", "boolean", "Bool":
		return "a boolean (true or false)"
	case "slice", "array", "[]interface", "[]any", "Array":
		return "an array"
	case "[]map[string]any", "[]map[string]interface", "ArrayHash":
		return "an array of tables ([[...]])"
	case "table", "map", "struct", "map[string]interface", "map[string]any", "Hash":
		return "a table"
	}
	return t
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
