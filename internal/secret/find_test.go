package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const token = "tok-3f9c2e1d4b5a6978-do-not-leak"

// tokenSecret is token with two of its forms.
var tokenSecret = Secret{Name: "AGENT_TOKEN", Forms: []string{token, base64.StdEncoding.EncodeToString([]byte(token))}}

// TestScannerFindsFormsAcrossWrites writes data in chunks of every size
// up to the form's length: the scanner must find a form split between
// writes.
func TestScannerFindsFormsAcrossWrites(t *testing.T) {
	t.Parallel()
	data := []byte("0123456789" + token + "abcdefghij")
	for size := 1; size <= len(token)+1; size++ {
		s := NewFinder([]Secret{tokenSecret, {Name: "OTHER", Forms: []string{"zzzz"}}}).Scanner()
		for rest := data; len(rest) > 0; {
			n := min(size, len(rest))
			if _, err := s.Write(rest[:n]); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if s.Found() != "AGENT_TOKEN" {
			t.Errorf("chunks of %d: found %q, want AGENT_TOKEN", size, s.Found())
		}
	}
	if got := NewFinder([]Secret{tokenSecret}).Find([]byte(token[1:])); got != "" {
		t.Errorf("a part of the token was taken for it: %q", got)
	}
}

// BenchmarkScanner looks for 45 forms (three secrets in fifteen forms
// each) in 4 MiB of text that holds none, written in io.Copy's 32 KiB
// chunks. "one form" is the baseline.
func BenchmarkScanner(b *testing.B) {
	var secrets []Secret
	for i := range 3 {
		var forms []string
		for j := range 15 {
			forms = append(forms, strings.Repeat(string(rune('a'+i)), 3)+"-secret-form-"+strings.Repeat("x", j))
		}
		secrets = append(secrets, Secret{Name: "S", Forms: forms})
	}
	data := bytes.Repeat([]byte("--- PASS: TestParse/trailing_comma (0.00s) ok example.com/parser 0.412s\n"), 4<<20/72)
	for _, c := range []struct {
		name    string
		secrets []Secret
	}{{"one form", []Secret{{Name: "S", Forms: secrets[0].Forms[:1]}}}, {"45 forms", secrets}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			f := NewFinder(c.secrets)
			for b.Loop() {
				s := f.Scanner()
				for rest := data; len(rest) > 0; {
					n := min(32<<10, len(rest))
					_, _ = s.Write(rest[:n])
					rest = rest[n:]
				}
			}
		})
	}
}

// TestFindInReadsAcrossChunks finds a form that straddles the boundary of
// two reads, in a reader that returns one byte at a time or whole chunks,
// and reports a read error rather than "nothing found".
func TestFindInReadsAcrossChunks(t *testing.T) {
	t.Parallel()
	f := NewFinder([]Secret{tokenSecret})
	big := strings.Repeat("x", 64<<10-5) + token + strings.Repeat("y", 100)
	for _, c := range []struct {
		name string
		r    io.Reader
		want string
	}{
		{"whole chunks", strings.NewReader(big), "AGENT_TOKEN"},
		{"one byte a read", iotest.OneByteReader(strings.NewReader("ab" + token)), "AGENT_TOKEN"},
		{"none", strings.NewReader(strings.Repeat("x", 200<<10)), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := f.FindIn(c.r)
			if err != nil || got != c.want {
				t.Errorf("FindIn = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	broken := io.MultiReader(strings.NewReader("clean"), iotest.ErrReader(errors.New("disk on fire")))
	if got, err := f.FindIn(broken); err == nil || got != "" {
		t.Errorf("FindIn of a failing reader = %q, %v; want an error", got, err)
	}
}
