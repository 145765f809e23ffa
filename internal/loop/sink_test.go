package loop

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTooManyProblemsAreCounted checks that a config with more problems
// than MaxDiagnostics reports MaxDiagnostics of them and counts the rest.
func TestTooManyProblemsAreCounted(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(base)
	for i := range MaxDiagnostics + 500 {
		fmt.Fprintf(&b, "[[node]]\nname = \"n%d\"\nprovider = \"a\"\ngoals = [\"g\"]\nafter = [\"zz%d\"]\n", i, i)
	}
	ds := diagnostics(t, b.String())
	if len(ds) != MaxDiagnostics+1 {
		t.Fatalf("%d diagnostics, want %d", len(ds), MaxDiagnostics+1)
	}
	want := "loop.toml: too many problems: 500 more (500 errors, 0 warnings) are not shown"
	if diff := cmp.Diff(want, ds[0].String()); diff != "" {
		t.Errorf("first diagnostic (-want +got):\n%s", diff)
	}
}

// TestLeftOutErrorsStillFail fills the diagnostics with warnings before
// the only error: the config must still be refused.
func TestLeftOutErrorsStillFail(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(strings.Replace(base, "[[goal]]", "[[goal]]\nblocking = false", 1))
	for i := range MaxDiagnostics {
		fmt.Fprintf(&b, "[[node]]\nname = \"idle%d\"\nprovider = \"a\"\n", i)
	}
	ds := diagnostics(t, b.String())
	if !ds.HasErrors() {
		t.Fatalf("the config was accepted; its one error was left out:\n%s", ds[0])
	}
	want := "loop.toml: too many problems: 1 more (1 errors, 0 warnings) are not shown"
	if diff := cmp.Diff(want, ds[0].String()); diff != "" {
		t.Errorf("first diagnostic (-want +got):\n%s", diff)
	}
}

func TestSuggestionsHaveABudget(t *testing.T) {
	t.Parallel()
	known := []string{"fixer", "review", "docs"}
	s := newSuggester()
	if got := s.closest("fxier", known); got != "fixer" {
		t.Errorf("closest(fxier) = %q, want fixer", got)
	}
	poor := suggester{budget: 30}
	if got := poor.closest("fxier", known); got != "" {
		t.Errorf("with no budget left, closest(fxier) = %q, want none", got)
	}
	if got := s.closest(strings.Repeat("x", 1<<20), []string{strings.Repeat("x", 1<<20-1)}); got != "" {
		t.Errorf("a comparison over the budget was made: %q", got[:10])
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"abc", "abc", 0},
		{"fixer", "fxier", 1}, {"fixer", "fixes", 1}, {"fixer", "fixers", 1},
		{"max_iteratons", "max_iterations", 1}, {"ca", "abc", 3}, {"kitten", "sitting", 3},
	}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLayers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		after [][]string // after[i] for item "i"
		want  [][]int
	}{
		{"independent", [][]string{nil, nil, nil}, [][]int{{0, 1, 2}}},
		{"a chain backwards", [][]string{{"1"}, {"2"}, nil}, [][]int{{2}, {1}, {0}}},
		{"a diamond", [][]string{nil, {"0"}, {"0"}, {"1", "2"}}, [][]int{{0}, {1, 2}, {3}}},
		{"the latest dependency decides", [][]string{nil, {"0"}, {"1", "0"}, {"0"}}, [][]int{{0}, {1, 3}, {2}}},
		{"repeats and unknowns", [][]string{nil, {"0", "0", "zz"}}, [][]int{{0}, {1}}},
		{"a cycle and what is behind it", [][]string{nil, {"2"}, {"1"}, {"2"}, {"0"}}, [][]int{{0}, {4}}},
		{"a self reference is reported apart", [][]string{{"0"}}, [][]int{{0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			names := make([]string, len(tt.after))
			for i := range names {
				names[i] = fmt.Sprint(i)
			}
			got := newGraph(names, func(i int) []string { return tt.after[i] }).layers()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}
