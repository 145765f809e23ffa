package environ

import (
	"go/parser"
	"go/token"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// envs are the environments the tests read: duplicates, entries without
// "=", empty names and values, Windows' "=C:" names and names that differ
// only in case.
var envs = map[string]Env{
	"nil":          nil,
	"plain":        {"PATH=/bin", "HOME=/h"},
	"duplicates":   {"A=1", "B=x", "A=2", "A=3"},
	"empty value":  {"A=1", "A="},
	"no equals":    {"A=1", "A", "", "B"},
	"empty name":   {"=x", "A=1", "=y"},
	"drive":        {"=C:=C:\\dir", "=D:=D:\\", "=C:=C:\\other"},
	"value with =": {"A=b=c", "A==d"},
	"case":         {"Path=/a", "PATH=/b", "path=/c"},
}

// names are the names looked up in each of envs.
var names = []string{"A", "B", "", "=C:", "=D:", "PATH", "Path", "path", "HOME", "MISSING"}

// TestLookupAsExec: Lookup finds what the child of an exec.Cmd given the
// environment sees (Cmd.Environ dedups as Start does): one variable for
// each of e's names, compared as on this system, with its last value.
func TestLookupAsExec(t *testing.T) {
	t.Parallel()
	for desc, e := range envs {
		t.Run(desc, func(t *testing.T) {
			t.Parallel()
			var child []string
			if e != nil { // a nil Cmd.Env is this process's: not what we compare
				child = (&exec.Cmd{Env: e}).Environ()
			}
			var found []string
			for _, kv := range child {
				if !strings.Contains(kv, "=") {
					continue // a name without a value: no variable
				}
				name, v, _ := split(kv)
				found = append(found, name)
				if got, ok := e.Lookup(name); got != v || !ok {
					t.Errorf("Lookup(%q) in %q = %q, %v; the child has %q", name, e, got, ok, kv)
				}
			}
			var distinct []string
			for k := range e.All() {
				if !slices.ContainsFunc(distinct, func(d string) bool { return same(fold, d, k) }) {
					distinct = append(distinct, k)
				}
			}
			if len(distinct) != len(found) {
				t.Errorf("%q names %q; the child has %q", e, distinct, found)
			}
			for _, name := range names {
				if _, ok := e.Lookup(name); ok != slices.ContainsFunc(found, func(f string) bool { return same(fold, f, name) }) {
					t.Errorf("Lookup(%q) in %q: ok = %v, the child has %q", name, e, ok, found)
				}
			}
		})
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env  Env
		name string
		want string
		ok   bool
	}{
		{envs["duplicates"], "A", "3", true},
		{envs["empty value"], "A", "", true},
		{envs["no equals"], "A", "1", true}, // the bare "A" sets nothing
		{envs["no equals"], "B", "", false},
		{envs["empty name"], "", "y", true},
		{envs["drive"], "=C:", "C:\\other", true},
		{envs["drive"], "C:", "", false},
		{envs["value with ="], "A", "=d", true},
		{nil, "PATH", "", false},
	}
	for _, tt := range tests {
		if got, ok := tt.env.Lookup(tt.name); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%q) in %q = %q, %v; want %q, %v", tt.name, tt.env, got, ok, tt.want, tt.ok)
		}
	}
}

// TestCase: names compare exactly except on Windows, where os/exec and the
// system compare them case-insensitively.
func TestCase(t *testing.T) {
	t.Parallel()
	e := envs["case"]
	want := map[string]string{"Path": "/a", "PATH": "/b", "path": "/c"}
	if runtime.GOOS == "windows" {
		want = map[string]string{"Path": "/c", "PATH": "/c", "path": "/c"}
	}
	for name, v := range want {
		if got := e.Get(name); got != v {
			t.Errorf("Get(%q) = %q, want %q", name, got, v)
		}
	}
	if !same(true, "Path", "PATH") || same(false, "Path", "PATH") || !same(false, "PATH", "PATH") {
		t.Error("same does not fold case only when told to")
	}
}

