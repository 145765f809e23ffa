package loop

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const openaiSrc = base + `[providers.o]
type = "openai"
model = "m"
api_key_env = "O_KEY"
tiers = { strong = ["big"] }
`

func TestOpenAIDefaultsAndTiers(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("loop.toml", []byte(openaiSrc))
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Providers["o"]
	got := map[string]any{"base_url": p.BaseURL, "env": p.Env, "standard": p.Argv(TierStandard), "strong": p.Argv(TierStrong), "timeout": p.Timeout.Duration}
	want := map[string]any{"base_url": DefaultOpenAIBaseURL, "env": []string{"O_KEY"},
		"standard": []string{"openai", DefaultOpenAIBaseURL, "m"}, "strong": []string{"openai", DefaultOpenAIBaseURL, "big"}, "timeout": DefaultProviderTimeout}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("openai provider (-want +got):\n%s", diff)
	}
}

// TestOpenAIKeyIsRequiredBeforeARun: api_key_env is checked like env, at
// its own key's position.
func TestOpenAIKeyIsRequiredBeforeARun(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("loop.toml", []byte(openaiSrc))
	if err != nil {
		t.Fatal(err)
	}
	ds := cfg.CheckEnv(func(string) (string, bool) { return "", false }, Error)
	want := `loop.toml:20:1: provider "o" needs the environment variable O_KEY, which is not set`
	if len(ds) != 1 {
		t.Fatalf("diagnostics %v, want one", ds)
	}
	if diff := cmp.Diff(want, ds[0].String()); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	set := func(name string) (string, bool) { return "sk-x", name == "O_KEY" }
	if ds := cfg.CheckEnv(set, Error); len(ds) != 0 {
		t.Errorf("with the key set: %v", ds)
	}
}
