package main

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestPresetScripts runs a loop on each preset with the scripts in
// testdata/script/presets. A stand-in of the CLI's name
// (testdata/presets/bin) is first on $PATH: it records its argv in
// $PRESET_LOG/<name>.argv and its prompt in $PRESET_LOG/<name>.prompt, does
// the builder's work, and prints an output recorded in the real tool's
// format ($PRESET_RECORDINGS, the provider parsers' testdata), whose tokens
// and cost the scripts find in the run's spend.
func TestPresetScripts(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-ins are POSIX sh")
	}
	p := scriptParams(t, "../../testdata/script/presets", false)
	bin, err := filepath.Abs("../../testdata/presets/bin")
	if err != nil {
		t.Fatal(err)
	}
	recordings, err := filepath.Abs("../../internal/runner/provider/testdata")
	if err != nil {
		t.Fatal(err)
	}
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		dir := filepath.Join(e.WorkDir, "bin")
		if err := copyDir(bin, dir); err != nil {
			return err
		}
		e.Setenv("PATH", dir+string(filepath.ListSeparator)+e.Getenv("PATH"))
		e.Setenv("PRESET_LOG", filepath.Join(e.WorkDir, "log"))
		e.Setenv("PRESET_RECORDINGS", recordings)
		return nil
	}
	testscript.Run(t, p)
}
