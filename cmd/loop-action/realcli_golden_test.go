//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/loop-action/loop-action/internal/testing/modelfake"
)

// realGoldens is where the captured real output lives, beside the
// stand-in recordings it holds to their shape.
const realGoldens = "../../internal/runner/provider/testdata/real"

// scrubbers make a capture independent of the machine and the run: the
// project's path, the tests' temporary directories, the server's port.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`/tmp/Test[^\s"\\/]*(/[0-9]+)?`), "$TMP"},
	{regexp.MustCompile(`127\.0\.0\.1:[0-9]+`), "127.0.0.1:PORT"},
}

func scrub(b []byte, root, bin string) []byte {
	b = bytes.ReplaceAll(b, []byte(root), []byte("$ROOT"))
	b = bytes.ReplaceAll(b, []byte(filepath.Dir(filepath.Dir(bin))), []byte("$CLIS"))
	for _, s := range scrubbers {
		b = s.re.ReplaceAllLiteral(b, []byte(s.with))
	}
	return b
}

// golden writes (with -update) or checks the capture of preset's call
// named name: stdout in NAME.out, stderr in NAME.err. Without -update the
// shape of what the CLI printed (modelfake.Shape) must equal the golden's:
// a CLI whose output changed shape fails here, and the stand-ins are held
// to the goldens by TestStandInsHoldToRealOutput in the provider package.
func golden(t *testing.T, preset, name string, stdout, stderr []byte, root string) {
	t.Helper()
	dir := filepath.Join(realGoldens, preset)
	bin := realBin(t)
	files := map[string][]byte{name + ".out": scrub(stdout, root, bin), name + ".err": scrub(stderr, root, bin)}
	for file, got := range files {
		path := filepath.Join(dir, file)
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("no golden capture (scripts/realcli.sh -update writes it): %v", err)
		}
		if d := cmp.Diff(modelfake.Shape(want), modelfake.Shape(got)); d != "" {
			t.Errorf("%s prints another shape than %s (-golden +now); review, then scripts/realcli.sh -update:\n%s", preset, path, d)
		}
	}
}

// printedCost is the total_cost_usd of Claude Code's result line.
func printedCost(t *testing.T, stdout []byte) float64 {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(stdout), []byte("\n"))
	var res struct {
		Type string  `json:"type"`
		Cost float64 `json:"total_cost_usd"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &res); err != nil || res.Type != "result" {
		t.Fatalf("no result line in Claude Code's output (%v):\n%s", err, stdout)
	}
	return res.Cost
}
