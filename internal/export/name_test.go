package export

import (
	"regexp"
	"strings"
	"testing"
)

func TestSanitizeName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"plain", "green-build", "green-build"},
		{"underscore and digits", "Loop_2", "Loop_2"},
		{"empty", "", "loop"},
		{"spaces", "my  green build ", "my-green-build"},
		{"dots", "v1.2.3", "v1-2-3"},
		{"dot-dot", "..", "loop"},
		{"dot-dot path", "../../etc/passwd", "etc-passwd"},
		{"slashes", "a/b\\c", "a-b-c"},
		{"only separators", "/-./-", "loop"},
		{"dashes collapse", "a---b", "a-b"},
		{"trimmed", "--a--", "a"},
		{"unicode", "café ünïcode 日本", "caf-n-code"},
		{"emoji", "🚀launch🚀", "launch"},
		{"control characters", "a\x00b\nc\td", "a-b-c-d"},
		{"invalid utf-8", "a\xffb", "a-b"},
		{"drive letter", `C:\loops\x`, "C-loops-x"},
		{"long", strings.Repeat("ab", 100), strings.Repeat("ab", 28)},
		{"long cut before a dash", strings.Repeat("a", 55) + "-b" + strings.Repeat("c", 20), strings.Repeat("a", 55)},
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := SanitizeName(tt.in)
			if got != tt.want {
				t.Errorf("SanitizeName(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !valid.MatchString(got) || strings.Contains(got, "--") || len(DirName(tt.in)) > 64 {
				t.Errorf("SanitizeName(%q) = %q: not a clean name", tt.in, got)
			}
			if again := SanitizeName(got); again != got {
				t.Errorf("SanitizeName is not idempotent on %q: %q", got, again)
			}
		})
	}
}
