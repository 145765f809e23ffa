package loop

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzLoadConfig feeds arbitrary text to Parse: it must never panic, and
// every diagnostic must carry a position inside the text (or none at all).
func FuzzLoadConfig(f *testing.F) {
	for _, file := range exampleConfigs(f) {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Add([]byte(base))
	f.Add([]byte("goal = \"x\"\n[[goal]]\nname = 'g'\n"))
	f.Add([]byte("[stop]\nmax_wall_clock = 30\n[[node]]\nname='a'\nafter=['a']\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, err := Parse("f.toml", src)
		var cerr *ConfigError
		switch {
		case err == nil:
			if cfg.Validate().HasErrors() {
				t.Fatalf("Parse accepted a config that Validate rejects")
			}
			checkPositions(t, src, cfg.Warnings)
		case errors.As(err, &cerr):
			if !cerr.Diagnostics.HasErrors() {
				t.Fatalf("ConfigError without an error: %v", err)
			}
			checkPositions(t, src, cerr.Diagnostics)
		default:
			t.Fatalf("Parse returned %T, not a *ConfigError: %v", err, err)
		}
	})
}

func checkPositions(t *testing.T, src []byte, ds Diagnostics) {
	t.Helper()
	lines := strings.Count(string(src), "\n") + 1
	for _, d := range ds {
		if d.Pos.File != "f.toml" {
			t.Fatalf("diagnostic names file %q: %s", d.Pos.File, d)
		}
		if d.Pos.Line < 0 || d.Pos.Line > lines || (d.Pos.Line > 0 && d.Pos.Col < 1) {
			t.Fatalf("diagnostic outside the text (%d lines): %s", lines, d)
		}
	}
}
