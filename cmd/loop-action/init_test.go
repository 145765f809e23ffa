package main

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/loop-action/loop-action/internal/scaffold"
)

// TestInitFlagsOfferWhatScaffoldKnows: --preset and --template accept
// exactly the agents and templates scaffold renders.
func TestInitFlagsOfferWhatScaffoldKnows(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[initCmd]()
	for flag, want := range map[string][]string{"Preset": scaffold.Presets(), "Template": scaffold.Templates} {
		f, _ := typ.FieldByName(flag)
		got := strings.Split(f.Tag.Get("enum"), ",")
		if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))); diff != "" {
			t.Errorf("--%s accepts (-scaffold +flag):\n%s", strings.ToLower(flag), diff)
		}
	}
}
