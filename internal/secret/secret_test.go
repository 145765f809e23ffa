package secret

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/leak"
)

// hostileSecret has bytes that base64 encodes with + and /, and that URL
// encoding escapes.
const hostileSecret = "sk-live/+AbC=12&xy??>>~~"

// TestSecretFormsCoverEmbeddings encodes a secret inside larger data, at
// every offset mod 3 and with every encoding the masker claims to catch,
// and checks that the masker finds and masks it there.
func TestSecretFormsCoverEmbeddings(t *testing.T) {
	t.Parallel()
	encodings := map[string]func([]byte) string{
		"base64":          base64.StdEncoding.EncodeToString,
		"base64 unpadded": base64.RawStdEncoding.EncodeToString,
		"base64url":       base64.URLEncoding.EncodeToString,
		"base64url nopad": base64.RawURLEncoding.EncodeToString,
		"hex":             hex.EncodeToString,
		"HEX":             func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) },
		"query escaped":   func(b []byte) string { return url.QueryEscape(string(b)) },
		"path escaped":    func(b []byte) string { return url.PathEscape(string(b)) },
		"raw":             func(b []byte) string { return string(b) },
		"JSON string":     func(b []byte) string { j, _ := json.Marshal(string(b)); return string(j) },
	}
	for _, value := range []string{"abcd", "abcde", hostileSecret, "s3cr3t t0ken with spaces", strings.Repeat("\xff\x00", 20)} {
		mask := Mask(Append(nil, "AGENT_TOKEN", value))
		for name, enc := range encodings {
			for _, prefix := range []string{"", "p", "pq", "pqr", "pqrs"} {
				for _, suffix := range []string{"", "z", "zy", "zyx"} {
					text := "before " + enc([]byte(prefix+value+suffix)) + " after"
					if got := mask(text); leak.Recoverable(got, value) != "" || !strings.Contains(got, "***") {
						t.Errorf("%s of %q+%q+%q: masked to %q", name, prefix, value, suffix, got)
					}
				}
			}
		}
	}
}

// TestMaskMasksEveryForm masks a value raw and encoded, and leaves alone
// what only resembles an encoding of it.
func TestMaskMasksEveryForm(t *testing.T) {
	t.Parallel()
	mask := Mask(Append(nil, "AGENT_TOKEN", hostileSecret))
	in := strings.Join([]string{
		"raw " + hostileSecret,
		"hex 736b2d6c6976652f2b4162433d313226787933f3f3e3e7e7e",
		"HEX " + strings.ToUpper(hex.EncodeToString([]byte(hostileSecret))),
		"url https://example.com/?key=" + url.QueryEscape(hostileSecret),
		"b64 " + base64.StdEncoding.EncodeToString([]byte(hostileSecret)),
		"b64 in a blob eHNrLWxpdmUvK0FiQz0xMiZ4eT8/Pj5+fnRhaWwtYnl0ZXM=",
		"short abc",
	}, "\n")
	want := strings.Join([]string{
		"raw ***",
		"hex 736b2d6c6976652f2b4162433d313226787933f3f3e3e7e7e", // not the hex of the secret (typo'd): left alone
		"HEX ***",
		"url https://example.com/?key=***",
		"b64 ***",
		"b64 in a blob eH***nRhaWwtYnl0ZXM=",
		"short abc",
	}, "\n")
	if diff := cmp.Diff(want, mask(in)); diff != "" {
		t.Errorf("masked (-want +got):\n%s", diff)
	}
	if got := Append(nil, "AGENT_TOKEN", "abc"); got != nil {
		t.Errorf("a value under 4 bytes was taken for a secret: %q", got)
	}
}

func TestLooks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, value string
		want        bool
	}{
		{"GATEWAY_TOKEN", "abc", true},
		{"openai_api_key", "x", true},
		{"DB_PASSWORD", "hunter2", true},
		{"AUTH", "x", true},
		{"MONKEY", "banana", false}, // KEY only as a word of the name
		{"TOKENIZER", "bpe", false},
		{"GATEWAY_TOKEN", "", false}, // nothing to hide
		{"BASE", "sk-abc123", true},
		{"BASE", "ghp_0123456789", true},
		{"BASE", "AKIAABCDEFGHIJKL", true},
		{"BASE", "AIza" + strings.Repeat("x", 20), true},
		{"BASE", "eyJhbGciOiJIUzI1NiJ9.eyJ.sig", true},
		{"BASE", "https://user:pw@gateway.example", true},
		{"BASE", "https://user@gateway.example", false},
		{"BASE", "https://gateway.example/v1", false},
		{"MODE", "fast", false},
	} {
		if got := Looks(tc.name, tc.value); got != tc.want {
			t.Errorf("Looks(%q, %q) = %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
}
