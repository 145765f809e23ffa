package github

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/loop-action/loop-action/internal/phrase"
)

func TestBaseURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                 "https://api.github.com/",
		"https://api.github.com":           "https://api.github.com/",
		"https://api.github.com/":          "https://api.github.com/",
		"https://ghes.example.com/api/v3":  "https://ghes.example.com/api/v3/",
		"https://ghes.example.com":         "https://ghes.example.com/api/v3/",
		"https://api.acme.ghe.com":         "https://api.acme.ghe.com/",
		"http://127.0.0.1:8080":            "http://127.0.0.1:8080/",
		"http://172.17.0.1:41234":          "http://172.17.0.1:41234/",
		"http://127.0.0.1:8080/prefix?x=1": "http://127.0.0.1:8080/prefix/",
	} {
		u, err := baseURL(in)
		if err != nil || u.String() != want {
			t.Errorf("baseURL(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
}

// TestDescriptionCut: a status description is cut to what GitHub takes.
func TestDescriptionCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"short", "short"},
		{strings.Repeat("a", 140), strings.Repeat("a", 140)},
		{strings.Repeat("a", 141), strings.Repeat("a", 139) + "…"},
		{strings.Repeat("日本", 100), strings.Repeat("日本", 69) + "日…"},
		{"bad \xff utf-8", "bad \uFFFD utf-8"},
		{"two\nlines", "two lines"},
	} {
		got := phrase.Line(tc.in, DescriptionLimit)
		if got != tc.want || !utf8.ValidString(got) || utf8.RuneCountInString(got) > DescriptionLimit {
			t.Errorf("cut(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
