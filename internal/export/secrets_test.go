package export

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/loop"
	"github.com/loop-action/loop-action/internal/secret"
)

const token = "tok-3f9c2e1d4b5a6978-do-not-leak"

// tokenSecret is token with two of its forms; the runner finds all of them
// (runner.Secrets, secret.Append).
var tokenSecret = secret.Secret{Name: "AGENT_TOKEN", Forms: []string{token, base64.StdEncoding.EncodeToString([]byte(token))}}

func TestFilesHoldingASecretAreWithheld(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	b64 := tokenSecret.Forms[1]
	big := strings.Repeat("x", 32<<10-10) + token + strings.Repeat("y", 100) // across two reads of io.Copy
	writeTree(t, root, map[string]string{
		"out/clean.md":              "# Report\n\nnothing to hide\n",
		"out/raw.txt":               "the token is " + token + "\n",
		"out/deep/er/b64.txt":       "payload: " + b64 + "\n",
		"out/big.bin":               big,
		"out/" + token + ".txt":     "an innocent file with a telling name\n",
		token + ".txt":              "another, whose place that one takes\n",
		"out/" + b64 + "/inner.txt": "an innocent file in a telling directory\n",
	})
	src := "name = \"s\"\n# " + token + "\n"
	in := Input{
		Config:  &loop.Config{Name: "s", Source: []byte(src), Export: loop.Export{Paths: []string{"out/**", "*.txt"}}},
		Root:    root,
		History: []Iteration{{N: 1, Satisfied: 1, Total: 1, Summary: "the agent said " + b64}},
		Secrets: []secret.Secret{tokenSecret},
	}
	dir, m, err := Write(t.TempDir(), in)
	if err != nil {
		t.Fatal(err)
	}
	files := readExport(t, dir)
	for name, data := range files {
		for _, f := range tokenSecret.Forms {
			if bytes.Contains(data, []byte(f)) || strings.Contains(name, f) {
				t.Errorf("%s holds a form of the secret", name)
			}
		}
	}
	held := heldBy("AGENT_TOKEN")
	named := "its name holds the value of a provider variable, or an encoding of it"
	want := []Withheld{ // clashes first, then in the order of the walk, by the files' real names
		{Path: "out/***.txt", Source: "***.txt", Reason: `the loop root's "out/***.txt" is exported to the same path`},
		{Path: "out/big.bin", Source: "out/big.bin", Reason: held},
		{Path: "out/***/inner.txt", Source: "out/***/inner.txt", Reason: named}, // dG9r…
		{Path: "out/deep/er/b64.txt", Source: "out/deep/er/b64.txt", Reason: held},
		{Path: "out/raw.txt", Source: "out/raw.txt", Reason: held},
		{Path: "out/***.txt", Source: "out/***.txt", Reason: named},
		{Path: "loop.toml", Reason: held},
	}
	if diff := cmp.Diff(want, m.Withheld); diff != "" {
		t.Errorf("withheld (-want +got):\n%s", diff)
	}
	var manifest Manifest
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, manifest.Withheld); diff != "" {
		t.Errorf("manifest.json withheld (-want +got):\n%s", diff)
	}
	var kept []string
	for _, f := range m.Files {
		kept = append(kept, f.Path)
	}
	if diff := cmp.Diff([]string{"EVIDENCE.md", "SKILL.md", "out/clean.md", "run.cmd", "run.sh"}, kept); diff != "" {
		t.Errorf("files kept (-want +got):\n%s", diff)
	}
	for _, gone := range []string{"out/deep", "loop.toml"} {
		if tree := tree(t, dir); tree[gone] != "" {
			t.Errorf("%s is in the export", gone)
		}
	}
	evidence := string(files["EVIDENCE.md"])
	for _, line := range []string{"> the agent said ***", "- `out/raw.txt` (the loop root's `out/raw.txt`): " + held + ".", "- `loop.toml`: " + held + "."} {
		if !strings.Contains(evidence, line) {
			t.Errorf("EVIDENCE.md lacks %q:\n%s", line, evidence)
		}
	}
	if skill := string(files["SKILL.md"]); !strings.Contains(skill, "7 files were left out; [EVIDENCE.md](EVIDENCE.md) says which and why.") {
		t.Errorf("SKILL.md does not say files were left out:\n%s", skill)
	}
}
