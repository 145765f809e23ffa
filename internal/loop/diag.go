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

// MaxDiagnostics is how many problems one load or Validate reports. A
// config can have more than that (a hostile one, quadratically many), and
// formatting them all would take time and memory without bound.
const MaxDiagnostics = 1000

// sink collects the diagnostics of one load: the first MaxDiagnostics in
// full, and only a count of the rest.
type sink struct {
	ds                       Diagnostics
	moreErrors, moreWarnings int
}

// full reports whether the sink holds MaxDiagnostics; if so it counts a
// problem of severity sev, which the caller then need not format.
func (s *sink) full(sev Severity) bool {
	switch {
	case len(s.ds) < MaxDiagnostics:
		return false
	case sev == Warning:
		s.moreWarnings++
	default:
		s.moreErrors++
	}
	return true
}

func (s *sink) add(d Diagnostic) {
	if !s.full(d.Severity) {
		s.ds = append(s.ds, d)
	}
}

// result returns the diagnostics in file order. When some were left out,
// a first diagnostic says how many, and it is an error whenever any of
// them was: leaving a message out never makes a config valid.
func (s *sink) result(file string) Diagnostics {
	ds := slices.Clone(s.ds)
	ds.sort()
	if more := s.moreErrors + s.moreWarnings; more > 0 {
		sev := Warning
		if s.moreErrors > 0 {
			sev = Error
		}
		ds = append(Diagnostics{{Pos: Position{File: file}, Severity: sev, Message: fmt.Sprintf(
			"too many problems: %d more (%d errors, %d warnings) are not shown", more, s.moreErrors, s.moreWarnings)}}, ds...)
	}
	return ds
}
