package loop

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
)

func kp(path, key string, line, col int) keyPos {
	return keyPos{Path: path, Key: key, Line: line, Col: col}
}

// keysOf returns the keys of src, scanned within MaxNesting.
func keysOf(src []byte) []keyPos {
	keys, _ := scanKeys(src, MaxNesting)
	return keys
}

var scanKeysCases = []struct {
	name string
	src  string
	want []keyPos
}{
	{"empty", "", nil},
	{"only comments", "# a = 1\n  # [t]\n", nil},
	{"plain keys", "a = 1\nb = \"x\"\n", []keyPos{kp("a", "a", 1, 1), kp("b", "b", 2, 1)}},
	{"dotted keys and their parents", "" +
		"fruit.apple.color = \"red\"\n" +
		"fruit . apple . taste.sweet = true\n" +
		"fruit.banana = 1\n",
		[]keyPos{
			kp("fruit", "fruit", 1, 1),
			kp("fruit.apple", "fruit.apple", 1, 7),
			kp("fruit.apple.color", "fruit.apple.color", 1, 13),
			kp("fruit.apple.taste", "fruit.apple.taste", 2, 17),
			kp("fruit.apple.taste.sweet", "fruit.apple.taste.sweet", 2, 23),
			kp("fruit.banana", "fruit.banana", 3, 7),
		}},
	{"quoted keys", "" +
		"\"a.b\" = 1\n" +
		"'x y' = 2\n" +
		"\"esc\\\"aped\" = 3\n" +
		"\"\" = 4\n" +
		"\"\\u00e9\\x41\\e\" = 5\n" +
		"site.\"google.com\".'lit\\n' = true\n",
		[]keyPos{
			kp(`"a.b"`, `"a.b"`, 1, 1),
			kp(`"x y"`, `"x y"`, 2, 1),
			kp(`"esc\"aped"`, `"esc\"aped"`, 3, 1),
			kp(`""`, `""`, 4, 1),
			kp(`"éA\u001b"`, `"éA\u001b"`, 5, 1),
			kp("site", "site", 6, 1),
			kp(`site."google.com"`, `site."google.com"`, 6, 6),
			kp(`site."google.com"."lit\\n"`, `site."google.com"."lit\\n"`, 6, 19),
		}},
	{"table headers", "" +
		"top = 1\n" +
		"[a.b]\n" +
		"c = 1\n" +
		"[ x . \"y z\" ]   # comment [not.a.table]\n" +
		"'w' = 2\n" +
		"[a]\n" +
		"d.e = 3\n",
		[]keyPos{
			kp("top", "top", 1, 1),
			kp("a.b", "a.b", 2, 2),
			kp("a.b.c", "a.b.c", 3, 1),
			kp(`x."y z"`, `x."y z"`, 4, 3),
			kp(`x."y z".w`, `x."y z".w`, 5, 1),
			kp("a", "a", 6, 2),
			kp("a.d", "a.d", 7, 1),
			kp("a.d.e", "a.d.e", 7, 3),
		}},
	{"arrays of tables", "" +
		"[[goal]]\n" +
		"[[goal.check]]\n" +
		"[[goal.check]]\n" +
		"[[goal]]\n" +
		"[[goal.check]]\n" +
		"[goal.extra]\n" +
		"k = 1\n" +
		"[[ goal.check ]]\n" +
		"type = \"test\"\n",
		[]keyPos{
			kp("goal[0]", "goal", 1, 3),
			kp("goal[0].check[0]", "goal.check", 2, 3),
			kp("goal[0].check[1]", "goal.check", 3, 3),
			kp("goal[1]", "goal", 4, 3),
			kp("goal[1].check[0]", "goal.check", 5, 3),
			kp("goal[1].extra", "goal.extra", 6, 2),
			kp("goal[1].extra.k", "goal.extra.k", 7, 1),
			kp("goal[1].check[1]", "goal.check", 8, 4),
			kp("goal[1].check[1].type", "goal.check.type", 9, 1),
		}},
	{"arrays of tables under an implicit table", "" +
		"[[a]]\n[[a.b.c]]\n[[a]]\n[[a.b.c]]\nx.y = 1\n[[a.b.c]]\n",
		[]keyPos{
			kp("a[0]", "a", 1, 3),
			kp("a[0].b.c[0]", "a.b.c", 2, 3),
			kp("a[1]", "a", 3, 3),
			kp("a[1].b.c[0]", "a.b.c", 4, 3),
			kp("a[1].b.c[0].x", "a.b.c.x", 5, 1),
			kp("a[1].b.c[0].x.y", "a.b.c.x.y", 5, 3),
			kp("a[1].b.c[1]", "a.b.c", 6, 3),
		}},
	{"sub-table of a table made by dotted keys", "[x]\ny.z = 1\n[x.y.w]\n",
		[]keyPos{
			kp("x", "x", 1, 2),
			kp("x.y", "x.y", 2, 1),
			kp("x.y.z", "x.y.z", 2, 3),
			kp("x.y.w", "x.y.w", 3, 2),
		}},
	{"inline tables", `t = { x = 1, y.z = 2, y.w = { q = "}" } }` + "\n",
		[]keyPos{
			kp("t", "t", 1, 1),
			kp("t.x", "t.x", 1, 7),
			kp("t.y", "t.y", 1, 14),
			kp("t.y.z", "t.y.z", 1, 16),
			kp("t.y.w", "t.y.w", 1, 25),
			kp("t.y.w.q", "t.y.w.q", 1, 31),
		}},
	{"inline table with newlines, comments and a trailing comma", "" +
		"[p]\nt = {\n  a = 1, # one, b = 9\n  b.c = \"x\",\n}\n",
		[]keyPos{
			kp("p", "p", 1, 2),
			kp("p.t", "p.t", 2, 1),
			kp("p.t.a", "p.t.a", 3, 3),
			kp("p.t.b", "p.t.b", 4, 3),
			kp("p.t.b.c", "p.t.b.c", 4, 5),
		}},
	{"inline tables in arrays", "" +
		"check = [ {type = \"test\"}, {type = \"file_exists\"} ]\n" +
		"mixed = [1, {a = 1}, \"x\", {a = 2},]\n" +
		"m = [[{a=1}], [{b=2}, {b=3}]]\n",
		[]keyPos{
			kp("check", "check", 1, 1),
			kp("check[0].type", "check.type", 1, 12),
			kp("check[1].type", "check.type", 1, 29),
			kp("mixed", "mixed", 2, 1),
			kp("mixed[1].a", "mixed.a", 2, 14),
			kp("mixed[3].a", "mixed.a", 2, 28),
			kp("m", "m", 3, 1),
			kp("m[0][0].a", "m.a", 3, 8),
			kp("m[1][0].b", "m.b", 3, 17),
			kp("m[1][1].b", "m.b", 3, 24),
		}},
	{"date-time with a space inside an array", "d = [1979-05-27 07:32:00, {x = 1}]\n",
		[]keyPos{kp("d", "d", 1, 1), kp("d[1].x", "d.x", 1, 28)}},
	{"multi-line array of strings", "" +
		"args = [\n  \"a,b\", # ] {x = 1}\n  '[c]',\n  \"\"\"{y = 2}\"\"\",\n]\nnext = 1\n",
		[]keyPos{kp("args", "args", 1, 1), kp("next", "next", 6, 1)}},
	{"strings that look like TOML", "" +
		"a = \"x # [y] {z} = \\\" ]\"\n" +
		"b = 'c:\\path # [ { = ] '\n" +
		"c = \"\"\"\n[not.a.table]\nd = \"not a key\" \\\n  e = 1 \\\"\"\"\n\"\"\"\"\n" +
		"f = '''\n[[nope]]\ng = 1'''''\n" +
		"h = \"\"\"\"\"\"\n" +
		"i = \"\\\\\" # \"\n" +
		"j = \"\\x41\\e\" # TOML 1.1 escapes\n" +
		"k = '''x = '''' # four quotes\n" +
		"l = \"\"\"y = \"\"\"\"\" # five quotes\n" +
		"m = \"\"\"\\\"\"\"\" # an escaped quote, then three\n",
		[]keyPos{
			kp("a", "a", 1, 1),
			kp("b", "b", 2, 1),
			kp("c", "c", 3, 1),
			kp("f", "f", 8, 1),
			kp("h", "h", 11, 1),
			kp("i", "i", 12, 1),
			kp("j", "j", 13, 1),
			kp("k", "k", 14, 1),
			kp("l", "l", 15, 1),
			kp("m", "m", 16, 1),
		}},
	{"CRLF line endings and comments", "# [x]\r\na = 1 # b = 2\r\n[t] # [u]\r\n  c = 'd' \r\n",
		[]keyPos{kp("a", "a", 2, 1), kp("t", "t", 3, 2), kp("t.c", "t.c", 4, 3)}},
	{"byte columns after multi-byte text", "a = { \"é\" = 1, b = 2 }\n",
		[]keyPos{kp("a", "a", 1, 1), kp(`a."é"`, `a."é"`, 1, 7), kp("a.b", "a.b", 1, 17)}},
	{"byte order mark", "\xef\xbb\xbfa = 1\n[t]\nb = 2",
		[]keyPos{kp("a", "a", 1, 1), kp("t", "t", 2, 2), kp("t.b", "t.b", 3, 1)}},
	{"empty keys (toml v1.6 mis-decodes this array, see crossCheck)", "[x]\n'' = [inf, {\"\" = ''}]\n",
		[]keyPos{kp("x", "x", 1, 2), kp(`x.""`, `x.""`, 2, 1), kp(`x.""[1].""`, `x."".""`, 2, 13)}},
	{"dotted keys in array elements", "[[a]]\nx.y = {z = [{w.v = 1}, {w.v = 2}]}\n",
		[]keyPos{
			kp("a[0]", "a", 1, 3),
			kp("a[0].x", "a.x", 2, 1),
			kp("a[0].x.y", "a.x.y", 2, 3),
			kp("a[0].x.y.z", "a.x.y.z", 2, 8),
			kp("a[0].x.y.z[0].w", "a.x.y.z.w", 2, 14),
			kp("a[0].x.y.z[0].w.v", "a.x.y.z.w.v", 2, 16),
			kp("a[0].x.y.z[1].w", "a.x.y.z.w", 2, 25),
			kp("a[0].x.y.z[1].w.v", "a.x.y.z.w.v", 2, 27),
		}},
}

