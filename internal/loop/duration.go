package loop

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/invopop/jsonschema"
)

// Duration is a length of time written as a string ("45m", "1h30m").
// A value that does not parse is kept, with its error, so that Validate
// can report every bad duration at once with its position.
type Duration struct {
	time.Duration
	text string
	err  error
}

// D returns d as a Duration, for configs built in code.
func D(d time.Duration) Duration { return Duration{Duration: d, text: formatDuration(d)} }

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
	d.text = string(b)
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
		d.text, d.err = fmt.Sprint(v), errNotString
		return nil
	}
	return d.UnmarshalText([]byte(s))
}

// MarshalText renders the duration as written.
func (d Duration) MarshalText() ([]byte, error) {
	if d.text != "" {
		return []byte(d.text), nil
	}
	return []byte(d.Duration.String()), nil
}

// IsSet reports whether a value was written or assigned.
func (d Duration) IsSet() bool { return d.text != "" || d.Duration != 0 }

// String renders the duration as written.
func (d Duration) String() string {
	b, _ := d.MarshalText()
	return string(b)
}

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

// shown renders the value as written: quoted when it was a string.
func (d Duration) shown() string {
	if errors.Is(d.err, errNotString) {
		return d.text
	}
	return strconv.Quote(d.String())
}
