package loop

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"github.com/invopop/jsonschema"

	"github.com/loop-action/loop-action/internal/phrase"
)

// Size is a number of bytes, written as an integer (104857600) or as a
// string with a binary unit ("100MiB", "1 GiB"). A value that does not
// parse is kept, with its error, so that Validate can report it with its
// position.
type Size struct {
	Bytes  int64
	text   string
	quoted bool // text was a string
	err    error
}

// S returns n bytes as a Size, for configs built in code.
func S(n int64) Size { return Size{Bytes: n, text: strconv.FormatInt(n, 10)} }

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
		s.Bytes, s.text, s.quoted, s.err = v, strconv.FormatInt(v, 10), false, nil
		return nil
	case string:
		return s.UnmarshalText([]byte(v))
	}
	s.text, s.quoted, s.err = fmt.Sprint(v), false, errSizeSyntax
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
	if s.text != "" {
		return []byte(s.text), nil
	}
	return []byte(strconv.FormatInt(s.Bytes, 10)), nil
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

// shown renders the value as written: quoted when it was a string.
func (s Size) shown() string {
	if s.quoted {
		return strconv.Quote(s.text)
	}
	return s.text
}