func TestScanKeys(t *testing.T) {
	for _, tc := range scanKeysCases {
		t.Run(tc.name, func(t *testing.T) {
			got := keysOf([]byte(tc.src))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scanKeys() mismatch (-want +got):\n%s", diff)
			}
			crossCheck(t, []byte(tc.src), got)
		})
	}
}

// realisticConfig exercises every construct a loop config uses.
const realisticConfig = `# loop configuration
version = 1
name = "release-train"   # inline comment with [brackets] and = signs
description = """
Multi-line description with "quotes", a # hash,
and a [fake.header] that must not count.
key = "not a key" \
  still = "not a key"
"""

[providers.claude]
command = "claude"
args = [
  "--print",        # comment in an array
  "--output-format", "json",
]
env = { ANTHROPIC_LOG = "warn", "HTTP.PROXY" = 'http://proxy:8080' }
tiers = { cheap = "haiku", standard = "sonnet", strong = "opus" }

[providers."my.agent"]
command = 'C:\agents\run.exe'
timeout = "5m"
tiers.cheap = "small"
tiers.strong = "large"

[[node]]
name = "plan"
provider = "claude"
tier = "strong"
prompt = '''
You are a planner. Output ''quoted'' text.
#not a comment
'''

[[node]]
name = "build"
after = ["plan"]
prompt = "Build it: \"now\" \\ # not a comment"

[[node]]
name = "review"
after = [
  "plan",
  "build",  # trailing comma next
]
limits = { tokens = 200_000, wall = 1979-05-27 07:32:00 }

[[goal]]
id = "tests-pass"
description = "All tests must pass"

[[goal.check]]
type = "test"
command = ["go", "test", "./..."]

[[goal.check]]
type = "file_exists"
path = "dist/app"

[goal.meta]
owner = "ci"

[[goal]]
id = "lint"
check = [
  { type = "command", command = ["golangci-lint", "run"] },
  { type = "file_absent", path = "lint.log" },  # inline tables in an array
]

[stop]
max_iterations = 40
max_cost_usd = 12.5
on = ["goal_met", "budget"]
when.idle_minutes = 30

[metrics]
enabled = true
"export path" = "metrics.jsonl"
labels = { team = "infra", tier.name = "gold" }
histogram.buckets = [0.1, 0.5, 1.0, 5.0]

[[stage]]
name = "draft"
nodes = ["plan"]

[[stage]]
name = "ship"
nodes = [
  "build",
  "review",
]
matrix = [[{ os = "linux" }, { os = "darwin" }], [{ os = "windows" }]]
`

