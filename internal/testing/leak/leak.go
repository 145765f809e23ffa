// Package leak is a test oracle for secrets: it tells whether, and how, a
// secret can be read back from text, without the masker's code (package
// secret), so that tests of the masker and of what reaches the ledger, the
// log or an export check it against an independent decoder. Only tests
// import it.
package leak

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// Recoverable says how secret can be read back from text: found raw, or
// decoded from a run of base64, hex or URL-encoded characters at any
// alignment; "" when it cannot. It shares no code with the
// masker (package secret), whose forms it checks.
func Recoverable(text, secret string) string {
	if strings.Contains(text, secret) {
		return "raw"
	}
	if strings.Contains(jsonUnescape(text), secret) {
		return "JSON string"
	}
	if u, err := url.QueryUnescape(text); err == nil && strings.Contains(u, secret) {
		return "url"
	}
	for _, run := range base64Run.FindAllString(text, -1) {
		run = strings.TrimRight(run, "=")
		for start := range min(4, len(run)) {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				part := run[start:]
				part = part[:len(part)/4*4]
				if b, err := enc.DecodeString(part); err == nil && bytes.Contains(b, []byte(secret)) {
					return "base64"
				}
			}
		}
	}
	for _, run := range hexRun.FindAllString(text, -1) {
		for start := range min(2, len(run)) {
			part := run[start:]
			if b, err := hex.DecodeString(part[:len(part)/2*2]); err == nil && bytes.Contains(b, []byte(secret)) {
				return "hex"
			}
		}
	}
	return ""
}

// jsonUnescape undoes the escapes of JSON strings (which encoding/json
// uses for <, > and &).
func jsonUnescape(text string) string {
	text = jsonEscape.ReplaceAllStringFunc(text, func(e string) string {
		r, err := strconv.ParseUint(e[2:], 16, 32)
		if err != nil {
			return e
		}
		return string(rune(r))
	})
	return strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\/`, `/`).Replace(text)
}

var (
	jsonEscape = regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)
	base64Run  = regexp.MustCompile(`[A-Za-z0-9+/_=-]{4,}`)
	hexRun     = regexp.MustCompile(`(?i)[0-9a-f]{8,}`)
)
