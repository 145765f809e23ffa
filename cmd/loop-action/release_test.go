package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/testing/subprocess"
)

// TestReleasedActionUsesTheImage renders action.yml as release.yml does
// for a release tag: runs.image names the prebuilt image by that tag, and
// nothing else changes; a tag that is not vX.Y.Z, or a file without the
// one image: Dockerfile line, is refused and the file left as it was.
func TestReleasedActionUsesTheImage(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("../../scripts/release-action.sh")
	if err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	render := func(t *testing.T, content []byte, args ...string) (string, error) {
		file := filepath.Join(t.TempDir(), "action.yml")
		if err := os.WriteFile(file, content, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := subprocess.ForTest(t, "bash", append(append([]string{script}, args...), file)...).CombinedOutput()
		got, rerr := os.ReadFile(file)
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			return string(got), &exitError{err, string(out)}
		}
		return string(got), nil
	}
	got, err := render(t, orig, "v1.2.3", "ghcr.io/octo-org/loop-action")
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(orig), "\n  image: Dockerfile\n", "\n  image: docker://ghcr.io/octo-org/loop-action:v1.2.3\n", 1)
	if want == string(orig) {
		t.Fatal("action.yml on main does not build its Dockerfile")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("released action.yml (-want +got):\n%s", diff)
	}
	for name, c := range map[string]struct {
		content []byte
		args    []string
	}{
		"a major tag":     {orig, []string{"v1", "ghcr.io/o/loop-action"}},
		"a branch":        {orig, []string{"main", "ghcr.io/o/loop-action"}},
		"an injection":    {orig, []string{"v1.2.3", "ghcr.io/o/x|;touch /tmp/x"}},
		"already release": {[]byte(want), []string{"v1.2.4", "ghcr.io/o/loop-action"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := render(t, c.content, c.args...)
			if err == nil {
				t.Fatalf("accepted %v", c.args)
			}
			if got != string(c.content) {
				t.Errorf("the file changed although refused")
			}
		})
	}
}

type exitError struct {
	err error
	out string
}

func (e *exitError) Error() string { return e.err.Error() + ": " + e.out }
