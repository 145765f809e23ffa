package loop

import (
	"strings"
	"testing"
)

// TestMixedWaveWarning: an isolated builder that can run at the same time
// as a builder working in the loop root gets a warning (its direct writes
// to the root cannot be caught then); nodes kept apart by after or by
// ordered stages do not.
func TestMixedWaveWarning(t *testing.T) {
	t.Parallel()
	const head = `name = "m"
[stop]
max_iterations = 2
[providers.p]
command = ["true"]
[providers.q]
command = ["true"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "true"
`
	node := func(name, extra string) string {
		return "[[node]]\nname = \"" + name + "\"\nprovider = \"p\"\ngoals = [\"g\"]\n" + extra + "\n"
	}
	for _, tc := range []struct {
		name, nodes string
		warn        bool
	}{
		{"same wave", node("iso", "isolate = true") + node("root", ""), true},
		{"after", node("iso", "isolate = true") + node("root", `after = ["iso"]`), false},
		{"both isolated", node("a", "isolate = true") + node("b", "isolate = true"), false},
		{"a judge in the root", node("iso", "isolate = true") + "[[node]]\nname = \"j\"\nrole = \"judge\"\nprovider = \"q\"\n", false},
		{"ordered stages", node("iso", "isolate = true\nstage = \"one\"") + node("root", `stage = "two"`) +
			"[[stage]]\nname = \"one\"\n[[stage]]\nname = \"two\"\nafter = [\"one\"]\n", false},
		{"unordered stages", node("iso", "isolate = true\nstage = \"one\"") + node("root", `stage = "two"`) +
			"[[stage]]\nname = \"one\"\n[[stage]]\nname = \"two\"\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := Parse("loop.toml", []byte(head+tc.nodes))
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, w := range cfg.Warnings {
				got = got || strings.Contains(w.Message, "is isolated but runs in wave 1 with builder")
			}
			if got != tc.warn {
				t.Errorf("warned %v, want %v: %v", got, tc.warn, cfg.Warnings)
			}
		})
	}
}
