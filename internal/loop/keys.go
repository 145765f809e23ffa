package loop

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyIndex records where each key of a config file was written.
type keyIndex struct {
	all    []keyPos
	byPath map[string]keyPos
}

func newKeyIndex(all []keyPos) keyIndex {
	by := make(map[string]keyPos, len(all))
	for _, kp := range all {
		if _, dup := by[kp.Path]; !dup {
			by[kp.Path] = kp
		}
	}
	return keyIndex{all: all, byPath: by}
}

// has reports whether the key at the indexed path was written.
func (c *Config) has(path string) bool {
	_, ok := c.keys.byPath[path]
	return ok
}

// pos returns the position of the first of paths that was written; when
// none was, of the nearest written parent of the first path; with none
// written at all, the file alone.
func (c *Config) pos(paths ...string) Position {
	if len(paths) > 0 {
		paths = slices.Clip(paths) // appending never writes to the caller's array
		for p := parentPath(paths[0]); p != ""; p = parentPath(p) {
			paths = append(paths, p)
		}
	}
	for _, p := range paths {
		if kp, ok := c.keys.byPath[p]; ok {
			return Position{File: c.File, Line: kp.Line, Col: kp.Col}
		}
	}
	return Position{File: c.File}
}

// parentPath drops the last segment or index of an indexed path.
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndexByte(p, '['); i > 0 {
			return p[:i]
		}
	}
	if i := strings.LastIndexByte(p, '.'); i > 0 {
		return p[:i]
	}
	return ""
}

// unknownKeys reports every key the config types do not define, once per
// place written, and only the outermost unknown key of an unknown table.
func unknownKeys(c *Config, md toml.MetaData, s *sink) {
	undecoded := md.Undecoded()
	unknown := make(map[string]bool, len(undecoded))
	for _, k := range undecoded {
		unknown[k.String()] = true
	}
	seen := map[string]int{}
	written := c.keys.byKey()
	sg := newSuggester()
	for _, k := range undecoded {
		if insideUnknown(k, unknown) || s.full(Error) {
			continue
		}
		ks := k.String()
		var kp keyPos
		if places := written[ks]; seen[ks] < len(places) {
			kp = places[seen[ks]]
		}
		seen[ks]++
		s.add(Diagnostic{Pos: Position{File: c.File, Line: kp.Line, Col: kp.Col}, Message: c.unknownMessage(k, kp.Path, md, &sg)})
	}
}

// insideUnknown reports whether a parent table of k is itself unknown.
func insideUnknown(k toml.Key, unknown map[string]bool) bool {
	for n := len(k) - 1; n > 0; n-- {
		if unknown[k[:n].String()] {
			return true
		}
	}
	return false
}

// byKey returns where each key (index-free) was written, in order.
func (ix keyIndex) byKey() map[string][]keyPos {
	by := map[string][]keyPos{}
	for _, kp := range ix.all {
		by[kp.Key] = append(by[kp.Key], kp)
	}
	return by
}

var checkPathRE = regexp.MustCompile(`^goal\[(\d+)\]\.check\[(\d+)\]\.`)

// unknownMessage says which key or table is unknown, where, and what was
// probably meant.
func (c *Config) unknownMessage(k toml.Key, path string, md toml.MetaData, sg *suggester) string {
	name, parent := k[len(k)-1], k[:len(k)-1]
	what := fmt.Sprintf("unknown key %q", name)
	if t := md.Type(k...); t == "Hash" || t == "ArrayHash" {
		what = "unknown table " + tableName(k)
	}
	if len(parent) > 0 {
		what += " in " + tableName(parent)
	}
	known := knownKeys(parent)
	if s := sg.closest(name, known); s != "" {
		return fmt.Sprintf("%s; did you mean %q?", what, s)
	}
	if m := checkPathRE.FindStringSubmatch(path); m != nil {
		gi, _ := strconv.Atoi(m[1])
		ci, _ := strconv.Atoi(m[2])
		if gi < len(c.Goals) && ci < len(c.Goals[gi].Checks) {
			if typ := c.Goals[gi].Checks[ci].Type; keysFor(typ) != nil {
				return fmt.Sprintf("%s; a %s check takes %s", what, typ, strings.Join(keysFor(typ), ", "))
			}
		}
	}
	return what + "; known keys: " + strings.Join(known, ", ")
}

// tableName renders a table key as the user wrote its header.
func tableName(k toml.Key) string {
	if t := typeAt(k); t != nil && t.Kind() == reflect.Slice {
		return "[[" + k.String() + "]]"
	}
	return "[" + k.String() + "]"
}

// typeAt follows k from the Config type, segment by segment: a struct
// field by its toml tag, or a map's element. It returns nil when a segment
// is not known.
func typeAt(k toml.Key) reflect.Type {
	t := reflect.TypeFor[Config]()
	for _, seg := range k {
		t = fieldType(t, seg)
	}
	return t
}

func fieldType(t reflect.Type, seg string) reflect.Type {
	t = elem(t)
	switch {
	case t == nil:
		return nil
	case t.Kind() == reflect.Map:
		return t.Elem()
	case t.Kind() != reflect.Struct:
		return nil
	}
	for i := range t.NumField() {
		if f := t.Field(i); tomlName(f) == seg {
			return f.Type
		}
	}
	return nil
}

// elem is what slices and pointers of t hold.
func elem(t reflect.Type) reflect.Type {
	for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer) {
		t = t.Elem()
	}
	return t
}

func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// knownKeys lists the keys a table accepts.
func knownKeys(table toml.Key) []string {
	t := elem(typeAt(table))
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var keys []string
	for i := range t.NumField() {
		if n := tomlName(t.Field(i)); n != "" {
			keys = append(keys, n)
		}
	}
	return keys
}

// suggester finds likely typos. Its budget bounds the work of one
// config: each comparison spends the cells of its edit-distance table, and
// once the budget is spent no more suggestions are made, so that a config
// with thousands of unknown names still loads in linear time.
type suggester struct{ budget int }

// suggestBudget is enough for some 10,000 comparisons of 20-byte names,
// far more than a config written by hand needs.
const suggestBudget = 1 << 22

func newSuggester() suggester { return suggester{budget: suggestBudget} }

// closest returns the known name nearest to name when it is near enough to
// be a likely typo.
func (s *suggester) closest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if abs(len(name)-len(k)) >= bestD { // the distance is at least the length difference
			continue
		}
		cost := (len(name) + 1) * (len(k) + 1)
		if cost > s.budget {
			return best
		}
		s.budget -= cost
		if d := editDistance(name, k); d < bestD && d <= max(len(name)/2, 1) {
			best, bestD = k, d
		}
	}
	return best
}

func abs(n int) int { return max(n, -n) }

// editDistance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of neighbours count one.
// It keeps three rows of the table, not the whole of it.
func editDistance(a, b string) int {
	rows := make([]int, 3*(len(b)+1))
	prev2, prev, cur := rows[:len(b)+1], rows[len(b)+1:2*(len(b)+1)], rows[2*(len(b)+1):]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
