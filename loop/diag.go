package loop

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Position is a place in a config file. Line and Col are 1-based; Col counts bytes.
// A zero Line means the problem has no single place (for example, a config built in code).
type Position struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Col  int    `json:"col,omitempty"`
}

func (p Position) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Severity says whether a diagnostic stops the config from being used.
type Severity int

// Severities.
const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText renders the severity as "error" or "warning".
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found in a config.
type Diagnostic struct {
	Pos      Position `json:"position"`
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

// String renders the diagnostic as "file:line:col: message", with
// "warning: " before the message of a warning.
func (d Diagnostic) String() string {
	if d.Severity == Warning {
		return fmt.Sprintf("%s: warning: %s", d.Pos, d.Message)
	}
	return fmt.Sprintf("%s: %s", d.Pos, d.Message)
}

// Diagnostics is a list of problems, errors and warnings together.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
}

// Warnings returns only the warnings.
func (ds Diagnostics) Warnings() Diagnostics {
	return slices.DeleteFunc(slices.Clone(ds), func(d Diagnostic) bool { return d.Severity != Warning })
}

// sort orders diagnostics by place in the file, keeping the order of
// diagnostics at the same place.
func (ds Diagnostics) sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Pos.Line, b.Pos.Line), cmp.Compare(a.Pos.Col, b.Pos.Col))
	})
}

// String renders one diagnostic per line.
func (ds Diagnostics) String() string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// ConfigError is returned when a config has errors. It carries every
// problem found, warnings included, in file order.
type ConfigError struct {
	Diagnostics Diagnostics
}

func (e *ConfigError) Error() string {
	return strings.TrimSuffix(e.Diagnostics.String(), "\n")
}