func TestScanKeysRealisticConfig(t *testing.T) {
	src := []byte(realisticConfig)
	got := keysOf(src)
	if !crossCheck(t, src, got) {
		t.Error("paths were not checked")
	}

	// What scanKeys adds to md.Keys(): the dotted parents, nothing else.
	md, err := toml.Decode(realisticConfig, new(map[string]any))
	if err != nil {
		t.Fatal(err)
	}
	wantExtra := []string{`providers."my.agent".tiers`, "stop.when", "metrics.labels.tier", "metrics.histogram"}
	if diff := cmp.Diff(wantExtra, extraKeys(got, md.Keys())); diff != "" {
		t.Errorf("keys beyond md.Keys() (-want +got):\n%s", diff)
	}

	at := map[string]keyPos{}
	for _, k := range got {
		at[k.Path] = k
	}
	for _, want := range []keyPos{
		kp("providers.claude.tiers.cheap", "providers.claude.tiers.cheap", 18, 11),
		kp(`providers."my.agent".tiers`, `providers."my.agent".tiers`, 23, 1),
		kp(`providers."my.agent".tiers.strong`, `providers."my.agent".tiers.strong`, 24, 7),
		kp("node[1].after", "node.after", 37, 1),
		kp("node[2].limits.wall", "node.limits.wall", 46, 30),
		kp("goal[0].check[1].path", "goal.check.path", 58, 1),
		kp("goal[0].meta", "goal.meta", 60, 2),
		kp("goal[1].check[1].path", "goal.check.path", 67, 27),
		kp("stop.when.idle_minutes", "stop.when.idle_minutes", 74, 6),
		kp(`metrics."export path"`, `metrics."export path"`, 78, 1),
		kp("metrics.labels.tier.name", "metrics.labels.tier.name", 79, 33),
		kp("stage[1].matrix[1][0].os", "stage.matrix.os", 92, 53),
	} {
		if diff := cmp.Diff(want, at[want.Path]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", want.Path, diff)
		}
	}
}

