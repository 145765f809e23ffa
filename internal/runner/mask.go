package runner

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/loop-action/loop-action/internal/export"
	"github.com/loop-action/loop-action/internal/loop"
)

// minSecret is the length of the shortest value masked: shorter ones would
// mask ordinary text.
const minSecret = 4

// Masker returns a function that replaces the values of every variable a
// provider declares in env with "***", so that nothing an agent prints can
// carry a secret into the ledger, the log or a comment. It replaces each
// value in every form secretForms lists, raw and encoded, in one pass
// (export.Mask).
func Masker(cfg *loop.Config, env []string) func(string) string {
	return export.Mask(Secrets(cfg, env))
}

// Secrets returns the variables that providers declare in env and env
// sets to a value of at least minSecret bytes, and those of providers' env
// tables whose values look like secrets, sorted by name, each with the
// forms its value can take in text (secretForms).
func Secrets(cfg *loop.Config, env []string) []export.Secret {
	names := map[string]bool{}
	for _, p := range cfg.Providers {
		for _, e := range p.Env {
			names[e] = true
		}
	}
	var out []export.Secret
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && names[k] && len(v) >= minSecret {
			out = append(out, export.Secret{Name: k, Forms: secretForms(v)})
		}
	}
	// Values of env tables that look like secrets (loop.LooksSecret).
	for _, p := range cfg.Providers {
		for k, v := range p.SecretEnvValues() {
			if len(v) >= minSecret {
				out = append(out, export.Secret{Name: k, Forms: secretForms(v)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b export.Secret) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// secretForms returns the ways value commonly appears in text, without
// repeats: raw; inside a JSON string as encoding/json writes it; hex,
// lower and upper case; URL-encoded (query and path escaping); and
// standard and URL-safe base64, whole (padded and not), and as the
// characters that encode only its bytes when it sits inside a larger blob,
// at each of the three byte offsets mod 3. Other encodings (gzip,
// encryption, ROT13, a value split across lines…) are not found.
func secretForms(value string) []string {
	forms := []string{value, jsonEscaped(value), hex.EncodeToString([]byte(value)), strings.ToUpper(hex.EncodeToString([]byte(value))),
		url.QueryEscape(value), url.PathEscape(value)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		raw := enc.WithPadding(base64.NoPadding)
		forms = append(forms, enc.EncodeToString([]byte(value)), raw.EncodeToString([]byte(value)))
		for offset := range 3 {
			forms = append(forms, base64Core(raw, value, offset))
		}
	}
	var out []string
	for _, f := range forms {
		if len(f) >= minSecret && !slices.Contains(out, f) {
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
