// Package secret owns what a secret is to loop-action: a named value and
// the forms it takes in text (Append); masking them (Mask); and finding them
// in text, in a stream and across the writes of one (Finder, Scanner).
// Beyond a guess from a name and a value's form (Looks), it never decides
// which values are secret — the runner and the action say so — and never
// reads the environment, a config or a file itself.
package secret

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Min is the length of the shortest value taken for a secret: shorter
// ones would mask ordinary text.
const Min = 4

// Secret is a value that nothing shown or delivered may carry.
type Secret struct {
	Name  string   // the variable's (or token's) name: the only part of it ever shown
	Forms []string // its value, raw and encoded, as it can appear in text (Append)
}

// Append appends to secrets the secret name that holds value, with every
// form of the value (forms), unless value is shorter than Min.
func Append(secrets []Secret, name, value string) []Secret {
	if len(value) < Min {
		return secrets
	}
	return append(secrets, Secret{Name: name, Forms: forms(value)})
}

// nameRE matches the names of variables that hold secrets by convention.
var nameRE = regexp.MustCompile(`(?i)(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASS|PWD|CREDENTIALS?|AUTH)(_|$)`)

// valueRE matches values in the forms of well-known keys and tokens.
var valueRE = regexp.MustCompile(`^(sk-|sk_|rk_|pk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|xox[abprs]-|AKIA[0-9A-Z]{12}|AIza[0-9A-Za-z_-]{20}|ya29\.|eyJ[0-9A-Za-z_-]{10,}\.)`)

// Looks reports whether the value of a variable set in plain text (a
// provider's env table) looks like a secret: its name says so (…_KEY,
// …_TOKEN, …_SECRET, …PASSWORD, …AUTH…), it has the form of a well-known
// key (sk-…, ghp_…, AKIA…, AIza…, a JWT), or it is a URL that carries a
// password.
func Looks(name, value string) bool {
	if value == "" {
		return false
	}
	if nameRE.MatchString(name) || valueRE.MatchString(value) {
		return true
	}
	if u, err := url.Parse(value); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			return true
		}
	}
	return false
}

// ByName sorts secrets by name, keeping the order of those of one name.
func ByName(secrets []Secret) {
	slices.SortStableFunc(secrets, func(a, b Secret) int { return strings.Compare(a.Name, b.Name) })
}

// forms returns the ways value commonly appears in text, without repeats:
// raw; inside a JSON string as encoding/json writes it; hex, lower and
// upper case; URL-encoded (query and path escaping); and standard and
// URL-safe base64, whole (padded and not), and as the characters that
// encode only its bytes when it sits inside a larger blob, at each of the
// three byte offsets mod 3. Other encodings (gzip, encryption, ROT13, a
// value split across lines…) are not found.
func forms(value string) []string {
	all := []string{value, jsonEscaped(value), hex.EncodeToString([]byte(value)), strings.ToUpper(hex.EncodeToString([]byte(value))),
		url.QueryEscape(value), url.PathEscape(value)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		all = append(all, enc.EncodeToString([]byte(value)), raw.EncodeToString([]byte(value)))
		for offset := range 3 {
			all = append(all, base64Core(raw, value, offset))
		}
	}
	var out []string
	for _, f := range all {
		if len(f) >= Min && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// base64Core returns the base64 characters that encode value alone when
// it starts offset bytes (mod 3) into the encoded data: the characters
// whose six bits all come from value, whatever surrounds it. (A character
// at either end that mixes in a neighbour's bits is left out: it gives
// away at most a few bits of the value.)
func base64Core(enc *base64.Encoding, value string, offset int) string {
	s := enc.EncodeToString(append(make([]byte, offset), value...))
	first := (8*offset + 5) / 6           // the first character that starts inside value
	last := (8*offset + 8*len(value)) / 6 // one past the last that ends inside it
	if first >= last {
		return ""
	}
	return s[first:last]
}

// jsonEscaped is value inside a JSON string, as encoding/json writes it
// (which escapes <, > and & as well as quotes and control characters).
func jsonEscaped(value string) string {
	b, err := json.Marshal(value)
	if err != nil {
		return value
	}
	return string(b[1 : len(b)-1])
}
