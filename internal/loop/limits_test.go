package loop

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

// nested returns n keys, each an inline table holding the next:
// k = { k = { ... k = 1 } }.
func nested(n int) string {
	return strings.Repeat("k = { ", n-1) + "k = 1" + strings.Repeat(" }", n-1)
}

func TestLimitsRefuseDeepNesting(t *testing.T) {
	t.Parallel()
	const msg = "this value is nested more than 32 levels deep (each table header or dotted key segment, inline table and array counts one); a loop config never needs that many"
	dotted := func(n int) string { return strings.TrimPrefix(strings.Repeat(".k", n), ".") }
	tests := []limitsCase{
		{"inline tables 32 deep", nested(32) + "\n", ""},
		{"inline tables 33 deep", nested(33) + "\n", "f.toml:1:193: " + msg},
		{"arrays 32 deep", "a = " + strings.Repeat("[", 31) + "1" + strings.Repeat("]", 31) + "\n", ""},
		{"arrays 33 deep", "a = " + strings.Repeat("[", 32) + "1" + strings.Repeat("]", 32) + "\n", "f.toml:1:36: " + msg},
		{"arrays of inline tables", "a = " + strings.Repeat("[{b = ", 17) + "1" + strings.Repeat("}]", 17) + "\n", "f.toml:1:97: " + msg},
		{"arrays across lines", "a = [\n" + strings.Repeat("[\n", 32) + "]\n", "f.toml:32:1: " + msg},
		{"dotted key of 32 segments", dotted(32) + " = 1\n", ""},
		{"dotted key of 33 segments", "x = 1\n" + dotted(33) + " = 1\n", "f.toml:2:1: " + msg},
		{"dotted key in an inline table", "a = { " + dotted(32) + " = 1 }\n", "f.toml:1:7: " + msg},
		{"header of 33 segments", "[" + dotted(33) + "]\n", "f.toml:1:1: " + msg},
		{"array header of 33 segments", "[[" + dotted(33) + "]]\n", "f.toml:1:1: " + msg},
		{"header and key together", "[" + dotted(30) + "]\n" + "a.b = 1\nc.d.e = 1\n", "f.toml:3:1: " + msg},
		{"a later header starts afresh", "[" + dotted(30) + "]\na.b = 1\n[x]\n" + dotted(31) + " = 1\n", ""},
		{"brackets in strings and comments", strings.Join([]string{
			`a = "[[[[{{{{ \" [[[[ {{{{"`, `b = '[[[[{{{{'`, `c = """[[[[` + "\n" + `\"""{{{{ "" ""\"[["""`,
			`d = '''[[[[` + "\n" + `''{{{{ '[['''`, `e = 1 # [[[[{{{{`, "# " + strings.Repeat("[{", 100),
			`"` + dotted(40) + `" = 1`, `'` + dotted(40) + `' = 1`, `f = [ "]]]]", ']]]]', """]]]]""", '''}}}}''' ]`,
		}, "\n") + "\n", ""},
		{"a string closing with extra quotes", `a = """x""""` + "\n" + nested(33) + "\n", "f.toml:2:193: " + msg},
		{"a malformed value hides nothing", "a = 1 " + strings.Repeat("[", 40) + "\n", ""},
		{"an unterminated string ends with its line", "a = \"[[[[\n" + nested(33) + "\n", "f.toml:2:193: " + msg},
		{"a byte-order mark is not counted", "\xef\xbb\xbf" + nested(33) + "\n", "f.toml:1:193: " + msg},
	}
	checkLimitsCases(t, tests)
}

// limitsCase is a config and what checkLimits reports of it: "" when it is
// within the limits.
type limitsCase struct{ name, src, want string }

func checkLimitsCases(t *testing.T, cases []limitsCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ""
			if _, d := checkLimits("f.toml", []byte(tt.src)); d != nil {
				got = d.String()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("checkLimits (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimitsRefuseLongKeys(t *testing.T) {
	t.Parallel()
	const msg = "this key's path, with its tables', is more than 1024 bytes long; a loop config never needs one that long"
	k := func(n int) string { return strings.Repeat("k", n) }
	checkLimitsCases(t, []limitsCase{
		{"a key path of 1024 bytes", "[t]\n" + k(1022) + " = 1\n", ""},
		{"a key path of 1025 bytes", "[t]\n" + k(1023) + " = 1\n", "f.toml:2:1: " + msg},
		{"a dotted key", "a = 1\nx." + k(1023) + ".y = 1\n", "f.toml:2:1: " + msg},
		{"a header", "a = 1\n[" + k(1025) + "]\n", "f.toml:2:1: " + msg},
		{"a quoted header segment", `[t."` + k(1025) + `"]` + "\n", "f.toml:1:1: " + msg},
		{"a key in an array's inline table", "a = [{ " + k(1025) + " = 1 }]\n", "f.toml:1:8: " + msg},
	})
}

func TestLimitsRefuseALargeConfig(t *testing.T) {
	t.Parallel()
	filler := "# " + strings.Repeat("x", 97) + "\n"
	big := []byte(strings.Repeat(filler, MaxConfigSize/len(filler)+1)[:MaxConfigSize])
	if _, d := checkLimits("f.toml", big); d != nil {
		t.Errorf("a config of exactly MaxConfigSize bytes: %s", d)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "loop.toml")
	if err := os.WriteFile(path, append(big, "\n# and more\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var cerr *ConfigError
	if !errors.As(err, &cerr) {
		t.Fatalf("Load of a config over the limit: %v, want a *ConfigError", err)
	}
	want := path + ":1:1: the config is 262145 bytes; a loop config may be at most 262144 bytes (256 KiB)"
	if diff := cmp.Diff(want, cerr.Error()); diff != "" {
		t.Errorf("Load (-want +got):\n%s", diff)
	}
}

// TestLimitsKeepRealConfigs checks that every config shipped with the
// repository, and the TOML test documents of the key scanner, are within
// the limits.
func TestLimitsKeepRealConfigs(t *testing.T) {
	t.Parallel()
	srcs := map[string]string{"realistic": realisticConfig}
	for _, f := range exampleConfigs(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs[f] = string(b)
	}
	for _, tc := range scanKeysCases {
		srcs["scanKeys: "+tc.name] = tc.src
	}
	for name, src := range srcs {
		if _, d := checkLimits("f.toml", []byte(src)); d != nil {
			t.Errorf("%s: %s", name, d)
		}
	}
}

// FuzzCheckLimits feeds arbitrary text to the nesting scan with a small
// maximum: it must end, report a place inside the text, and never accept
// a document whose decoded keys are deeper than the maximum.
func FuzzCheckLimits(f *testing.F) {
	f.Add([]byte(realisticConfig))
	for _, tc := range scanKeysCases {
		f.Add([]byte(tc.src))
	}
	f.Add([]byte("a = { b = { c = [ [ 1 ] ] } }\n[x.y.z]\np.q = 1\n"))
	f.Add([]byte("s = \"\"\"[[\"\"\"\"\nt = '''{{'''\n\"a.b.c\" = 1\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		const max = 3
		if _, deep := scanKeys(src, max); deep != nil {
			if lines := strings.Count(string(src), "\n") + 1; deep.line < 1 || deep.line > lines || deep.col < 1 {
				t.Fatalf("reported %d:%d, outside the text (%d lines)", deep.line, deep.col, lines)
			}
			return
		}
		md, err := toml.Decode(string(src), new(map[string]any))
		if err != nil {
			return
		}
		for _, k := range md.Keys() {
			if len(k) > max {
				t.Fatalf("accepted a document with key %q, %d levels deep", k, len(k))
			}
		}
	})
}
