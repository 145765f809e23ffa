package export

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/secret"
)

// TestChangesPatch: changes.patch is written, withheld when it holds a
// provider secret, or absent with the reason in EVIDENCE.md.
func TestChangesPatch(t *testing.T) {
	leaky := "diff --git a/k b/k\nnew file mode 100644\nindex 0000000..1234567\n--- /dev/null\n+++ b/k\n@@ -0,0 +1 @@\n+key=" + token + "\n"
	cases := []struct {
		name     string
		changes  *Changes
		file     string // changes.patch's content; "" when the export has none
		withheld []Withheld
		says     string // what EVIDENCE.md says of it
	}{
		{name: "a change", changes: &Changes{Patch: fixturePatch, Files: 1}, file: fixturePatch,
			says: "`changes.patch` holds the change from commit `3f9c2e1` to the certified snapshot `9b2d7c1` (1 path)"},
		{name: "no change", changes: &Changes{}, says: "`changes.patch` is empty: nothing differs between commit `3f9c2e1`"},
		{name: "the base is unknown", changes: &Changes{Missing: "the commit the run started from is unknown"},
			says: "This export has no `changes.patch`: the commit the run started from is unknown."},
		{name: "a secret in the patch", changes: &Changes{Patch: leaky, Files: 1},
			withheld: []Withheld{{Path: "changes.patch", Reason: heldBy("AGENT_TOKEN")}},
			says:     "`changes.patch` was left out: it holds a provider secret"},
		{name: "said nothing of", changes: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.in.Changes, f.in.Secrets = tc.changes, []secret.Secret{tokenSecret}
			dir, m, err := Write(f.parent, f.in)
			if err != nil {
				t.Fatal(err)
			}
			files := readExport(t, dir)
			got, listed := files["changes.patch"], slices.ContainsFunc(m.Files, func(f File) bool { return f.Path == "changes.patch" })
			empty := tc.changes != nil && tc.changes.Missing == "" && tc.changes.Patch == ""
			switch {
			case tc.file != "" && (string(got) != tc.file || !listed):
				t.Errorf("changes.patch = %q (in the manifest: %v), want %q", got, listed, tc.file)
			case empty && (got == nil || len(got) > 0 || !listed):
				t.Errorf("changes.patch = %q (in the manifest: %v), want an empty file", got, listed)
			case tc.file == "" && !empty && (got != nil || listed):
				t.Errorf("the export has changes.patch (%q), want none", got)
			}
			if diff := cmp.Diff(tc.withheld, m.Withheld); diff != "" {
				t.Errorf("withheld (-want +got):\n%s", diff)
			}
			evidence := string(files["EVIDENCE.md"])
			if tc.says != "" && !strings.Contains(evidence, tc.says) {
				t.Errorf("EVIDENCE.md does not say %q:\n%s", tc.says, evidence)
			}
			if tc.changes == nil && strings.Contains(evidence, "## Changes") {
				t.Errorf("EVIDENCE.md speaks of changes:\n%s", evidence)
			}
			if strings.Contains(evidence, token) {
				t.Error("EVIDENCE.md holds the secret")
			}
		})
	}
}