// extraKeys returns the Keys of got that are not in want, which must be a
// subsequence of got.
func extraKeys(got []keyPos, want []toml.Key) []string {
	var extra []string
	for _, k := range got {
		if len(want) > 0 && k.Key == want[0].String() {
			want = want[1:]
			continue
		}
		extra = append(extra, k.Key)
	}
	for _, k := range want {
		extra = append(extra, "missing "+k.String())
	}
	return extra
}

// TestScanKeysDeepNesting checks the nesting bound: the scan stops at the
// first value deeper than its maximum and says where that value starts,
// and absurd input ends.
func TestScanKeysDeepNesting(t *testing.T) {
	src := []byte("a = 1\nb = [[[[{x = \"]\"}]]]]\nc = 1\n")
	keys, deep := scanKeys(src, 4)
	if diff := cmp.Diff([]keyPos{kp("a", "a", 1, 1), kp("b", "b", 2, 1)}, keys); diff != "" {
		t.Errorf("scanKeys(4) mismatch (-want +got):\n%s", diff)
	}
	if deep == nil || deep.line != 2 || deep.col != 8 {
		t.Errorf("scanKeys(4) stopped at %+v, want 2:8 (the fourth [)", deep)
	}
	keys, deep = scanKeys(src, 6)
	want := []keyPos{kp("a", "a", 1, 1), kp("b", "b", 2, 1), kp("b[0][0][0][0].x", "b.x", 2, 10), kp("c", "c", 3, 1)}
	if diff := cmp.Diff(want, keys); diff != "" || deep != nil {
		t.Errorf("scanKeys(6) stopped at %+v; mismatch (-want +got):\n%s", deep, diff)
	}
	for _, junk := range []string{"a = " + strings.Repeat("[", 1<<20), strings.Repeat("a=[{", 1<<18)} {
		if _, deep := scanKeys([]byte(junk), MaxNesting); deep == nil {
			t.Errorf("scanKeys did not stop at a value too deep in %.20q...", junk)
		}
	}
}