func TestWithout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env   Env
		names []string
		want  Env
	}{
		{nil, []string{"A"}, Env{}},
		{envs["duplicates"], []string{"A"}, Env{"B=x"}},
		{envs["duplicates"], nil, envs["duplicates"]},
		{envs["no equals"], []string{"A", "B"}, Env{""}}, // names without values go too
		{envs["no equals"], []string{"MISSING"}, envs["no equals"]},
		{envs["empty name"], []string{""}, Env{"A=1"}},
		{Env{"", "A=1"}, []string{""}, Env{"A=1"}},
		{envs["drive"], []string{"=C:"}, Env{"=D:=D:\\"}},
		{envs["plain"], []string{"PATH", "HOME", "MISSING"}, Env{}},
	}
	for _, tt := range tests {
		got := tt.env.Without(tt.names...)
		if got == nil {
			t.Errorf("Without(%q) of %q is nil: a command given it would inherit this process's environment", tt.names, tt.env)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Without(%q) of %q (-want +got):\n%s", tt.names, tt.env, diff)
		}
	}
}

func TestWithoutFunc(t *testing.T) {
	t.Parallel()
	e := Env{"GIT_DIR=/r", "A=1", "GIT_CONFIG_KEY_0=x", "GIT", "B=2"}
	var seen []string
	got := e.WithoutFunc(func(k string) bool {
		seen = append(seen, k)
		return strings.HasPrefix(k, "GIT_")
	})
	if diff := cmp.Diff(Env{"A=1", "GIT", "B=2"}, got); diff != "" {
		t.Errorf("WithoutFunc (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GIT_DIR", "A", "GIT_CONFIG_KEY_0", "GIT", "B"}, seen); diff != "" {
		t.Errorf("drop was asked about (-want +got):\n%s", diff)
	}
}

func TestWith(t *testing.T) {
	t.Parallel()
	base := make(Env, 0, 8) // room to spare: With must not write into it
	base = append(base, "A=1", "B=2", "A=3")
	got := base.With("A", "4")
	if diff := cmp.Diff(Env{"B=2", "A=4"}, got); diff != "" {
		t.Errorf("With (-want +got):\n%s", diff)
	}
	other := base.With("C", "5")
	if diff := cmp.Diff(Env{"A=1", "B=2", "A=3", "C=5"}, other); diff != "" {
		t.Errorf("With (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Env{"B=2", "A=4"}, got); diff != "" {
		t.Errorf("a second With changed the first's result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Env{"A=1", "B=2", "A=3"}, base); diff != "" {
		t.Errorf("With changed its receiver (-want +got):\n%s", diff)
	}
	if got := Env(nil).With("A", ""); !cmp.Equal(got, Env{"A="}) {
		t.Errorf("With on nil = %q", got)
	}
}

func TestAll(t *testing.T) {
	t.Parallel()
	type pair struct{ K, V string }
	var got []pair
	for k, v := range (Env{"A=1", "bare", "=x", "A=2", "B=b=c"}).All() {
		got = append(got, pair{k, v})
	}
	want := []pair{{"A", "1"}, {"", "x"}, {"A", "2"}, {"B", "b=c"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("All (-want +got):\n%s", diff)
	}
	if m := maps.Collect(envs["duplicates"].All()); !cmp.Equal(m, map[string]string{"A": "3", "B": "x"}) {
		t.Errorf("collected: %v, want the last value of each name", m)
	}
	for range envs["duplicates"].All() {
		break // the runtime panics if All yields again
	}
}

// TestLeaf: environ sits on the bottom floor and imports nothing of ours.
func TestLeaf(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			if path, _ := strconv.Unquote(imp.Path.Value); strings.Contains(path, ".") {
				t.Errorf("%s imports %q: environ imports the standard library only", f, path)
			}
		}
	}
}
