package loop

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"

	"github.com/loop-action/loop-action/internal/phrase"
)

// written is a Duration or a Size as the config wrote it. A value that does
// not parse is kept, with its error, so that Validate can report every bad
// value at once with its position.
type written struct {
	text   string
	quoted bool // text was a TOML string
	err    error
}

// shown renders the value as written: quoted when it was a string.
func (w written) shown() string {
	if w.quoted {
		return strconv.Quote(w.text)
	}
	return w.text
}

// Duration is a length of time written as a string ("45m", "1h30m").
type Duration struct {
	time.Duration
	written
}

// D returns d as a Duration, for configs built in code.
func D(d time.Duration) Duration {
	return Duration{Duration: d, written: written{text: formatDuration(d), quoted: true}}
}

// formatDuration renders d the way people write it: "10m", "1h30m", "90s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// UnmarshalText records the duration and any parse error; it never fails.
func (d *Duration) UnmarshalText(b []byte) error {
	d.text, d.quoted = string(b), true
	d.Duration, d.err = time.ParseDuration(d.text)
	return nil
}

// errNotString marks a duration written as something other than a string.
var errNotString = errors.New("not a string")

// UnmarshalTOML records a TOML value as a duration. A value that is not a
// string (30 instead of "30m") is kept as an error for Validate to report.
func (d *Duration) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		d.written = written{text: fmt.Sprint(v), err: errNotString}
		return nil
	}
	return d.UnmarshalText([]byte(s))
}

// MarshalText renders the duration as written.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// IsSet reports whether a value was written or assigned.
func (d Duration) IsSet() bool { return d.text != "" || d.Duration != 0 }

// String renders the duration as written.
func (d Duration) String() string { return cmp.Or(d.text, d.Duration.String()) }

// JSONSchema describes a duration string.
func (Duration) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type:        "string",
		Pattern:     `^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$`,
		Description: `A positive duration such as "90s", "45m" or "1h30m".`,
	}
}

// problem returns why d cannot be used, or "" when it can.
func (d Duration) problem() string {
	switch {
	case !d.IsSet():
		return ""
	case errors.Is(d.err, errNotString):
		return "must be a string such as \"30m\", not a bare number"
	case d.err != nil:
		return "is not a duration (use a value such as \"90s\", \"45m\" or \"1h30m\")"
	case d.Duration <= 0:
		return "must be positive"
	}
	return ""
}

// Size is a number of bytes, written as an integer (104857600) or as a
// string with a binary unit ("100MiB", "1 GiB").
type Size struct {
	Bytes int64
	written
}

// sizeUnits are the units a size string may carry: powers of 1024, as
// GitHub states its limits (a decimal "MB" is refused rather than
// guessed at).
var sizeUnits = map[string]int64{"": 1, "B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}

var sizeRE = regexp.MustCompile(`^([0-9]+) ?([A-Za-z]*)$`)

var (
	errSizeSyntax = errors.New("is not a size")
	errSizeUnit   = errors.New("has an unknown unit")
	errSizeRange  = errors.New("is too large")
)

// UnmarshalTOML records a TOML integer or string as a size; it never
// fails.
func (s *Size) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		s.Bytes, s.written = v, written{text: strconv.FormatInt(v, 10)}
		return nil
	case string:
		return s.UnmarshalText([]byte(v))
	}
	s.written = written{text: fmt.Sprint(v), err: errSizeSyntax}
	return nil
}

// UnmarshalText parses a size string and records any error.
func (s *Size) UnmarshalText(b []byte) error {
	s.text, s.quoted = string(b), true
	s.Bytes, s.err = parseSize(s.text)
	return nil
}

func parseSize(text string) (int64, error) {
	m := sizeRE.FindStringSubmatch(text)
	if m == nil {
		return 0, errSizeSyntax
	}
	unit, ok := sizeUnits[m[2]]
	if !ok {
		return 0, errSizeUnit
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, errSizeRange
	}
	return n * unit, nil
}

// MarshalText renders the size as written.
func (s Size) MarshalText() ([]byte, error) {
	return []byte(cmp.Or(s.text, strconv.FormatInt(s.Bytes, 10))), nil
}

// IsSet reports whether a value was written or assigned.
func (s Size) IsSet() bool { return s.text != "" || s.Bytes != 0 }

// String renders the size as people read it: "100 MiB".
func (s Size) String() string { return phrase.Bytes(s.Bytes) }

// JSONSchema describes a size: an integer of bytes, or a string with a
// binary unit.
func (Size) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		OneOf: []*jsonschema.Schema{
			{Type: "integer", Minimum: "1"},
			{Type: "string", Pattern: `^[0-9]+ ?(B|KiB|MiB|GiB|TiB)?$`},
		},
		Description: `A size in bytes: an integer, or a string with a binary unit such as "100MiB" or "2 GiB".`,
	}
}

// problem returns why s cannot be used, or "" when it can.
func (s Size) problem() string {
	switch {
	case !s.IsSet():
		return ""
	case errors.Is(s.err, errSizeUnit):
		return "has an unknown unit: use B, KiB, MiB, GiB or TiB (powers of 1024), as in \"100MiB\""
	case errors.Is(s.err, errSizeRange):
		return "is too large"
	case s.err != nil:
		return "is not a size (use an integer of bytes, or a string such as \"100MiB\" or \"2 GiB\")"
	case s.Bytes <= 0:
		return "must be positive"
	}
	return ""
}