// entryKind is what the source says a reported key is.
type entryKind int

const (
	leafKey      entryKind = iota // key of a key/value pair
	headerKey                     // [table] or [[array]] header
	dottedParent                  // a or a.b of a.b.c = v
)

// located is a scanKeys result tied back to the source.
type located struct {
	keyPos
	off  int // byte offset into the BOM-less text
	kind entryKind
	segs toml.Key
}

// crossCheck checks got against toml.Decode(src). md.Keys() lists every
// header and every key/value key (inside inline tables too, and once per
// element of an array of inline tables), but never implicit tables: not
// the parents of a header, and not the dotted parents (a, a.b of
// a.b.c = v) that scanKeys reports on purpose. So, with the dotted parents
// (recognized in the source by the '.' after them) removed, the Keys must
// be md.Keys() exactly, in order. Each dotted parent must be a prefix of
// the key reported right after it. Every position must point at the key's
// text and every indexed Path must exist in the decoded document, which
// crossCheck reports it could check (see walkable).
func crossCheck(t testing.TB, src []byte, got []keyPos) (pathsChecked bool) {
	t.Helper()
	var doc map[string]any
	md, err := toml.Decode(string(src), &doc)
	if err != nil {
		t.Fatalf("toml.Decode: %v", err)
	}
	body := withoutBOM(src)
	entries := locate(t, body, got)
	if !alignKeys(t, entries, md.Keys()) {
		return false
	}
	walk := walkable(md, doc)
	for _, e := range entries {
		checkText(t, body, e)
		if !walk {
			continue
		}
		if err := walkPath(doc, e.segs, e.Path); err != nil {
			t.Errorf("%s: path not in the decoded document: %v", e.Path, err)
		}
	}
	return walk
}

// walkable reports whether toml's decoded document can be trusted to hold
// the paths. Fuzzing found two ways toml v1.6 gets it wrong:
//   - around an empty key: its setType takes "" for the enclosing table,
//     so `a = [1, {"" = 1}]` decodes as [{"": 1}];
//   - it accepts some redefinitions TOML forbids, then loses data: with
//     `t = {d.x = 1, d = []}` or `a = [{x = 1}]` then `a.c = 1`, the
//     document has no d.x, no a.x.
//
// The second shows as a key of md.Keys() missing from the document.
func walkable(md toml.MetaData, doc map[string]any) bool {
	for _, k := range md.Keys() {
		if slices.Contains(k, "") || !holds(doc, k) {
			return false
		}
	}
	return true
}

