package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLoopInAnyCase: .LOOP is .loop on a case-folding disk (macOS's
// default), so a snapshot never holds it, a Writer never writes there,
// and where it is a directory of its own (Linux) nothing carries it: the
// uncarried listing has it, and the runner removes it before measuring.
func TestLoopInAnyCase(t *testing.T) {
	root := build(t, file(".loop/state/x", "ours\n"), file(".LOOP/state/decisions.json", "forged\n"),
		file(".Loop./x", "forged\n"), file("a.txt", "a\n"), file("sub/.LOOP/kept", "only the top one is ours\n"))
	files, err := NewHasher(root).Files(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "sub/.LOOP/kept"}, files); diff != "" {
		t.Errorf("Files() (-want +got):\n%s", diff)
	}
	u, err := ScanUncarried(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for p := range u {
		listed = append(listed, p)
	}
	for _, p := range []string{".LOOP", ".LOOP/state/decisions.json", ".Loop.", ".Loop./x"} {
		if _, ok := u[p]; !ok {
			t.Errorf("ScanUncarried lacks %q: %v", p, listed)
		}
	}
	if _, ok := u[".loop"]; ok {
		t.Error("ScanUncarried lists the root's own .loop")
	}
	w := openWriter(t, root)
	for _, rel := range []string{".LOOP/state/decisions.json", ".loop/x", "LOOP~1/x", ".loop. /x"} {
		if err := w.WriteFile(rel, []byte("x"), 0o644); !errors.Is(err, ErrLoopPath) {
			t.Errorf("WriteFile(%q) = %v, want ErrLoopPath", rel, err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(root, ".LOOP/state/decisions.json")); string(data) != "forged\n" {
		t.Errorf(".LOOP/state/decisions.json holds %q", data)
	}
}
