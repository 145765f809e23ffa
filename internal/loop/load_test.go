package loop

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

// exampleConfigs are the realistic configs shipped with the repository.
func exampleConfigs(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/examples/*.toml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../examples/quickstart/loop.toml")
	if len(files) < 6 {
		t.Fatalf("found only %d example configs", len(files))
	}
	return files
}

func TestExamplesLoadClean(t *testing.T) {
	t.Parallel()
	for _, f := range exampleConfigs(t) {
		cfg, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if len(cfg.Warnings) > 0 {
			t.Errorf("%s: unexpected warnings:\n%s", f, cfg.Warnings)
		}
	}
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("loop.toml", []byte(`
name = "x"
[providers.p]
command = ["agent"]
[[node]]
name = "n"
provider = "p"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "true"
[stop]
no_progress = 5
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"max_iterations":    cfg.Stop.MaxIterations,
		"no_progress":       cfg.Stop.NoProgress,
		"perturb_after":     cfg.Stop.PerturbAfter,
		"max_node_failures": cfg.Stop.MaxNodeFailures,
		"concurrency":       cfg.Run.Concurrency,
		"check_concurrency": cfg.Run.CheckConcurrency,
		"carry_summaries":   cfg.Context.CarrySummaries,
		"min_pass_rate":     cfg.Success.MinPassRate,
		"provider":          []string{cfg.Providers["p"].Type, cfg.Providers["p"].Prompt, cfg.Providers["p"].Usage},
		"provider timeout":  cfg.Providers["p"].Timeout.Duration,
		"role, tier":        []string{cfg.Nodes[0].Role, cfg.Nodes[0].Tier},
		"blocking":          cfg.Goals[0].IsBlocking(),
		"check timeout":     cfg.Goals[0].Checks[0].Timeout.Duration,
		"metrics timeout":   cfg.Metrics.Timeout.Duration,
		"deliver":           cfg.Deliver,
	}
	want := map[string]any{
		"max_iterations":    10,
		"no_progress":       5,
		"perturb_after":     4,
		"max_node_failures": 3,
		"concurrency":       4,
		"check_concurrency": 1,
		"carry_summaries":   2,
		"min_pass_rate":     1.0,
		"provider":          []string{"command", "stdin", "none"},
		"provider timeout":  30 * time.Minute,
		"role, tier":        []string{"builder", "standard"},
		"blocking":          true,
		"check timeout":     10 * time.Minute,
		"metrics timeout":   5 * time.Minute,
		"deliver": Deliver{Message: "loop {loop}: certified at iteration {iteration}",
			AuthorName: "github-actions[bot]", AuthorEmail: "41898282+github-actions[bot]@users.noreply.github.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if w := cfg.Warnings.String(); !strings.Contains(w, "loop.toml:14:2: warning: no wall-clock, token or cost budget") {
		t.Errorf("missing the no-budget warning at [stop]; got:\n%s", w)
	}
}

// base is a valid config that rule tests extend.
const base = `name = "x"
[stop]
max_tokens = 1000
[providers.a]
command = ["agent-a"]
[providers.b]
command = ["agent-b"]
[[node]]
name = "build"
provider = "a"
goals = ["g"]
[[goal]]
name = "g"
  [[goal.check]]
  type = "test"
  run = "true"
`

func TestValidateRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		extra string
		want  []string
	}{
		{"valid", "", nil},
		{"judge shares the builder's provider and runs alongside it", `
[[node]]
name = "j"
role = "judge"
provider = "a"
[[goal]]
name = "h"
  [[goal.check]]
  type = "judge"
  node = "j"
[[node]]
name = "b2"
provider = "a"
goals = ["h"]
`, []string{
			`loop.toml:19:1: node "j": judge of goal "h" must run after its builder "b2" (add "b2" to after)`,
			`loop.toml:26:3: goal "h" check 1: judge "j" uses provider "a", which also runs builder "b2" of this goal; a judge must not share a provider with the builders it judges`,
		}},
		{"independent judge after the builder", `
[[node]]
name = "j"
role = "judge"
provider = "b"
after = ["build"]
[[goal]]
name = "h"
  [[goal.check]]
  type = "judge"
  node = "j"
`, nil},
		{"builder without goals warns", `
[[node]]
name = "idle"
provider = "a"
`, []string{`loop.toml:19:1: warning: node "idle" is a builder with no goals: its prompt will name no checks`}},
		{"openai without a model", `
[providers.o]
type = "openai"
`, []string{`loop.toml:19:1: provider "o" needs a model, e.g. model = "gpt-4.1"`}},
		{"openai with the keys of a command", `
[providers.o]
type = "openai"
model = "m"
command = ["x"]
usage = "claude-json"
`, []string{
			`loop.toml:21:1: provider "o": command is a key of type = "command"; type = "openai" sends the prompt to the API and reads usage from its reply`,
			`loop.toml:22:1: provider "o": usage is a key of type = "command"; type = "openai" sends the prompt to the API and reads usage from its reply`,
		}},
		{"a command with the keys of openai", `
[providers.c]
command = ["x"]
model = "m"
`, []string{`loop.toml:20:1: provider "c": model is a key of type = "openai", not of type "command"`}},
		{"openai keys that cannot be used", `
[providers.o]
type = "openai"
model = "m"
base_url = "ftp://user:pw@host/v1"
api_key_env = "not a name"
headers = { Authorization = "Bearer sk-x", "bad name" = "v", ok = "a\nb" }
tiers = { strong = ["a", "b"], cheap = [""], huge = ["m"] }
`, []string{
			`loop.toml:21:1: provider "o": base_url "ftp://user:pw@host/v1" must start with https:// (or http:// for a local server)`,
			`loop.toml:22:1: provider "o": "not a name" is not an environment variable name`,
			`loop.toml:23:13: provider "o": the Authorization header comes from api_key_env; a key written in the config is not secret`,
			`loop.toml:23:44: provider "o": "bad name" is not an HTTP header name`,
			`loop.toml:23:62: provider "o": header "ok" has a value that cannot be sent (a line break or control character)`,
			`loop.toml:24:11: provider "o": tier "strong" of an openai provider names one model, e.g. ["gpt-4.1-mini"]`,
			`loop.toml:24:32: provider "o": tier "cheap" of an openai provider names one model, e.g. ["gpt-4.1-mini"]`,
			`loop.toml:24:46: provider "o": unknown tier "huge" (tiers are cheap, standard, strong)`,
		}},
		{"a provider's env table, args, idle_timeout and auth_failure", `
[providers.c]
command = ["x"]
env = { ANTHROPIC_BASE_URL = "http://gateway:8080", CLAUDE_CODE_MAX_RETRIES = "0" }
args = ["--max-turns", "30"]
idle_timeout = "2m"
auth_failure = "401"
`, nil},
		{"env table mistakes", `
[providers.c]
command = ["x"]
env = { "not a name" = "v", TMPDIR = "/tmp/x", LOOP_NODE = "n", GATEWAY_TOKEN = "tok-1234", OK = "a\u0000b" }
`, []string{
			`loop.toml:20:9: provider "c": "not a name" is not an environment variable name`,
			`loop.toml:20:29: provider "c": env cannot set TMPDIR: the runner sets it for every call`,
			`loop.toml:20:48: provider "c": env cannot set LOOP_NODE: the runner sets it for every call`,
			`loop.toml:20:65: warning: provider "c": the value of GATEWAY_TOKEN looks like a secret: it is masked in every output, but anyone who can read the config can read it; set it in the runner's environment instead`,
			`loop.toml:20:93: provider "c": the value of OK holds a NUL byte`,
		}},
		{"env of neither form", `
[providers.c]
command = ["x"]
env = { A = 1 }
`, []string{`loop.toml:20:1: provider "c": the value of A must be a string, not 1`}},
		{"args, idle_timeout and auth_failure mistakes", `
[providers.c]
command = ["x"]
timeout = "1m"
args = ["--ok", ""]
idle_timeout = "5m"
auth_failure = "(unclosed"
`, []string{
			`loop.toml:21:1: provider "c": args must not hold an empty argument or a NUL byte`,
			`loop.toml:22:1: warning: provider "c": idle_timeout "5m" is not shorter than timeout "1m", so it never ends a call`,
			`loop.toml:23:1: provider "c": auth_failure: error parsing regexp: missing closing ): ` + "`(unclosed`",
		}},
		{"openai with a command's env table and args", `
[providers.o]
type = "openai"
model = "m"
env = { A = "b" }
args = ["x"]
`, []string{
			`loop.toml:21:1: provider "o": an env table sets an agent CLI's environment; type = "openai" runs none, so env lists variable names only`,
			`loop.toml:22:1: provider "o": args is a key of type = "command"; type = "openai" sends the prompt to the API and reads usage from its reply`,
		}},
		{"openai valid", `
[providers.o]
type = "openai"
model = "m"
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "O_KEY"
headers = { "api-key" = "x" }
tiers = { strong = ["big"] }
`, nil},
		{"a deliver section", `
[deliver]
message = """
fix({loop}): {snapshot} from {run_id} at {iteration}

Loop-Runs: are not trailers of ours"""
author_name = "Loop Bot"
author_email = "loop@example.com"
allow_workflows = true
partial = true
`, nil},
		{"deliver mistakes", `
[deliver]
message = """{loop} {run} {snapshot}
loop-run: 1"""
author_name = "Mallory <x@example.com>"
author_email = "not an email"
`, []string{
			`loop.toml:19:1: deliver.message: unknown placeholder {run}; the placeholders are {loop}, {run_id}, {iteration}, {snapshot}`,
			`loop.toml:19:1: deliver.message writes the trailer "Loop-Run:", which the action adds itself`,
			`loop.toml:21:1: deliver.author_name "Mallory <x@example.com>" holds <, > or a control character, which a git identity cannot`,
			`loop.toml:22:1: deliver.author_email "not an email" is not an email address (one word with an @)`,
		}},
		{"an empty deliver message and identity", `
[deliver]
message = " "
author_name = ""
author_email = "a\nb@example.com"
`, []string{
			`loop.toml:19:1: deliver.message is empty: it is the message of the commit the action delivers`,
			`loop.toml:20:1: deliver.author_name "" is empty`,
			`loop.toml:21:1: deliver.author_email "a\nb@example.com" holds <, > or a control character, which a git identity cannot`,
		}},
		{"all at once", `
[[node]]
name = "build"
provider = "zzz"
stage = "nowhere"
[[goal]]
name = "empty"
`, []string{
			`loop.toml:19:1: duplicate node name "build" (first defined on line 9)`,
			`loop.toml:19:1: warning: node "build" is a builder with no goals: its prompt will name no checks`,
			`loop.toml:20:1: node "build": unknown provider "zzz"`,
			`loop.toml:21:1: node "build": unknown stage "nowhere"`,
			`loop.toml:22:3: goal "empty" has no checks: add at least one [[goal.check]]`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, d := range diagnostics(t, base+tt.extra) {
				got = append(got, d.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// diagnostics returns every problem Parse finds in src.
func diagnostics(t *testing.T, src string) Diagnostics {
	t.Helper()
	cfg, err := Parse("loop.toml", []byte(src))
	var cerr *ConfigError
	switch {
	case errors.As(err, &cerr):
		return cerr.Diagnostics
	case err != nil:
		t.Fatalf("Parse: %v", err)
	}
	return cfg.Warnings
}

func TestParseCarriesSource(t *testing.T) {
	t.Parallel()
	src := []byte(base)
	cfg, err := Parse("loop.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.File != "loop.toml" || string(cfg.Source) != base {
		t.Errorf("File, Source = %q, %q", cfg.File, cfg.Source)
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := Load(filepath.Join(t.TempDir(), "nope.toml"))
	if err == nil || !os.IsNotExist(errUnwrapAll(err)) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

func errUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
