package runner

import (
	"context"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/state"
	"github.com/loop-action/loop-action/internal/testing/leak"
)

// hostileSecret has bytes that base64 encodes with + and /, and that URL
// encoding escapes.
const hostileSecret = "sk-live/+AbC=12&xy??>>~~"

func tokenConfig(t testing.TB) *loop.Config {
	t.Helper()
	cfg, err := loop.Parse("loop.toml", []byte(strings.Replace(never, `command = ["a"]`, "command = [\"a\"]\nenv = [\"AGENT_TOKEN\"]", 1)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestMaskerMasksSecretLookingEnvValues: a value written in a provider's
// env table is masked when it looks like a secret (by its name or its
// form), and left alone otherwise.
func TestMaskerMasksSecretLookingEnvValues(t *testing.T) {
	t.Parallel()
	cfg := &loop.Config{Providers: map[string]loop.Provider{"p": {EnvValues: map[string]string{
		"GATEWAY_TOKEN":      "tok-12345678",
		"ANTHROPIC_BASE_URL": "https://user:hunter22@gateway.internal",
		"EXTRA":              "sk-ant-abcdefgh",
		"RETRIES":            "retries-0",
	}}}}
	in := "tok-12345678 https://user:hunter22@gateway.internal sk-ant-abcdefgh retries-0"
	if got, want := Masker(cfg, nil)(in), "*** *** *** retries-0"; got != want {
		t.Errorf("masked %q, want %q", got, want)
	}
}

// TestHostileAgentCannotExportItsSecret runs testdata/agents/exfiltrate.sh
// to success. The agent writes its provider secret, raw and encoded, into
// exported files and its output; no form of it may reach the export, the
// evidence, the summaries, the ledger, the log or the checkpoint.
func TestHostileAgentCannotExportItsSecret(t *testing.T) {
	t.Parallel()
	agent, err := filepath.Abs("../../testdata/agents/exfiltrate.sh")
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, exfiltration(agent), nil)
	h.opts.Env = []string{"PATH=" + os.Getenv("PATH"), "AGENT_TOKEN=" + hostileSecret}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out := h.run(ctx); out.Status != state.Success || out.ExportPath == "" {
		t.Fatalf("run ended %s with export %q, want a success with an export", out.Status, out.ExportPath)
	}
	if _, err := os.Stat(filepath.Join(h.root, "out/blobs/b64-1.txt")); err != nil {
		t.Fatalf("the agent did not write its files: %v", err)
	}
	err = filepath.WalkDir(filepath.Join(h.root, ".loop"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(h.root, p)
		if how := leak.Recoverable(rel+"\n"+string(data), hostileSecret); how != "" {
			t.Errorf("%s gives the secret away (%s)", rel, how)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checkWithheld(t, filepath.Join(h.root, ".loop", "export", "exfil-success"))
}

// checkWithheld checks what the export of exfiltration kept and left out.
func checkWithheld(t *testing.T, dir string) {
	t.Helper()
	kept, err := filepath.Glob(filepath.Join(dir, "out", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range kept {
		kept[i] = filepath.Base(kept[i])
	}
	if diff := cmp.Diff([]string{"clean.md"}, kept); diff != "" {
		t.Errorf("out/ (-want +got):\n%s", diff)
	}
	evidence, err := os.ReadFile(filepath.Join(dir, "EVIDENCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"out/raw.txt", "out/hex.txt", "out/HEX.txt", "out/url.txt", "out/report.md", "out/blobs/b64-0.txt", "out/blobs/b64-1.txt", "out/blobs/b64-2.txt", "out/blobs/b64url-2.txt"} {
		line := "- `" + f + "` (the loop root's `" + f + "`): it holds the value of the provider variable \"AGENT_TOKEN\", or an encoding of it.\n"
		if !strings.Contains(string(evidence), line) {
			t.Errorf("EVIDENCE.md does not say %s was withheld:\n%s", f, evidence)
		}
	}
	if !strings.Contains(string(evidence), "matches /^token: / at line 3: token: ***") {
		t.Errorf("EVIDENCE.md lacks the masked regex evidence:\n%s", evidence)
	}
}

func exfiltration(agent string) string {
	return `name = "exfil"
[stop]
max_iterations = 1
max_tokens = 1_000_000
[providers.agent]
command = ["sh", "` + agent + `"]
env = ["AGENT_TOKEN"]
timeout = "30s"
[[node]]
name = "thief"
provider = "agent"
goals = ["report"]
[[goal]]
name = "report"
  [[goal.check]]
  type = "regex"
  path = "out/report.md"
  pattern = "^token: "
[[goal]]
name = "noisy"
blocking = false
  [[goal.check]]
  type = "test"
  run = "cat out/raw.txt out/hex.txt out/url.txt out/blobs/*; exit 1"
[protect]
paths = ["locked/**"]
[export]
paths = ["out/**"]
`
}

// BenchmarkMasker masks 1 MiB of agent output (a test log with a secret
// in it every 64 KiB, raw and in base64) with the forms of three secrets.
// "raw only" is the masker as it was, replacing only the raw values: the
// baseline for "every form".
func BenchmarkMasker(b *testing.B) {
	cfg := tokenConfig(b)
	cfg.Providers["a"] = loop.Provider{Env: []string{"AGENT_TOKEN", "OTHER_TOKEN", "THIRD_TOKEN"}}
	values := []string{hostileSecret, "ghp_0123456789abcdefABCDEF0123456789abcd", "sk-ant-api03-" + strings.Repeat("Zx9_", 20)}
	env := []string{"AGENT_TOKEN=" + values[0], "OTHER_TOKEN=" + values[1], "THIRD_TOKEN=" + values[2]}
	var log strings.Builder
	for log.Len() < 1<<20 {
		log.WriteString("=== RUN   TestParse/trailing_comma\n--- PASS: TestParse/trailing_comma (0.00s)\n")
		if log.Len()%(64<<10) < 80 {
			log.WriteString("token " + values[1] + " " + base64.StdEncoding.EncodeToString([]byte("x"+values[2])) + "\n")
		}
	}
	text := log.String()
	rawOnly := strings.NewReplacer(values[0], "***", values[1], "***", values[2], "***").Replace
	for _, m := range []struct {
		name string
		mask func(string) string
	}{{"raw only", rawOnly}, {"every form", Masker(cfg, env)}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				m.mask(text)
			}
		})
	}
}