// holds reports whether v has key k, in any element of its arrays.
func holds(v any, k toml.Key) bool {
	switch v := v.(type) {
	case map[string]any:
		next, ok := v[k[0]]
		return ok && (len(k) == 1 || holds(next, k[1:]))
	case []map[string]any:
		return slices.ContainsFunc(v, func(e map[string]any) bool { return holds(e, k) })
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return holds(e, k) })
	}
	return false
}

func withoutBOM(src []byte) []byte {
	for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
		if bytes.HasPrefix(src, []byte(bom)) {
			return src[len(bom):]
		}
	}
	return src
}

// locate checks that every position is inside the text, not on a line
// break, and strictly after the previous one (document order).
func locate(t testing.TB, body []byte, got []keyPos) []located {
	t.Helper()
	starts := []int{0}
	for i, c := range body {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	var out []located
	prev := -1
	for _, k := range got {
		if k.Line < 1 || k.Line > len(starts) || k.Col < 1 {
			t.Fatalf("%+v: position outside the text", k)
		}
		off := starts[k.Line-1] + k.Col - 1
		if off >= len(body) || body[off] == '\n' || off <= prev {
			t.Fatalf("%+v: offset %d outside its line or out of order", k, off)
		}
		prev = off
		out = append(out, located{keyPos: k, off: off, kind: kindAt(body, off)})
	}
	return out
}

func kindAt(body []byte, off int) entryKind {
	i := off - 1
	for i >= 0 && (body[i] == ' ' || body[i] == '\t') {
		i--
	}
	if i >= 0 && body[i] == '[' {
		return headerKey
	}
	j := rawKeyEnd(body, off)
	for j < len(body) && (body[j] == ' ' || body[j] == '\t') {
		j++
	}
	if j < len(body) && body[j] == '.' {
		return dottedParent
	}
	return leafKey
}

// rawKeyEnd returns the end of the key segment (bare or quoted) at off.
func rawKeyEnd(body []byte, off int) int {
	switch body[off] {
	case '"':
		for i := off + 1; i < len(body); i++ {
			switch body[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(body)
	case '\'':
		if i := bytes.IndexByte(body[off+1:], '\''); i >= 0 {
			return off + i + 2
		}
		return len(body)
	}
	i := off
	for i < len(body) && isBareKeyByte(body[i]) {
		i++
	}
	return i
}

// alignKeys matches entries with md.Keys() and fills in their segments.
func alignKeys(t testing.TB, entries []located, want []toml.Key) bool {
	t.Helper()
	j := 0
	for i, e := range entries {
		if e.kind == dottedParent {
			continue
		}
		if j >= len(want) {
			t.Errorf("entry %d %+v: toml has no more keys", i, e.keyPos)
			return false
		}
		if e.Key != want[j].String() {
			t.Errorf("entry %d %+v: toml's key %d is %s", i, e.keyPos, j, want[j])
			return false
		}
		entries[i].segs = want[j]
		j++
	}
	if j != len(want) {
		t.Errorf("scanKeys missed toml keys %v", want[j:])
		return false
	}
	for i := len(entries) - 1; i >= 0; i-- {
		if entries[i].kind != dottedParent {
			continue
		}
		if i+1 == len(entries) || !setPrefix(&entries[i], entries[i+1]) {
			t.Errorf("dotted parent %+v is not followed by a child", entries[i].keyPos)
			return false
		}
	}
	return true
}

func setPrefix(parent *located, child located) bool {
	for n := 1; n < len(child.segs); n++ {
		if child.segs[:n].String() == parent.Key && strings.HasPrefix(child.Path, parent.Path+".") {
			parent.segs = child.segs[:n]
			return true
		}
	}
	return false
}

// checkText checks that the source at e spells the key's last segment, or
// its first for a header.
func checkText(t testing.TB, body []byte, e located) {
	t.Helper()
	name := e.segs[len(e.segs)-1]
	if e.kind == headerKey {
		name = e.segs[0]
	}
	raw := string(body[e.off:rawKeyEnd(body, e.off)])
	switch {
	case raw == name:
	case raw[0] == '\'' && raw == "'"+name+"'":
	case raw[0] == '"' && (strings.Contains(raw, `\`) || raw == `"`+name+`"`):
	default:
		t.Errorf("%+v: source has %q, want the key %q", e.keyPos, raw, name)
	}
}

// walkPath finds an indexed path such as a[1].b[0][2].c in doc.
func walkPath(doc any, segs toml.Key, path string) error {
	rest := path
	for i, seg := range segs {
		want := toml.Key{seg}.String()
		if i > 0 {
			want = "." + want
		}
		m, ok := doc.(map[string]any)
		if !strings.HasPrefix(rest, want) || !ok {
			return fmt.Errorf("segment %q: not a table, or path spells no %q", rest, want)
		}
		rest = rest[len(want):]
		if doc, ok = m[seg]; !ok {
			return fmt.Errorf("no key %q", seg)
		}
		for strings.HasPrefix(rest, "[") {
			end := strings.IndexByte(rest, ']')
			n, err := strconv.Atoi(rest[1:max(end, 1)])
			if err != nil {
				return err
			}
			if doc, ok = element(doc, n); !ok {
				return fmt.Errorf("no element %d", n)
			}
			rest = rest[end+1:]
		}
	}
	if rest != "" {
		return fmt.Errorf("path has extra %q", rest)
	}
	return nil
}

func element(v any, n int) (any, bool) {
	switch a := v.(type) {
	case []map[string]any:
		if n < len(a) {
			return a[n], true
		}
	case []any:
		if n < len(a) {
			return a[n], true
		}
	}
	return nil, false
}

// TestScanKeysGenerated cross-checks scanKeys with toml on random documents
// built from the constructs a scanner can trip over.
func TestScanKeysGenerated(t *testing.T) {
	const docs = 2000
	invalid := 0
	for seed := range uint64(docs) {
		doc := []byte(generateDoc(seed))
		if _, err := toml.Decode(string(doc), new(map[string]any)); err != nil {
			invalid++
			continue
		}
		if !crossCheck(t, doc, keysOf(doc)) {
			t.Error("paths were not checked")
		}
		if t.Failed() {
			t.Fatalf("document %d:\n%s", seed, doc)
		}
	}
	if invalid > docs/10 {
		t.Errorf("%d of %d generated documents do not decode", invalid, docs)
	}
}

// docGen writes random TOML documents, nearly all of them valid.
type docGen struct {
	r      *rand.Rand
	b      strings.Builder
	n      int  // makes key names unique
	arrays bool // [[a]] has been written
}

func generateDoc(seed uint64) string {
	g := &docGen{r: rand.New(rand.NewPCG(seed, 7))}
	g.pairs(3)
	for range g.r.IntN(7) {
		g.header()
		g.pairs(4)
	}
	if g.r.IntN(4) == 0 {
		return strings.ReplaceAll(g.b.String(), "\n", "\r\n")
	}
	return g.b.String()
}

func (g *docGen) pick(options ...string) string { return options[g.r.IntN(len(options))] }

func (g *docGen) pairs(most int) {
	for range g.r.IntN(most + 1) {
		g.b.WriteString(g.pick("", "  ", "\t"))
		g.key()
		g.b.WriteString(g.pick("=", " = ", "\t=  "))
		g.value(0)
		g.b.WriteString(g.pick("\n", " # c [x] = {\n", "\n\n# k = 1\n"))
	}
}

func (g *docGen) header() {
	g.n++
	switch {
	case g.r.IntN(3) == 0:
		fmt.Fprintf(&g.b, g.pick("[t%d]", "[ x.t%d . \"q.r\" ]", "[\"e.f\".'t %d']"), g.n)
	case !g.arrays:
		g.arrays = true
		g.b.WriteString("[[a]]")
	default:
		g.b.WriteString(g.pick("[[a]]", "[[a.b]]", "[[ a . b ]]", "[[a.'c d']]",
			"[[\"e.f\"]]", "[[a.b.g]]", fmt.Sprintf("[a.s%d]", g.n), fmt.Sprintf("[a.b.s%d]", g.n)))
	}
	g.b.WriteString(g.pick("\n", "  # [not.this]\n"))
}

func (g *docGen) key() {
	if g.r.IntN(3) == 0 {
		g.b.WriteString(g.pick("shared", "'sh ared'", `"sh.d"`) + g.pick(".", " . "))
	}
	g.n++
	format := g.pick("k%d", `"q.%d\t\""`, "'l %d'", `"\x41\u00e9%d"`, "%d")
	fmt.Fprintf(&g.b, format, g.n)
	if g.r.IntN(5) == 0 {
		g.b.WriteString(".x")
	}
}

var (
	genScalars = []string{"1", "-0.5e3", "true", "1979-05-27 07:32:00", "1979-05-27T07:32:00Z",
		"0x1F", "inf", "07:32:00", "1_000"}
	genStrings = []string{`"a # [b] {c} = \" ]"`, `'c:\p # [ { = ] '`, `""`, `''`, `"\x41\e"`,
		"\"\"\"\n[x]\nk = 1 \\\n  \\\"\"\" \"\"\"\"", "'''\n[[y]]\n{z = 1}'''''", `"""""ab"""""`}
)

func (g *docGen) value(depth int) {
	kinds := 4
	if depth >= 3 {
		kinds = 2
	}
	switch g.r.IntN(kinds) {
	case 0:
		g.b.WriteString(g.pick(genScalars...))
	case 1:
		g.b.WriteString(g.pick(genStrings...))
	case 2:
		g.array(depth)
	default:
		g.inlineTable(depth)
	}
}

func (g *docGen) array(depth int) {
	g.b.WriteString("[")
	n := g.r.IntN(4)
	for i := range n {
		if i > 0 {
			g.b.WriteString(",")
		}
		g.b.WriteString(g.pick("", " ", "\n  ", " # ] c\n"))
		g.value(depth + 1)
	}
	if n > 0 {
		g.b.WriteString(g.pick("", ",", " ", "\n", ", # ]\n"))
	}
	g.b.WriteString("]")
}

func (g *docGen) inlineTable(depth int) {
	g.b.WriteString("{")
	n := g.r.IntN(4)
	for i := range n {
		if i > 0 {
			g.b.WriteString(",")
		}
		g.b.WriteString(g.pick(" ", "", "\n  ", " # } c\n  "))
		g.key()
		g.b.WriteString(g.pick("=", " = "))
		g.value(depth + 1)
	}
	if n > 0 {
		g.b.WriteString(g.pick("", ",", " ,\n"))
	}
	g.b.WriteString(g.pick(" }", "}", "\n}"))
}

func FuzzScanKeys(f *testing.F) {
	f.Add([]byte(realisticConfig))
	for _, tc := range scanKeysCases {
		f.Add([]byte(tc.src))
	}
	for seed := range uint64(20) {
		f.Add([]byte(generateDoc(seed)))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		// Any bytes: no panic, termination, positions inside the text.
		got, deep := scanKeys(src, MaxNesting)
		locate(t, withoutBOM(src), got)
		if _, err := toml.Decode(string(src), new(map[string]any)); err != nil || deep != nil {
			return
		}
		crossCheck(t, src, got)
	})
}

func BenchmarkScanKeys(b *testing.B) {
	src := []byte(realisticConfig)
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		scanKeys(src, MaxNesting)
	}
}
